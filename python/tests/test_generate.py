"""Session.generate against `txlm generate` with the same seed and options; sampling."""
import numpy as np
import pytest
from conftest import run_cli, word_text

CASES = [
    ("The secret of life is", 60, {}),
    ("The secret of life is", 80, {"temperature": 0.7, "top_k": 20}),
    ("Q: why?\nA:", 80, {"top_p": 0.9, "stop": ["\n"]}),
    ("It was a dark and stormy", 70, {"repeat_penalty": 1.3, "temperature": 0.8, "stop": ["the", "!"]}),
    ("", 40, {"temperature": 0}),
    ("A long prompt, longer than one segment of the demo model's 128 tokens, fed as the command feeds it: "
     "in segments of tgt_len with the memory carried.", 30, {"repeat_penalty": 1.1, "repeat_last_n": 8}),
]


def cli_flags(n, seed, o):
    flags = ["-n", str(n), "--seed", str(seed), "--no-display-prompt"]
    for k, v in o.items():
        if k == "stop":
            for s in v:
                flags += ["--stop", s.replace("\n", "\\n")]
        else:
            flags += ["--" + k.replace("_", "-"), str(v)]
    return flags


@pytest.mark.parametrize("prompt,n,options", CASES)
def test_generate_as_txlm_generate(demo, prompt, n, options):
    seed = 11
    want = run_cli("generate", "-m", demo.path, "-p", prompt, *cli_flags(n, seed, options)).decode()
    pieces = list(demo.session().generate(prompt, max_tokens=n, seed=seed, **options))
    assert all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) + "\n" == want


@pytest.mark.parametrize("which", ["word", "wt103"])
def test_generate_word_models(word_model, wt103_model, which):
    """A wt103 model's detokenizer holds the prompt's last word back: its text is not given again."""
    m = word_model if which == "word" else wt103_model
    prompt = word_text(m, lines=2).rstrip("\n")
    want = run_cli("generate", "-m", m.path, "-p", prompt, *cli_flags(25, 5, {"top_k": 50})).decode()
    got = "".join(m.session().generate(prompt, 25, top_k=50, seed=5))
    assert got + "\n" == want and not got.startswith(prompt.split()[-1])


def test_generate_goes_on_from_memory(demo):
    """No prompt after a first reply: the session continues where it stands, with its sampler."""
    a, b = demo.session(), demo.session()
    first = "".join(a.generate("Once upon", 20, seed=3))
    again = "".join(a.generate("", 20))
    whole = "".join(b.generate("Once upon", 40, seed=3))
    assert first + again == whole


def test_generate_tokens_equals_sample_and_feed(demo):
    ids = demo.tokenize("The meaning of life")
    a, b = demo.session(), demo.session()
    a.feed(ids, logprobs=False)
    b.feed(ids, logprobs=False)
    a.set_seed(9)
    b.set_seed(9)
    window = list(ids[-4:])
    got = a.generate_tokens(30, temperature=0.9, top_k=10, repeat_penalty=1.2, window=window)
    want = []
    for _ in range(30):
        t = b.sample(0.9, 10, 0.0, 1.2, window)
        b.feed([t], logprobs=False)
        want.append(t)
        window = (window + [t])[-4:]
    assert got.tolist() == want
    stops = []
    got = a.generate_tokens(10, progress=lambda f: stops.append(f) or len(stops) == 4)
    assert len(got) == 4 and stops == [0.1, 0.2, 0.3, 0.4]


def test_sample_seeded_and_greedy(demo):
    s = demo.session()
    s.feed(demo.tokenize("Hello"), logprobs=False)
    s.set_seed(1)
    draws = [s.sample(top_p=0.95) for _ in range(20)]
    s.set_seed(1)
    assert [s.sample(top_p=0.95) for _ in range(20)] == draws
    assert s.sample(temperature=0) == int(np.argmax(s.next_logprobs()))
