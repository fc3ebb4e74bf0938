#!/usr/bin/env python3
"""txlm-write on a real X display (Xvfb), driven by real key and mouse events:

  1. the app opens the demo model (its default) and shows its window;
  2. a prompt is typed; when the typing pauses the model's suggestion
     appears as ghost text, equal to what `txlm generate` gives for the
     same prompt, seed and settings, and it is not part of the document;
  3. a letter typed while it shows takes it away and goes where the
     cursor is; Backspace, a pause: the same suggestion again;
  4. the Left arrow (a cursor move) takes the ghost away;
  5. End, a letter and Backspace, a pause, the suggestion again: Tab
     accepts it, it is the document's now;
  6. Ctrl+Z takes the accepted text back as one step, a second Ctrl+Z the
     Backspace before it (the ghosts shown were never in the history),
     Ctrl+Shift+Z twice brings both again;
  7. a click on the Surprisal toggle colours the words: each word's bits
     equal `txlm score --words`'s for the document, and its colour step
     the scale's;
  8. more words are typed: the colours follow the new document and a new
     suggestion comes beside them (two sessions of the model at once),
     again txlm generate's;
  9. the window is rendered to PNG by GTK's own renderer: not blank, each
     step's colour where words of that step are (and none where none),
     the legend's colours in the window;
 10. Ctrl+Q ends the app with status 0, no critical warning, no
     validation message.
The longest gap of the app's main loop while the suggestions were being
generated is printed (a benchmark figure, not a condition).

usage: test_write_display.py TXLM_WRITE TXLM MODEL [--keep-screenshot PNG]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import write_driver as wd  # noqa: E402

PROMPT = "Any fool can make things bigger and more complex. The secret of life is "
MORE = " A man"  # typed once the colours are on (its suggestion is not empty)
SEED, TOKENS, TEMPERATURE, TOP_K, PAUSE_MS = 5, 32, 0.7, 40, 500


def generate(txlm, model, prompt):
    """What `txlm generate` continues prompt with, under the app's settings."""
    run = subprocess.run([txlm, "generate", "-m", model, "-p", prompt, "-n", str(TOKENS), "--seed", str(SEED),
                          "--temperature", str(TEMPERATURE), "--top-k", str(TOP_K), "--stop", "\\n",
                          "--no-display-prompt"], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise wd.Failure(f"txlm generate: {run.stderr.strip()}")
    return run.stdout[:-1] if run.stdout.endswith("\n") else run.stdout  # (its closing line break)


def word_scores(txlm, model, text):
    """`txlm score --words` of text: [(word, bits or None)]."""
    import json
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        run = subprocess.run([txlm, "score", "-m", model, "--words", "--format", "jsonl", f.name],
                             capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(f.name)
    if run.returncode != 0:
        raise wd.Failure(f"txlm score: {run.stderr.strip()}")
    return [(w["word"], w["surprisal"]) for w in map(json.loads, run.stdout.splitlines())]


def ok(message):
    print("ok:", message, flush=True)


def ghost_for(app, prompt, what):
    """The finished suggestion for prompt (the document is prompt, the ghost apart from it)."""
    s = app.wait(what, lambda s: s["document"] == prompt and s["ghost_prompt"] == prompt and s["ghost_done"])
    return s


def check_surprisal(app, txlm, model, document):
    s = app.wait("the surprisal colours",
                 lambda s: s["surprisal"]["enabled"] and s["surprisal"]["words"]
                 and s["document"] == document and s["surprisal"]["scored_text"] == document)
    doc, words, scale = s["document"], s["surprisal"]["words"], s["surprisal"]["scale"]
    want = word_scores(txlm, model, doc)
    got = [(doc[b:e], bits) for b, e, bits, _ in words]
    if len(got) != len(want) or any(g[0] != w[0] for g, w in zip(got, want)):
        raise wd.Failure(f"the coloured words {[g[0] for g in got]} are not txlm score's {[w[0] for w in want]}")
    for (word, bits), (_, ref), (_, _, _, step) in zip(got, want, words):
        if (bits is None) != (ref is None) or (ref is not None and abs(bits - ref) > 1e-3 * max(1, abs(ref))):
            raise wd.Failure(f"{word!r}: {bits} bits in the app, {ref} from txlm score")
        want_step = -1 if ref is None else next(i for i, st in enumerate(scale)
                                                 if st["to_bits"] is None or ref < st["to_bits"])
        if step != want_step:
            raise wd.Failure(f"{word!r} ({ref} bits) coloured as step {step}, the scale says {want_step}")
    ok(f"{len(got)} words coloured, bits and steps as txlm score --words gives them")
    return s


def check_screenshot(app, state):
    before = state["screenshots"]
    app.screenshot_signal()
    s = app.wait("the screenshot", lambda s: s["screenshots"] > before, timeout=60)
    w, h, rows = wd.read_png(os.path.join(app.dir, "window.png"))
    counts = wd.colour_counts(rows)
    background, most = max(counts.items(), key=lambda kv: kv[1])
    if len(counts) < 20 or most > 0.98 * w * h:
        raise wd.Failure(f"window.png ({w}x{h}) looks blank: {len(counts)} colours, {most} pixels of {background}")
    _, _, text_rows = wd.read_png(os.path.join(app.dir, "text.png"))
    in_text = wd.colour_counts(text_rows)
    scale = s["surprisal"]["scale"]
    used = {step for _, _, _, step in s["surprisal"]["words"] if step >= 0}
    for i, st in enumerate(scale):
        n_text, n_window = in_text.get(st["background"], 0), counts.get(st["background"], 0)
        if i in used and n_text < 60:
            raise wd.Failure(f"step {i} ({st['background']}) has words but {n_text} pixels in the text view")
        if i not in used and n_text > 0:
            raise wd.Failure(f"step {i} ({st['background']}) has no words but {n_text} pixels in the text view")
        if n_window - n_text < 30:
            raise wd.Failure(f"the legend's step {i} ({st['background']}) is not in the window ({n_window} pixels)")
    ok(f"window.png {w}x{h}, {len(counts)} colours; the text view shows the {len(used)} steps its words have, "
       f"the legend all {len(scale)}")
    return s


def run(args):
    display = wd.Display()
    app = None
    try:
        app = wd.App(args.write, display, [str(a) for a in ["--seed", SEED, "--tokens", TOKENS, "--temperature",
                                                            TEMPERATURE, "--top-k", TOP_K, "--pause-ms", PAUSE_MS]])
        s = app.wait("the demo model loaded and the window shown", lambda s: s["loaded"] and s["toggle"])
        if os.path.realpath(s["model"]) != os.path.realpath(args.model):
            raise wd.Failure(f"the app opened {s['model']}, not the demo model {args.model}")
        ok(f"the demo model loaded on {s['device']}; its two sessions made in {s['session_create_ms']:.1f} ms; "
           f"GTK draws with {s['renderer']}")
        app.find_window()
        app.focus()

        app.type(PROMPT)
        s = ghost_for(app, PROMPT, "the suggestion for the prompt")
        ghost = s["ghost"]
        want = generate(args.txlm, args.model, PROMPT)
        if ghost != want or not ghost:
            raise wd.Failure(f"the ghost is {ghost!r}; txlm generate gives {want!r} (and it must not be empty)")
        ok(f"after the prompt, the ghost {ghost!r} is txlm generate's (seed {SEED}), not in the document")

        app.type("x")
        app.wait("a letter typed over the ghost", lambda s: s["document"] == PROMPT + "x", timeout=60)
        app.key("BackSpace")
        s = ghost_for(app, PROMPT, "the suggestion again after Backspace")
        if s["ghost"] != ghost:
            raise wd.Failure(f"after x and Backspace the ghost is {s['ghost']!r}, not {ghost!r} again")
        ok("a letter typed took the ghost away and went in before it; Backspace, a pause: the same ghost")

        app.key("Left")
        s = app.wait("the ghost gone after a cursor move", lambda s: s["ghost"] == "" and not s["ghost_running"])
        if s["document"] != PROMPT:
            raise wd.Failure(f"after Left, the document is {s['document']!r}")
        ok("Left (a cursor move) took the ghost away")

        app.key("End")
        app.type("x")
        app.key("BackSpace")
        ghost_for(app, PROMPT, "the suggestion again")
        prompt = PROMPT
        app.key("Tab")
        s = app.wait("the suggestion accepted", lambda s: s["document"] == prompt + ghost)
        ok(f"Tab accepted it: the document is {s['document']!r}")

        # the steps: the acceptance, and before it the Backspace of the x (the
        # ghosts shown in between are no steps)
        app.key("ctrl+z")
        app.wait("the acceptance undone", lambda s: s["document"] == prompt, timeout=60)
        app.key("ctrl+z")
        app.wait("the Backspace before it undone", lambda s: s["document"] == prompt + "x", timeout=60)
        app.key("ctrl+shift+z")
        app.wait("the Backspace redone", lambda s: s["document"] == prompt, timeout=60)
        app.key("ctrl+shift+z")
        s = app.wait("the acceptance redone", lambda s: s["document"] == prompt + ghost, timeout=60)
        ok("Ctrl+Z took the accepted text back in one step and then the Backspace before it (no ghost in the "
           "history); Ctrl+Shift+Z twice brought both again")

        app.click(s["toggle"])
        check_surprisal(app, args.txlm, args.model, prompt + ghost)

        prompt = prompt + ghost + MORE
        app.focus()
        app.type(MORE)
        s = ghost_for(app, prompt, "the suggestion beside the colours")
        want = generate(args.txlm, args.model, prompt)
        if s["ghost"] != want or not want:
            raise wd.Failure(f"the ghost is {s['ghost']!r}; txlm generate gives {want!r} (and it must not be empty)")
        ok(f"typed on with the colours on: the ghost {s['ghost']!r} is txlm generate's")
        s = check_surprisal(app, args.txlm, args.model, prompt)
        s = check_screenshot(app, s)
        if args.keep_screenshot:
            shutil.copyfile(os.path.join(app.dir, "window.png"), args.keep_screenshot)

        loop = s["main_loop"]
        gen, quiet = loop["generating"], loop["quiet"]
        print(f"main loop while generating ({len(loop['generations'])} suggestions, {gen['duration_ms']:.0f} ms): "
              f"longest gap {gen['max_gap_ms']:.1f} ms ({gen['max_busy_ms']:.1f} ms of it the main thread's own CPU "
              f"time at most), {gen['gaps_over_ms']['16.667']} over 16.7 ms; quiet ({quiet['duration_ms']:.0f} ms): "
              f"longest {quiet['max_gap_ms']:.1f} ms ({quiet['max_busy_ms']:.1f} ms), "
              f"{quiet['gaps_over_ms']['16.667']} over 16.7 ms", flush=True)

        if s["validation_messages"]:
            raise wd.Failure(f"{s['validation_messages']} Vulkan validation messages")
        app.key("ctrl+q")
        status = app.finish()
        err = app.stderr_text()
        bad = [line for line in err.splitlines()
               if ("CRITICAL" in line or "WARNING" in line) and "session bus" not in line]
        if status != 0 or bad:
            raise wd.Failure(f"txlm-write ended with status {status}; stderr:\n{err}")
        ok("Ctrl+Q ended the app with status 0, no critical or warning")
    finally:
        if app:
            app.close()
        display.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("write")
    p.add_argument("txlm")
    p.add_argument("model")
    p.add_argument("--keep-screenshot")
    args = p.parse_args()
    missing = wd.missing_tools()
    if missing:
        print("SKIP: the display test needs " + ", ".join(missing))
        return wd.SKIP
    try:
        run(args)
    except wd.Failure as e:
        print("FAIL:", e, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
