#!/usr/bin/python3
"""Loads a model without blocking the main loop (its progress on stderr),
generates with a seed, printing each token as it comes, then goes on and
cancels after 10 tokens, as a stop button would.

    /usr/bin/python3 generate.py models/demo.txlm
"""
import sys

import gi

gi.require_version("Txlm", "1.0")
from gi.repository import Gio, GLib, Txlm  # noqa: E402

loop = GLib.MainLoop()
state = {"tokens": 0, "stop": None, "status": 0}


def fail(error):
    print(f"error: {error.message}", file=sys.stderr)
    state["status"] = 1
    loop.quit()


def on_token(session, text):
    sys.stdout.write(text)
    sys.stdout.flush()
    state["tokens"] += 1
    if state["tokens"] == 10 and state["stop"]:
        state["stop"].cancel()  # the engine stops after the token it is making


def on_second_done(session, result):
    try:
        session.generate_finish(result)
    except GLib.Error as error:
        if not error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED):
            fail(error)
            return
        print(f"\n[stopped after {state['tokens']} tokens; the memory holds {session.get_memory_length()} tokens]")
    loop.quit()


def on_first_done(session, result):
    try:
        session.generate_finish(result)  # the tokens were printed as they came
    except GLib.Error as error:
        fail(error)
        return
    print("\n---")
    # go on from the memory (no prompt), until stopped
    state["tokens"] = 0
    state["stop"] = Gio.Cancellable()
    session.generate_async(None, 200, 2, state["stop"], on_second_done)


def on_loaded(model, result):
    try:
        model.init_finish(result)
        session = model.create_session()
    except GLib.Error as error:
        fail(error)
        return
    print(file=sys.stderr)
    session.connect("token", on_token)
    session.generate_async("The secret of life is", 40, 1, None, on_first_done)


model = Txlm.Model(path=sys.argv[1])
model.connect("notify::progress", lambda m, _: print(f"\rloading {100 * m.props.progress:3.0f}%", end="", file=sys.stderr))
model.init_async(GLib.PRIORITY_DEFAULT, None, on_loaded)
loop.run()
sys.exit(state["status"])
