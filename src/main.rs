// mimalloc, not glibc's malloc: under load the reference (`serve`) spent much of its time in
// malloc's arena locks between the runtime's threads; with mimalloc's per-thread heaps wrk
// measured it at 34k to 49k requests/s where it gave 28k (docs/src/figures.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    linkcert::cli::main()
}
