#!/usr/bin/env python3
"""Runs a build's test suite from its `meson introspect --tests` list, where the
build was made on another machine and no matching meson is installed (a lent GPU
machine with only a driver). The build must sit at the absolute path it was
configured at (link it there). Exit codes follow meson's: 0 pass, 77 skip.

    meson introspect build --tests > build/tests.json      # where it was built
    python3 bench/gpu/suite.py build/tests.json -j 8 --log OUT/suite.log
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time


def run_one(t, extra_env, scale, builddir):
    env = dict(os.environ)
    env.update(t.get("env") or {})
    env.update(extra_env)
    t0 = time.time()
    try:
        p = subprocess.run(t["cmd"], cwd=t.get("workdir") or builddir, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=(t.get("timeout") or 30) * scale)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", e.stdout or b""
    return t["name"], rc, time.time() - t0, out.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests")
    ap.add_argument("-j", type=int, default=os.cpu_count())
    ap.add_argument("--log", default=None)
    ap.add_argument("--skip", default="", help="comma-separated test names not run")
    ap.add_argument("--only", default="", help="comma-separated test names run alone")
    ap.add_argument("--suites", default="", help="comma-separated suites (kernels, ref, ...): only their tests")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    a = ap.parse_args()
    tests = json.load(open(a.tests))
    builddir = os.path.dirname(os.path.abspath(a.tests))  # meson runs tests there unless told otherwise
    skip = set(filter(None, a.skip.split(",")))
    only = set(filter(None, a.only.split(",")))
    suites = set(filter(None, a.suites.split(",")))
    in_suites = lambda t: not suites or any(s.split(":")[-1] in suites for s in t.get("suite", []))
    tests = [t for t in tests if t["name"] not in skip and (not only or t["name"] in only) and in_suites(t)]
    extra = {"MALLOC_PERTURB_": "57"}  # as meson test sets it
    counts = {"pass": 0, "fail": 0, "skip": 0}
    log = open(a.log, "w") if a.log else None
    serial = [t for t in tests if not t.get("is_parallel", True)]

    # each result as it comes, so a run stopped at its time limit keeps what finished
    def report(name, rc, dt, out):
        kind = "pass" if rc == 0 else "skip" if rc == 77 else "fail"
        counts[kind] += 1
        line = f"{kind.upper():4} {name} ({dt:.1f} s, rc {rc})"
        print(line, flush=True)
        if log:
            log.write(f"==== {line}\n{out}\n")
            log.flush()
        if kind == "fail":
            print("\n".join(out.splitlines()[-25:]), flush=True)

    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        futs = [pool.submit(run_one, t, extra, a.timeout_scale, builddir) for t in tests if t.get("is_parallel", True)]
        for f in concurrent.futures.as_completed(futs):
            report(*f.result())
    for t in serial:
        report(*run_one(t, extra, a.timeout_scale, builddir))
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
