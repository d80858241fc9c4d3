#!/usr/bin/env python3
"""Loopback capture server for client profiles.

Records each request head exactly as received on the wire (raw bytes, header
order and spelling kept) and answers 200:
  /qr...        -> a 1x1 PNG (image/png)
  /page.html    -> a small HTML page with <img src="/qr?url=https://example.com">
  anything else -> application/json "[]"
If the request carries "Expect: 100-continue", the server first answers
"HTTP/1.1 100 Continue" (as most servers do) and then reads the body.

Usage: python3 capture.py PORT LOGFILE
Each request is appended to LOGFILE as one JSON line:
  {"conn": N, "seq": M, "head": "<raw head text>", "body_len": L,
   "saw_body_before_100": bool}
"""
import base64
import json
import socket
import sys
import threading

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PAGE = b'<!doctype html><html><body><img src="/qr?url=https%3A%2F%2Fexample.com"></body></html>'

lock = threading.Lock()
conn_counter = [0]


def read_until(sock, buf, marker):
    while marker not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return buf, False
        buf += chunk
    return buf, True


def handle(sock, log_path, conn_id):
    buf = b""
    seq = 0
    try:
        while True:
            buf, ok = read_until(sock, buf, b"\r\n\r\n")
            if not ok:
                return
            head, buf = buf.split(b"\r\n\r\n", 1)
            text = head.decode("latin-1")
            lines = text.split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            hdrs = [(l.split(":", 1)[0].lower(), l.split(":", 1)[1].strip()) for l in lines[1:]]
            h = dict(hdrs)
            saw_early = len(buf) > 0
            if h.get("expect", "").lower() == "100-continue":
                sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body_len = 0
            if "content-length" in h:
                n = int(h["content-length"])
                while len(buf) < n:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                body_len = n
                buf = buf[n:]
            elif h.get("transfer-encoding", "").lower() == "chunked":
                # read chunks until the 0-size chunk
                while True:
                    buf, ok = read_until(sock, buf, b"\r\n")
                    size_line, buf = buf.split(b"\r\n", 1)
                    size = int(size_line.split(b";")[0], 16)
                    while len(buf) < size + 2:
                        buf += sock.recv(65536)
                    buf = buf[size + 2:]
                    body_len += size
                    if size == 0:
                        break
            seq += 1
            with lock, open(log_path, "a") as f:
                f.write(json.dumps({"conn": conn_id, "seq": seq, "head": text,
                                    "body_len": body_len,
                                    "saw_body_before_100": saw_early}) + "\n")
            path = target.split("?", 1)[0]
            if path.endswith("/qr") or path.startswith("/qr"):
                ctype, payload = "image/png", PNG
            elif path == "/page.html":
                ctype, payload = "text/html; charset=utf-8", PAGE
            else:
                ctype, payload = "application/json", b"[]"
            resp = (f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\n"
                    f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
            sock.sendall(resp)
    except (ConnectionError, OSError, ValueError):
        return
    finally:
        sock.close()


def main():
    port, log_path = int(sys.argv[1]), sys.argv[2]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(64)
    while True:
        s, _ = srv.accept()
        with lock:
            conn_counter[0] += 1
            cid = conn_counter[0]
        threading.Thread(target=handle, args=(s, log_path, cid), daemon=True).start()


if __name__ == "__main__":
    main()
