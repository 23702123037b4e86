#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo-sampler.py: what scripts/demo's sale report plots over time.

usage: demo-sampler.py --telemetry SOCKET --redis SOCKET --event ID --out FILE [--every 0.5]

Every --every seconds until SIGTERM or SIGINT, one JSON line to FILE: the wall time "t", the
data plane's answers by HTTP status ("http": {"200": n, ...}, cumulative, from its DPDK
telemetry socket's /flashgate/stats) and the items left in Redis ("stock", fg:{ID}:stock). A
sample whose source does not answer leaves that field out. One process, two kept connections:
nothing is started per sample.
"""

import argparse
import json
import signal
import socket
import sys
import time


class Telemetry:
    """DPDK's telemetry v2 socket: a SOCK_SEQPACKET that answers one JSON per command."""

    def __init__(self, path):
        self.path = path
        self.s = None

    def stats(self):
        try:
            if self.s is None:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.s.settimeout(2)
                self.s.connect(self.path)
                self.s.recv(16384)  # its greeting
            self.s.send(b"/flashgate/stats")
            d = json.loads(self.s.recv(1 << 20))["/flashgate/stats"]
            p = "http_responses_"
            return {k[len(p):]: v for k, v in d.items() if k.startswith(p) and k[len(p):].isdigit()}
        except (OSError, ValueError, KeyError, TypeError):
            if self.s is not None:
                self.s.close()
            self.s = None
            return None


class Redis:
    """GET of one key over a kept RESP connection."""

    def __init__(self, path):
        self.path = path
        self.s = None

    def get_int(self, key):
        try:
            if self.s is None:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.settimeout(2)
                self.s.connect(self.path)
                self.f = self.s.makefile("rb")
            k = key.encode()
            self.s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
            head = self.f.readline()
            if not head.startswith(b"$") or head.startswith(b"$-1"):
                return None
            return int(self.f.readline().strip())
        except (OSError, ValueError):
            if self.s is not None:
                self.s.close()
            self.s = None
            return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--telemetry", required=True)
    ap.add_argument("--redis", required=True)
    ap.add_argument("--event", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=float, default=0.5)
    a = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    tel, red = Telemetry(a.telemetry), Redis(a.redis)
    key = "fg:{%d}:stock" % a.event
    with open(a.out, "w") as out:
        nxt = time.monotonic()
        while not stop:
            row = {"t": round(time.time(), 3)}
            http = tel.stats()
            if http is not None:
                row["http"] = http
            stock = red.get_int(key)
            if stock is not None:
                row["stock"] = stock
            out.write(json.dumps(row) + "\n")
            out.flush()
            nxt += a.every
            time.sleep(max(0.0, nxt - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
