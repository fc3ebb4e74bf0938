"""The demo model's text: the English fortune cookies of Debian's `fortunes`
package (BSD licence, see /usr/share/doc/fortunes/copyright), normalised to
printable ASCII and newlines, shuffled by fortune with a fixed seed, the last
~5% held out for evaluation.

Its vocabulary is the character model txlm-pack reads with --tokenizer char:
one line per symbol, a one-byte symbol stands for that byte, `<eos>` for the
newline and `<unk>` for any other byte.
"""
import os
import random
import unicodedata

FORTUNE_DIR = "/usr/share/games/fortunes"
# Pictures made of characters, not prose.
SKIP = {"art", "ascii-art"}
SEED = 1234
HELDOUT_FRACTION = 0.05

SYMBOLS = [chr(b) for b in range(32, 127)] + ["<eos>", "<unk>"]
EOS, UNK = SYMBOLS.index("<eos>"), SYMBOLS.index("<unk>")


def normalise(text):
    """Printable ASCII and newlines: accents dropped, tabs to a space, trailing blanks cut."""
    text = unicodedata.normalize("NFKD", text)
    text = text.replace("\t", " ").replace("\r", "")
    text = "".join(ch for ch in text if ch == "\n" or 32 <= ord(ch) < 127)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def fortunes(directory=FORTUNE_DIR):
    if not os.path.isdir(directory):
        raise SystemExit(f"{directory} not found: install the Debian package 'fortunes' (apt-get install fortunes)")
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name in SKIP or "." in name or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            raw = f.read().decode("utf-8", errors="replace")
        for chunk in raw.split("\n%\n"):
            chunk = normalise(chunk.strip("%"))
            if chunk:
                out.append(chunk)
    return out


def split_text(directory=FORTUNE_DIR):
    """(train, heldout) texts: fortunes separated by a blank line, each ending with a newline."""
    items = fortunes(directory)
    random.Random(SEED).shuffle(items)
    total = sum(len(s) + 2 for s in items)
    train, held, n = [], [], 0
    for s in items:
        (train if n < total * (1 - HELDOUT_FRACTION) else held).append(s)
        n += len(s) + 2
    return "\n\n".join(train) + "\n", "\n\n".join(held) + "\n"


def encode(text):
    ids = []
    for ch in text:
        if ch == "\n":
            ids.append(EOS)
        else:
            b = ord(ch)
            ids.append(b - 32 if 32 <= b < 127 else UNK)
    return ids


def write_vocab(path):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for s in SYMBOLS:
            f.write(s + "\n")


def excerpt(text, limit):
    """The leading whole fortunes of text that fit in limit bytes."""
    cut = text.rfind("\n\n", 0, limit)
    return text[: cut + 1] if cut > 0 else text[:limit]


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description="Writes the held-out text (or its first whole fortunes).")
    p.add_argument("out")
    p.add_argument("--excerpt", type=int, help="at most this many bytes")
    a = p.parse_args()
    held = split_text()[1]
    with open(a.out, "w", encoding="ascii", newline="\n") as f:
        f.write(excerpt(held, a.excerpt) if a.excerpt else held)
