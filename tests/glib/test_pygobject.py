#!/usr/bin/python3
"""txlm-glib from Python (PyGObject, Debian's /usr/bin/python3 with
python3-gi): the demo model loaded asynchronously on a main loop (progress
notified before the callback), a seeded generation equal to `txlm
generate`'s text, a long generation cancelled after a few tokens
(G_IO_ERROR_CANCELLED, the memory the prompt and the tokens announced),
GErrors for a missing and a damaged model file, synchronous calls for
scripts. Environment: TXLM_CLI, TXLM_DEMO, GI_TYPELIB_PATH and
LD_LIBRARY_PATH (the build). Skipped (77) without python3-gi."""
import os
import subprocess
import sys
import tempfile

try:
    import gi

    gi.require_version("Txlm", "1.0")
    from gi.repository import Gio, GLib, Txlm
except (ImportError, ValueError) as e:
    print(f"SKIP: PyGObject or the Txlm typelib is missing ({e}; Debian: python3-gi)")
    sys.exit(77)

cli, demo = os.environ["TXLM_CLI"], os.environ["TXLM_DEMO"]
loop = GLib.MainLoop()
failures = 0


def check(ok, what):
    global failures
    print(("ok" if ok else "FAIL") + ": " + what, flush=True)
    failures += not ok


def guard(fn):
    """A callback whose exception fails the test and ends the loop."""

    def call(*args):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 (any failure ends the test)
            import traceback

            check(False, f"{e!r}\n{traceback.format_exc()}")
            loop.quit()

    return call


def cli_generate(prompt, n, seed):
    out = subprocess.run([cli, "generate", "-m", demo, "-p", prompt, "-n", str(n), "--seed", str(seed),
                          "--no-display-prompt"], check=True, capture_output=True).stdout
    return out.decode()[:-1]


def generate(session, prompt, n, seed, cancel_at, done):
    r = {"tokens": [], "late": False, "finished": False, "text": None, "error": None}
    cancellable = Gio.Cancellable()

    def on_token(_s, text):
        r["late"] |= r["finished"]
        r["tokens"].append(text)
        if len(r["tokens"]) == cancel_at:
            cancellable.cancel()

    handler = session.connect("token", on_token)

    def finished(s, res):
        r["finished"] = True
        s.disconnect(handler)
        try:
            r["text"] = s.generate_finish(res)
        except GLib.Error as e:
            r["error"] = e
        done(r)

    session.generate_async(prompt, n, seed, cancellable, guard(finished))


def load_errors():
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "missing.txlm")
        try:
            Txlm.Model.new(missing, None)
            check(False, "a missing file loads")
        except GLib.Error as e:
            check(e.matches(Txlm.error_quark(), Txlm.Error.IO) and missing in e.message,
                  f"a missing file: Txlm.Error.IO ({e.message})")
        data = bytearray(open(demo, "rb").read())
        data[len(data) // 2:len(data) // 2 + 4] = b"\xff" * 4
        damaged = os.path.join(tmp, "damaged.txlm")
        open(damaged, "wb").write(data)

        def on_damaged(_o, res):
            try:
                Txlm.Model.load_finish(res)
                check(False, "a damaged file loads")
            except GLib.Error as e:
                check(e.matches(Txlm.error_quark(), Txlm.Error.CHECKSUM),
                      f"a damaged file, asynchronously: Txlm.Error.CHECKSUM ({e.message})")
            loop.quit()

        Txlm.Model.load_async(damaged, None, guard(on_damaged))
        loop.run()


def scripts(model):
    """The synchronous calls, as a script uses them."""
    session = model.create_session()
    pieces = []
    session.connect("token", lambda _s, t: pieces.append(t))
    text = session.generate_sync("The secret of life is", 20, 1, None)
    check(text == cli_generate("The secret of life is", 20, 1) and "".join(pieces) == text,
          "generate_sync: txlm generate's text, its tokens signalled as they came")
    words = model.create_session().score_sync("Do not take life too seriously", None)
    check([w.get_text() for w in words] == ["Do", "not", "take", "life", "too", "seriously"]
          and all(w.get_surprisal() > 0 for w in words[1:]), "score_sync: the words and their surprisals")
    state = session.save_sync(None)
    again = model.create_session()
    again.restore_sync(state, None)
    check(again.get_memory_length() == session.get_memory_length() > 0, "save_sync and restore_sync")


def main():
    progress, loaded = [], [False]
    model = Txlm.Model(path=demo)
    model.connect("notify::progress", lambda m, _: progress.append((m.props.progress, loaded[0])))

    def on_loaded(m, res):
        loaded[0] = True
        m.init_finish(res)
        values = [p for p, _ in progress]
        check(m.props.loaded and len(values) >= 10 and values[-1] == 1.0 and values == sorted(values)
              and not any(late for _, late in progress),
              f"loaded asynchronously, {len(values)} progress notifications in order, all before the callback")
        prompt = "The secret of life is"
        session = m.create_session()

        def on_generated(r):
            want = cli_generate(prompt, 30, 1)
            check(r["text"] == want, f"seed 1: {r['text']!r} is txlm generate's {want!r}")
            check(len(r["tokens"]) == 30 and "".join(r["tokens"]) == r["text"] and not r["late"],
                  "30 ::token signals before the callback, their texts the result")
            long = m.create_session()

            def on_cancelled(c):
                err = c["error"]
                check(err is not None and err.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED)
                      and len(c["tokens"]) < 100, f"cancelled after {len(c['tokens'])} tokens: {err and err.message}")
                fed = len(m.tokenize(prompt)) + len(c["tokens"])
                check(long.get_memory_length() == fed, f"memory {long.get_memory_length()} = prompt + tokens announced ({fed})")
                check("".join(c["tokens"]) == cli_generate(prompt, len(c["tokens"]), 11),
                      "the tokens announced are txlm generate's")
                loop.quit()

            generate(long, prompt, 100, 11, 4, on_cancelled)

        generate(session, prompt, 30, 1, 0, on_generated)

    model.init_async(GLib.PRIORITY_DEFAULT, None, guard(on_loaded))
    loop.run()
    load_errors()
    scripts(model)
    check(model.get_validation_messages() == 0, "no validation messages")
    print(f"{failures} failures")
    return 1 if failures else 0


sys.exit(main())
