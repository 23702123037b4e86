#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send one raw HTTP request, exactly as given, and report what came back.

usage: rawhttp.py HOST PORT < request-bytes

Sends stdin's bytes with a single send() (so a request up to one MSS is one TCP
segment), reads until the peer closes, and prints one line:

    STATUS CLOSE CONNECTION_HEADER

STATUS is the status code of the first response line (000 when there was none);
CLOSE is "closed" (FIN after the response), "reset" (RST) or "open" (nothing
more within the timeout); CONNECTION_HEADER is "conn-close" when the response
carries "Connection: close", "-" otherwise. Exits 0 when it could connect.
"""

import re
import socket
import sys

TIMEOUT_S = 5.0


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    host, port = sys.argv[1], int(sys.argv[2])
    request = sys.stdin.buffer.read()
    try:
        sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
    except OSError as e:
        print(f"000 connect-failed {e.strerror or e}")
        return 1
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(TIMEOUT_S)
    reply = b""
    state = "open"
    try:
        sock.sendall(request)
        while len(reply) < 1 << 20:
            chunk = sock.recv(65536)
            if not chunk:
                state = "closed"
                break
            reply += chunk
    except ConnectionResetError:
        state = "reset"
    except (socket.timeout, TimeoutError):
        state = "open"
    except BrokenPipeError:
        state = "reset"
    finally:
        sock.close()
    head = reply.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ", head)
    status = m.group(1) if m else "000"
    conn_close = re.search(r"(?im)^connection:[ \t]*close[ \t\r]*$", head) is not None
    print(f"{status} {state} {'conn-close' if conn_close else '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
