#!/usr/bin/env python3
"""keeper_server.py - a Spare Cores Keeper API test server for rt's tests.

    keeper_server.py PORT LOG [--mode MODE]

MODE: ok (default), garbage (200 with a body that is not JSON), object (200
with JSON that is not a list), 500, slow (answers after 30 s), silent
(accepts connections, never answers), huge (an endless body).

Implements the two calls rt makes (reference.md section 9):
  GET /servers?vcpus_min=&memory_min=&order_by=min_price_ondemand
      &order_dir=asc&limit=[&gpu_min=&gpu_memory_total=]
      a list of the catalog's servers that fit, cheapest first
  GET /server/{vendor}/{instance}/prices
      a list of price objects (region_id, allocation, operating_system, price)
checks the X-Application-ID header, and appends every request (path and
query) to LOG as one JSON line. The catalog is small and made up; its
servers and prices are known to the tests. Listens on 127.0.0.1 only;
prints "ready".
"""
import json, socket, sys, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
port, log = int(args[0]), args[1]
opts = dict(zip(args[2::2], args[3::2]))
mode = opts.get("--mode", "ok")

if mode == "silent":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    print("ready", flush=True)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)

# vendor_id, api_reference, display_name, vcpus, memory_amount MiB, gpu_count,
# gpu_memory_total MiB, min_price_ondemand USD/h
CATALOG = [
    ("hcloud", "cx22", "CX22", 2, 4096, 0, 0, 0.0071),
    ("aws", "t4g.small", "t4g.small", 2, 2048, 0, 0, 0.0168),
    ("aws", "m5.large", "m5.large", 2, 8192, 0, 0, 0.096),
    ("gcp", "e2-standard-4", "e2-standard-4", 4, 16384, 0, 0, 0.134),
    ("aws", "m5.2xlarge", "m5.2xlarge", 8, 32768, 0, 0, 0.384),
    ("gcp", "g2-standard-4", "g2-standard-4", 4, 16384, 1, 24576, 0.7068),
    ("aws", "g5.xlarge", "g5.xlarge", 4, 16384, 1, 24576, 1.006),
    ("aws", "p4d.24xlarge", "p4d.24xlarge", 96, 1179648, 8, 327680, 32.77),
]
PRICES = {
    ("aws", "m5.large"): [
        {"region_id": "us-east-1", "allocation": "ondemand", "operating_system": "Linux", "price": 0.096},
        {"region_id": "eu-west-1", "allocation": "spot", "operating_system": "Linux", "price": 0.035},
        {"region_id": "eu-west-1", "allocation": "ondemand", "operating_system": "Windows", "price": 0.188},
        {"region_id": "eu-west-1", "allocation": "ondemand", "operating_system": "Linux", "price": 0.107},
    ],
}


def fits(s, q):
    def num(k, d=0.0):
        return float(q.get(k, [d])[0])
    return (s[3] >= num("vcpus_min") and s[4] / 1024.0 >= num("memory_min")
            and s[5] >= num("gpu_min") and s[6] / 1024.0 >= num("gpu_memory_total"))


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        with open(log, "a") as f:
            f.write(json.dumps({"path": u.path, "query": {k: v[0] for k, v in q.items()},
                                "app": self.headers.get("X-Application-ID")}) + "\n")
        if self.headers.get("X-Application-ID") != "resource-tracker":
            return self.send(403, '{"detail":"missing X-Application-ID"}')
        if mode == "500":
            return self.send(500, '{"detail":"internal error"}')
        if mode == "garbage":
            return self.send(200, "<html>\x00\xff not json", "text/html")
        if mode == "object":
            return self.send(200, '{"servers": "no"}')
        if mode == "slow":
            time.sleep(30)
            return self.send(200, "[]")
        if mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(b"[")
                while True:
                    self.wfile.write(b'{"vendor_id":"x","api_reference":"y"},' * 1000)
            except (BrokenPipeError, ConnectionResetError):
                return
        if u.path == "/servers":
            limit = int(q.get("limit", ["50"])[0])
            rows = sorted((s for s in CATALOG if fits(s, q)), key=lambda s: s[7])[:limit]
            return self.send(200, json.dumps([{
                "vendor_id": s[0], "server_id": s[1], "api_reference": s[1],
                "display_name": s[2], "vcpus": s[3], "memory_amount": s[4],
                "gpu_count": s[5], "gpu_memory_total": s[6], "min_price_ondemand": s[7],
                "status": "active"} for s in rows]))
        parts = u.path.strip("/").split("/")
        if len(parts) == 4 and parts[0] == "server" and parts[3] == "prices":
            return self.send(200, json.dumps(PRICES.get((parts[1], parts[2]), [])))
        return self.send(404, '{"detail":"Not Found"}')


srv = ThreadingHTTPServer(("127.0.0.1", port), H)
srv.daemon_threads = True
print("ready", flush=True)
srv.serve_forever()
