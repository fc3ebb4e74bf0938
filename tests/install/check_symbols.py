#!/usr/bin/env python3
"""debian/libtxlm0.symbols (or libtxlm-glib-1.0-0.symbols) against what the library exports, and
debian/changelog's version against meson.build's.

usage: check_symbols.py LIBRARY_SO SYMBOLS_FILE CHANGELOG PROJECT_VERSION [--node NODE] [--write]

NODE is the version node every symbol must carry: TXLM_0 (api/libtxlm.map,
the default) for libtxlm, Base (unversioned, exported by visibility) for
libtxlm-glib-1.0 (debian/libtxlm-glib-1.0-0.symbols).

The symbols file lists every symbol libtxlm.so.0 exports, with the version
of txlm that first had it; the package build (dh_makeshlibs -- -c4) fails
on any difference, so this check says it first, in the test suite, with the
exact line to add or remove. --write rewrites the file to match (kept
lines keep their version, a new symbol gets PROJECT_VERSION):
    meson compile -C build debian-symbols
A symbol that disappears is an ABI break (docs/packaging.md, "ABI and
SONAME"): the check says so rather than only "remove the line".
"""
import os
import re
import subprocess
import sys

HEADER = re.compile(r"^(\S+) (\S+) #MINVER#$")
ENTRY = re.compile(r"^ (\S+@\S+) (\S+)$")


def exported(so, node):
    """name@VERSION of every symbol the library defines in its dynamic table."""
    out = subprocess.run(["nm", "-D", "--defined-only", so], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        name = line.split()[-1]
        # nm writes name@@NODE for a symbol's default version; dpkg's symbols file name@NODE
        name = name.replace("@@", "@")
        if name == node:
            name = f"{node}@{node}"  # the version node's own definition, as dpkg-gensymbols names it
        names.add(name if "@" in name else name + "@Base")
    return names


def soname(so):
    out = subprocess.run(["readelf", "-d", so], check=True, capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def read_symbols(path):
    header, meta, entries = None, [], {}
    for n, line in enumerate(open(path).read().splitlines(), 1):
        if n == 1:
            if not HEADER.match(line):
                sys.exit(f"{path}:1: expected 'LIBRARY_SONAME PACKAGE #MINVER#', got {line!r}")
            header = line
        elif line.startswith("* ") or line.startswith("#"):
            meta.append(line)
        elif ENTRY.match(line):
            sym, ver = ENTRY.match(line).groups()
            entries[sym] = ver
        elif line.strip():
            sys.exit(f"{path}:{n}: not a symbol line (' name@VERSION_NODE MIN_VERSION'): {line!r}")
    return header, meta, entries


def changelog_version(path):
    first = open(path).readline()
    m = re.match(r"^\S+ \(([^)]+)\)", first)
    return m.group(1) if m else None


def main(argv):
    write = "--write" in argv
    argv = [a for a in argv if a != "--write"]
    node = "TXLM_0"  # api/libtxlm.map
    if "--node" in argv:
        i = argv.index("--node")
        node = argv[i + 1]
        del argv[i:i + 2]
    so, symbols_file, changelog, version = argv
    lib = os.path.basename(so)
    fails = []
    header, meta, listed = read_symbols(symbols_file)
    lib_soname = soname(so)
    if header.split()[0] != lib_soname:
        fails.append(f"{symbols_file} is for {header.split()[0]}, the library's SONAME is {lib_soname}")
    have = exported(so, node)
    added = sorted(have - set(listed))
    gone = sorted(set(listed) - have)
    if write:
        entries = {s: listed.get(s, version) for s in have}
        with open(symbols_file, "w") as f:
            f.write("\n".join([header] + meta + [f" {s} {entries[s]}" for s in sorted(entries)]) + "\n")
        print(f"{symbols_file}: {len(entries)} symbols, {len(added)} added, {len(gone)} removed")
        added = gone = []
    for s in added:
        fails.append(f"{lib} exports {s}, which {symbols_file} lacks: add the line ' {s} {version}' "
                     f"(or run: meson compile -C BUILD debian-symbols)")
    for s in gone:
        fails.append(f"{symbols_file} lists {s} (since {listed[s]}), which {lib} no longer exports: "
                     "removing a released function breaks the ABI and needs a new SONAME (docs/packaging.md); "
                     "if it was never released, remove its line")
    for s in have:
        if not s.endswith("@" + node):
            fails.append(f"{s} is not under the version node {node}")
    pkg = changelog_version(changelog)
    if pkg is None or not (pkg == version or pkg.startswith(version + "-") or pkg.startswith(version + "+")):
        fails.append(f"debian/changelog's version is {pkg}, meson.build's {version}: add a changelog entry "
                     f"(dch -v {version})")
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print(f"{len(have)} symbols of {lib_soname}, all in {symbols_file} and nothing more; "
              f"debian/changelog at {pkg}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
