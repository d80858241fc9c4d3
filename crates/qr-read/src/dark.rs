//! Which pixels of an image are dark (nearer the foreground than the background): a bit each,
//! rows of whole bytes, most significant bit first, as a 1-bit PNG packs them. A 4096 px
//! square is 2 MiB this way, not the 16 MiB of a byte per pixel, and writing those 16 MiB was
//! most of what inspecting a large image cost.

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dark {
    width: usize,
    height: usize,
    stride: usize,
    /// Bits past `width` in a row are always 0.
    bits: Vec<u8>,
}

impl Dark {
    /// All light.
    pub(super) fn new(width: usize, height: usize) -> Dark {
        let stride = width.div_ceil(8);
        Dark {
            width,
            height,
            stride,
            bits: vec![0; stride * height],
        }
    }

    pub(super) fn width(&self) -> usize {
        self.width
    }

    pub(super) fn height(&self) -> usize {
        self.height
    }

    /// Outside the image is light.
    pub(super) fn get(&self, x: usize, y: usize) -> bool {
        x < self.width
            && y < self.height
            && self.bits[y * self.stride + x / 8] & (0x80 >> (x % 8)) != 0
    }

    pub(super) fn set(&mut self, x: usize, y: usize, dark: bool) {
        if x < self.width && y < self.height {
            let (byte, bit) = (&mut self.bits[y * self.stride + x / 8], 0x80 >> (x % 8));
            if dark {
                *byte |= bit;
            } else {
                *byte &= !bit;
            }
        }
    }

    /// Row `y`'s bytes, to be written whole: the caller keeps the bits past the width 0.
    pub(super) fn row_mut(&mut self, y: usize) -> &mut [u8] {
        &mut self.bits[y * self.stride..(y + 1) * self.stride]
    }

    /// The first and last dark pixel of row `y`.
    pub(super) fn row_span(&self, y: usize) -> Option<(usize, usize)> {
        let row = self.bits.get(y * self.stride..(y + 1) * self.stride)?;
        let first = row.iter().position(|&b| b != 0)?;
        let last = row.iter().rposition(|&b| b != 0).unwrap_or(first);
        Some((
            first * 8 + row[first].leading_zeros() as usize,
            last * 8 + 7 - row[last].trailing_zeros() as usize,
        ))
    }

    /// How many pixels from (x, y) rightwards are dark in a row.
    pub(super) fn run_from(&self, x: usize, y: usize) -> usize {
        (x..self.width).take_while(|&x| self.get(x, y)).count()
    }

    /// From a byte per pixel, row-major (tests).
    #[cfg(test)]
    pub(super) fn from_bools(dark: &[bool], width: usize) -> Dark {
        let height = dark.len().checked_div(width).unwrap_or(0);
        let mut d = Dark::new(width, height);
        for (i, &m) in dark.iter().enumerate() {
            d.set(i % width, i / width, m);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_read_back_and_spans_find_the_ends() {
        let w = 13;
        let mut bools = vec![false; w * 3];
        for x in [2, 3, 4, 9] {
            bools[w + x] = true;
        }
        bools[2 * w + 12] = true;
        let d = Dark::from_bools(&bools, w);
        for (i, &m) in bools.iter().enumerate() {
            assert_eq!(d.get(i % w, i / w), m, "pixel {i}");
        }
        assert!(!d.get(13, 1) && !d.get(0, 3), "outside is light");
        assert_eq!(d.row_span(0), None);
        assert_eq!(d.row_span(1), Some((2, 9)));
        assert_eq!(d.row_span(2), Some((12, 12)));
        assert_eq!(d.run_from(2, 1), 3);
        assert_eq!(d.run_from(12, 2), 1);
    }
}
