#!/usr/bin/env python3
"""imds_server.py - answers like one cloud vendor's instance metadata service.

    imds_server.py PORT VENDOR     VENDOR: aws gcp azure hcloud upcloud vultr alicloud ovh
    imds_server.py PORT --silent   accept connections and never answer

For rt's discovery tests (RT_IMDS_ADDR=127.0.0.1:PORT points every probe
here). Each vendor checks the headers its real service requires and answers
404 to everything else, so only the right probe can succeed. 127.0.0.1 only.
"""
import json, socket, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, vendor = int(sys.argv[1]), sys.argv[2]
if vendor == "--silent":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    print("ready", flush=True)
    conns = []
    while True:
        c, _ = s.accept()
        conns.append(c)  # hold it open, say nothing

TOKEN = "tok-123"
AWS = {"/latest/meta-data/placement/region": "eu-west-1",
       "/latest/meta-data/placement/availability-zone": "eu-west-1b",
       "/latest/meta-data/instance-type": "m5.large",
       "/latest/meta-data/identity-credentials/ec2/info":
           json.dumps({"Code": "Success", "LastUpdated": "2026-01-01T00:00:00Z", "AccountId": "123456789012"})}
GCP = {"/computeMetadata/v1/instance/zone": "projects/987/zones/us-central1-a",
       "/computeMetadata/v1/instance/machine-type": "projects/987/machineTypes/e2-standard-4",
       "/computeMetadata/v1/project/project-id": "demo-project"}
ALI = {"/latest/meta-data/region-id": "cn-hangzhou", "/latest/meta-data/zone-id": "cn-hangzhou-i",
       "/latest/meta-data/instance/instance-type": "ecs.g7.large",
       "/latest/meta-data/owner-account-id": "5678"}


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def say(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        if self.path == "/latest/api/token":
            if vendor == "aws" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self.say(200, TOKEN)
            if vendor == "alicloud" and self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds"):
                return self.say(200, TOKEN)
        self.say(404, "not found")

    def do_GET(self):
        h, p = self.headers, self.path
        if vendor == "aws" and h.get("X-aws-ec2-metadata-token") == TOKEN and p in AWS:
            return self.say(200, AWS[p])
        if vendor == "alicloud" and h.get("X-aliyun-ecs-metadata-token") == TOKEN and p in ALI:
            return self.say(200, ALI[p])
        if vendor == "gcp" and h.get("Metadata-Flavor") == "Google" and p in GCP:
            return self.say(200, GCP[p])
        if vendor == "azure" and h.get("Metadata") == "true" and p.startswith("/metadata/instance?"):
            return self.say(200, json.dumps({"compute": {"location": "westeurope", "vmSize": "Standard_D2s_v3",
                                                         "zone": "2", "subscriptionId": "sub-42"}}))
        if vendor == "hcloud" and p == "/hetzner/v1/metadata":
            return self.say(200, "availability-zone: fsn1-dc14\nhostname: box\ninstance-id: 42\nregion: eu-central\n")
        if vendor == "upcloud" and p == "/metadata/v1.json":
            return self.say(200, json.dumps({"cloud_name": "upcloud", "region": "fi-hel1", "instance_id": "x"}))
        if vendor == "vultr" and p == "/v1.json":
            return self.say(200, json.dumps({"instance-v2-id": "abc", "region": {"regioncode": "EWR"}}))
        if vendor == "ovh" and p == "/openstack/latest/meta_data.json":
            return self.say(200, json.dumps({"uuid": "u-1", "availability_zone": "gra11"}))
        if vendor == "ovh" and p == "/latest/meta-data/instance-type":
            return self.say(200, "b2-7")
        self.say(404, "not found")


srv = ThreadingHTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
srv.serve_forever()
