#!/usr/bin/env python3
"""txlm serve through the official OpenAI client library, npm's openai
package run with Node (.ci/run installs it into BUILD/npm): models,
completions plain and streamed equal to `txlm generate` with the same
seed and options, n choices, errors as the library's own error classes,
a session addressed through its own base URL (as through a proxy) equal
to generate with --state-out/--state-in, /v1/score equal to `txlm score`.
Skipped, saying so, when Node or the package is missing.
usage: test_serve_openai.py TXLM TXLM_PACK GOLDEN_CASE_DIR"""
import json
import os
import shutil
import subprocess
import sys

from serve_util import Server, generate, score, setup

modules = os.environ.get("TXLM_NODE_MODULES", "")
if not shutil.which("node") or not os.path.isdir(os.path.join(modules, "openai")):
    print("SKIP: npm's openai package is not in %s (node: %s); install it with: npm install --prefix BUILD/npm "
          "openai@6 (.ci/run does; it needs the npm registry)" % (modules or "TXLM_NODE_MODULES", shutil.which("node")))
    sys.exit(77)
txlm, pack_tool, model, tmp, c = setup(150)
opts = ["--temp", "0.9", "--top-p", "0.95"]
want = generate(txlm, model, "w5 w9 w12", 9, 40, *opts)
state = os.path.join(tmp, "s.state")
first = generate(txlm, model, "w5 w9 w12", 5, 7, state_out=state)
nxt = generate(txlm, model, " w3", 4, 9, state_in=state)
sv = Server(txlm, model, "--api-key", "k1")
try:
    env = dict(os.environ, NODE_PATH=modules)
    run = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "openai_client.cjs"), str(sv.port), "k1"],
                         capture_output=True, text=True, timeout=120, env=env)
    c.ok(run.returncode == 0, "the client ran (%s)" % run.stderr[-600:])
    out = json.loads(run.stdout) if run.returncode == 0 else {}
    c.ok(out.get("models") == ["m"], "models.list: %s" % out.get("models"))
    c.ok(out.get("plain") == want, "completions.create = generate: %r / %r" % (out.get("plain"), want))
    c.ok(out.get("streamed") == want and out.get("finish") == "length", "streamed with for await = generate")
    c.ok(out.get("usage", {}).get("completion_tokens") == 9, "usage: %s" % out.get("usage"))
    c.ok(out.get("two") == [want, generate(txlm, model, "w5 w9 w12", 9, 41, *opts)] and out.get("logprobs") == 9,
         "n 2: seeds 40 and 41, 9 log-probabilities each")
    bad = out.get("bad_temperature", {})
    c.ok(bad.get("status") == 400 and bad.get("type") == "BadRequestError" and "temperature" in bad.get("message", ""),
         "temperature 5: BadRequestError (%s)" % bad)
    chat = out.get("chat", {})
    c.ok(chat.get("status") == 400 and "plain language model" in chat.get("message", ""), "chat: 400 (%s)" % chat)
    c.ok(out.get("wrong_key", {}).get("type") == "AuthenticationError", "a wrong key: AuthenticationError")
    c.ok(out.get("session_first") == first and out.get("session_next") == nxt, "a session by its base URL = generate "
         "--state-out, then --state-in (%r %r)" % (out.get("session_first"), out.get("session_next")))
    bits = score(txlm, model, "w5 w9 w12")
    got = out.get("score", [])
    c.ok(len(got) == 3 and got[0] is None and all(abs(a - b) < 1e-5 for a, b in zip(got[1:], bits[1:])), "/score = txlm score")
    c.ok(sv.stop() == 0, "exit status 0")
finally:
    sv.stop()
sys.exit(c.done())
