#!/usr/bin/env python3
"""Writes tests/text/sacremoses_classes.txt: the character classes that
sacremoses (the version HuggingFace's TransfoXLTokenizer uses, 0.1.1) gives
each code point, as ranges, for test_wt103_sweep.

usage: gen_sacremoses_classes.py SACREMOSES_SOURCE_DIR > sacremoses_classes.txt

SACREMOSES_SOURCE_DIR is the `sacremoses/` folder of a checkout of the
tagged release. Nothing in it is imported or run: the character lists are
read as sacremoses' Perluniprops.chars() reads them (every character of the
UTF-8 file, newlines included), the virama and nukta lists of indic.py and
the CJK ranges of util.py are read with ast.literal_eval, and \\s and \\d
are those of this Python's `re` (sacremoses and HuggingFace use `re`, not
the `regex` module, for every rule txlm implements).
"""
import ast
import re
import sys
import unicodedata

MAX_CP = 0x10FFFF


def chars(src, name):
    with open(f"{src}/data/perluniprops/{name}.txt", "rb") as f:
        return {ord(c) for c in f.read().decode("utf-8")}


def module_lists(path):
    """Top-level NAME = [literal, ...] assignments of a Python file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def cjk_ranges(path):
    """CJKChars.ranges of util.py: the named (start, end) tuples in list order."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CJKChars")
    named, order = {}, None
    for node in cls.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name == "ranges":
            order = [e.id for e in node.value.elts]
        else:
            named[name] = ast.literal_eval(node.value)
    return [named[n] for n in order]


def is_cjk(c, ranges):
    # util.is_cjk: the first range whose end is above c decides, ends excluded
    for start, end in ranges:
        if c < end:
            return c > start
    return False


def ranges_of(members):
    out, start, prev = [], None, None
    for c in sorted(members):
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            out.append((start, prev))
            start = prev = c
    if start is not None:
        out.append((start, prev))
    return out


def main():
    src = sys.argv[1]
    indic = module_lists(f"{src}/indic.py")
    marks = {ord(c) for c in indic["VIRAMAS"] + indic["NUKTAS"]}
    alpha, alnum = chars(src, "IsAlpha"), chars(src, "IsAlnum")
    cjk = cjk_ranges(f"{src}/util.py")
    every = range(0, MAX_CP + 1)
    classes = [
        # MosesTokenizer adds the viramas and nuktas to its IsAlnum and IsAlpha
        ("t_alnum", alnum | marks, "tokenizer IsAlnum + VIRAMAS + NUKTAS (padding, dash splits)"),
        ("t_alpha", alpha | marks, "tokenizer IsAlpha + VIRAMAS + NUKTAS (apostrophes, prefixes)"),
        ("d_alpha", alpha, "detokenizer IsAlpha (English contractions)"),
        # the newline the list files end with never reaches a rule: lines are cut at it
        ("number", chars(src, "IsN") - {10}, "IsN (commas, apostrophes)"),
        ("lower", chars(src, "IsLower"), "IsLower (the next word of a non-breaking prefix)"),
        ("currency", chars(src, "IsSc") - {10}, "IsSc (detokenizer: no space after)"),
        ("digit", {c for c in every if not 0xD800 <= c < 0xE000 and re.match(r"\d", chr(c))}, "re \\d"),
        ("space", {c for c in every if not 0xD800 <= c < 0xE000 and re.match(r"\s", chr(c))}, "re \\s, str.split()"),
        ("cjk", {c for c in every if is_cjk(c, cjk)}, "util.is_cjk (detokenizer)"),
    ]
    print("# The character classes of sacremoses 0.1.1 as HuggingFace's TransfoXLTokenizer uses them,")
    print("# written by tests/text/gen_sacremoses_classes.py from sacremoses' data/perluniprops lists,")
    print(f"# indic.py, util.py and Python {sys.version.split()[0]}'s re (Unicode {unicodedata.unidata_version}).")
    print("# One line per range: CLASS FIRST LAST (hex, inclusive).")
    for name, members, what in classes:
        print(f"# {name}: {what}, {len(members)} code points")
        for lo, hi in ranges_of(members):
            print(f"{name} {lo:X} {hi:X}")


if __name__ == "__main__":
    main()
