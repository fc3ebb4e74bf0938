#!/usr/bin/env python3
"""How long txlm-write's main loop goes without running while the model
generates (docs/performance.md, "A desktop app's main loop while
generating"): the app on an Xvfb display, the demo model, a prompt typed by
xdotool, then R suggestions of up to N tokens each (--multiline: they do
not end at the line's end), each followed by a quiet second. The app's test
hook ticks a 1 ms timeout source on its main loop all along and reports,
for the generations and for the quiet time between them, the longest gap
between two ticks, how much of it was the main thread's own CPU time, and
how many gaps passed 4, 8, 16.7, 33.3 and 100 ms.

usage: write_main_loop.py TXLM_WRITE [--model M] [--runs R] [--tokens N]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "desktop"))
import write_driver as wd  # noqa: E402

PROMPT = "Any fool can make things bigger and more complex. The secret of life is "


def main():
    p = argparse.ArgumentParser()
    p.add_argument("write")
    p.add_argument("--model")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--tokens", type=int, default=200)
    args = p.parse_args()
    missing = wd.missing_tools()
    if missing:
        sys.exit("needs " + ", ".join(missing))
    display = wd.Display()
    extra = ["--model", args.model] if args.model else []
    app = wd.App(args.write, display, ["--seed", "5", "--tokens", str(args.tokens), "--multiline", "--pause-ms", "300",
                                       *extra])
    try:
        s = app.wait("the model loaded", lambda s: s["loaded"] and s["toggle"])
        print(f"device: {s['device']}, renderer: {s['renderer']}; load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
        app.find_window()
        app.focus()
        app.type(PROMPT)
        for run in range(args.runs):
            app.wait(f"suggestion {run + 1}", lambda s: s["ghost_prompt"] == PROMPT and s["ghost_done"]
                     and s["generations"] >= run + 1 and not s["ghost_running"])
            time.sleep(1)  # (a quiet second to compare with; not a condition)
            if run + 1 < args.runs:
                app.type("x")
                app.key("BackSpace")
        s = app.state()
        loop = s["main_loop"]
        for g in loop["generations"][-args.runs:]:
            gap = g["gaps"]
            print(f"generation: {g['chars']} tokens in {gap['duration_ms']:.0f} ms, longest gap "
                  f"{gap['max_gap_ms']:.1f} ms (main thread's CPU {gap['max_busy_ms']:.1f} ms), over 16.7 ms: "
                  f"{gap['gaps_over_ms']['16.667']}")
        for name in ("generating", "quiet"):
            m = loop[name]
            over = ", ".join(f">{k} ms: {v}" for k, v in m["gaps_over_ms"].items())
            print(f"{name}: {m['duration_ms']:.0f} ms, {m['ticks']} ticks, longest gap {m['max_gap_ms']:.1f} ms "
                  f"(main thread's CPU {m['max_busy_ms']:.1f} ms); {over}")
        app.key("ctrl+q")
        app.finish()
    finally:
        app.close()
        display.close()


if __name__ == "__main__":
    main()
