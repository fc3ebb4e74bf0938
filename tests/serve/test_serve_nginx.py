#!/usr/bin/env python3
"""Two txlm servers behind nginx (Debian's), as one server per GPU is
scaled out: each server's session ids start with its own --id-prefix and
nginx routes /v1/sessions/PREFIX-... to that server, anything else to
either. nginx runs as this test's child on loopback ports, with its own
configuration and prefix. Sessions made through nginx land on both
servers and each is served by its own through the proxy, plainly and
streamed (events pass at once: X-Accel-Buffering); stateless completions
through the proxy equal `txlm generate`. Skipped, saying so, without nginx.
usage: test_serve_nginx.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import time

from serve_util import Server, call, events, free_port, generate, streamed_text, wait_for, setup

nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
if not nginx:
    print("SKIP: nginx is not installed (Debian: apt-get install nginx)")
    sys.exit(77)
txlm, pack_tool, model, tmp, c = setup(150)

CONFIG = """# two txlm servers, sessions pinned to theirs by the id's prefix (docs/server.md)
%(user)s
worker_processes 1;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %(dir)s/body;
    proxy_temp_path %(dir)s/proxy;
    fastcgi_temp_path %(dir)s/fastcgi;
    uwsgi_temp_path %(dir)s/uwsgi;
    scgi_temp_path %(dir)s/scgi;
    upstream txlm_any { server 127.0.0.1:%(p0)d; server 127.0.0.1:%(p1)d; }
    upstream txlm_s0 { server 127.0.0.1:%(p0)d; }
    upstream txlm_s1 { server 127.0.0.1:%(p1)d; }
    map $uri $txlm_backend {
        ~^/v1/sessions/s0-  txlm_s0;
        ~^/v1/sessions/s1-  txlm_s1;
        default             txlm_any;
    }
    server {
        listen 127.0.0.1:%(port)d;
        client_max_body_size 64m;
        location / {
            proxy_pass http://$txlm_backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 600s;
        }
    }
}
"""

servers = [Server(txlm, model, "--id-prefix", "s0"), Server(txlm, model, "--id-prefix", "s1")]
proc = None
try:
    port = free_port()
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(CONFIG % {"dir": tmp, "p0": servers[0].port, "p1": servers[1].port, "port": port,
                          "user": "user root;" if os.geteuid() == 0 else ""})
    proc = subprocess.Popen([nginx, "-p", tmp, "-c", conf, "-g", "daemon off;"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)

    def up():
        try:
            return call(port, "GET", "/health", timeout=5)[0] == 200
        except OSError:
            return False
    wait_for(up, "nginx to answer", 30)
    ids = [json.loads(call(port, "POST", "/v1/sessions", {})[2])["id"] for _ in range(4)]
    c.ok({i[:3] for i in ids} == {"s0-", "s1-"}, "sessions made through nginx land on both servers: %s" % [i[:3] for i in ids])
    state = os.path.join(tmp, "s.state")
    first = generate(txlm, model, "w5 w9 w12", 5, 7, state_out=state)
    for sid in ids:
        status, _, body = call(port, "POST", "/v1/sessions/%s/completions" % sid, {"prompt": "w5 w9 w12", "max_tokens": 5, "seed": 7})
        got = json.loads(body)
        c.ok(status == 200 and got["choices"][0]["text"] == first and got["session"] == sid,
             "session %s... served by its own server through nginx" % sid[:8])
        status, evs, done = events(port, "/v1/sessions/%s/completions" % sid, {"prompt": " w3", "max_tokens": 4, "seed": 9, "stream": True})
        c.ok(status == 200 and done and streamed_text(evs) == generate(txlm, model, " w3", 4, 9, state_in=state),
             "  and streamed through nginx")
        status, _, body = call(port, "GET", "/v1/sessions/" + sid)
        c.ok(status == 200 and b'"tokens":13' in body, "  its memory holds both requests")
    want = generate(txlm, model, "w7 w8", 6, 3)
    for _ in range(4):
        status, _, body = call(port, "POST", "/v1/completions", {"prompt": "w7 w8", "max_tokens": 6, "seed": 3})
        c.ok(status == 200 and json.loads(body)["choices"][0]["text"] == want, "a stateless completion through nginx")
    served = [s.metric("txlm_generated_tokens_total") for s in servers]
    c.ok(all(x > 0 for x in served), "both servers generated (%s tokens)" % served)
    for s in servers:
        c.ok(s.stop() == 0, "a server's exit status 0")
finally:
    if proc:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if c.fails:
            print(proc.stderr.read().decode()[-2000:], open(os.path.join(tmp, "error.log")).read()[-2000:])
    for s in servers:
        s.stop()
sys.exit(c.done())
