#!/usr/bin/env python3
"""The library boundaries the build is meant to enforce (docs/architecture.md).

library LIBTXLM_SO IMPORT_A INCLUDE_DIR
    libtxlm.so exports only functions declared in include/, every one under
    the version node TXLM_0 of api/libtxlm.map (nm -D: the dynamic symbol
    table holds nothing else but the node itself), has the SONAME
    libtxlm.so.0, depends on no cJSON, and holds no importer code (nm of its
    symbol table); the importer names searched for are checked to exist in
    the import library, so the search cannot pass by matching nothing.
tools BUILD_DIR
    Compiles probes with the exact command line of tools/txlm/txlm.c (and of
    tools/pack/txlm_pack.c) from compile_commands.json: a public header compiles,
    every library's private header fails.
glib LIBTXLM_GLIB_SO LIBTXLM_SO LIBTXLM_A GLIB_DIR BUILD_DIR
    txlm-glib is a layer above libtxlm, as the tools are: it links
    libtxlm.so (NEEDED) and holds none of its code (no symbol of libtxlm.a
    defined in it), exports only the functions its headers declare, none
    of them a name libtxlm exports (which would interpose one on the
    other), and glib/txlm-session.c's command line sees include/ and no
    library's private header.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

IMPORTER = re.compile(r"^(txlm_(pickle|safetensors|zip_|torch|checkpoint|pack_|config_|vocab_load_txt|vocab_parse_txt"
                      r"|synthetic|export_hf|ckpt_|cluster_order|inv_freq_check|check_finite)\w*|cJSON\w*)$")


# The SONAME and the symbols' version node (docs/packaging.md, "ABI and SONAME").
SONAME = "libtxlm.so.0"
VERSION_NODE = "TXLM_0"


def symbols(path, *args):
    out = subprocess.run(["nm", *args, path], check=True, capture_output=True, text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if len(line.split()) >= 2]


def check_library(so, import_a, include_dir):
    fails = []
    needed = subprocess.run(["readelf", "-d", so], check=True, capture_output=True, text=True).stdout
    if re.search(r"NEEDED.*cjson", needed, re.I):
        fails.append("readelf -d: libtxlm.so depends on cJSON")
    declared = set()
    for h in os.listdir(include_dir):
        if h.endswith(".h"):
            declared |= set(re.findall(r"TXLM_API[^;(]*?\b(txlm_\w+)\s*\(", open(os.path.join(include_dir, h)).read()))
    soname = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", needed)
    if not soname or soname.group(1) != SONAME:
        fails.append(f"readelf -d: the SONAME is {soname and soname.group(1)}, not {SONAME}")
    exported = []
    for versioned in symbols(so, "-D", "--defined-only"):
        # name@@NODE: the symbol's default version (api/libtxlm.map)
        name, _, node = versioned.partition("@@")
        if name == VERSION_NODE and node in ("", VERSION_NODE):
            continue  # the version node's own definition
        exported.append(name)
        if name not in declared:
            fails.append(f"nm -D: {versioned} is exported but not declared in include/")
        elif node != VERSION_NODE:
            fails.append(f"nm -D: {versioned} is not under the version node {VERSION_NODE} (api/libtxlm.map)")
    for s in exported + symbols(so, "--defined-only"):
        if IMPORTER.match(s):
            fails.append(f"nm: importer symbol {s} in libtxlm.so")
    in_import = [s for s in symbols(import_a, "--defined-only") if IMPORTER.match(s)]
    if len(in_import) < 20:
        fails.append(f"the importer pattern matches only {len(in_import)} symbols of {import_a}")
    print(f"{SONAME}: {len(exported)} exported symbols, all declared in include/, all under {VERSION_NODE}; no cJSON; "
          f"{len(in_import)} importer symbols in the import library, none in libtxlm.so")
    return fails


def command_for(build, name):
    for e in json.load(open(os.path.join(build, "compile_commands.json"))):
        if e["file"].endswith("/" + name):
            return e
    sys.exit(f"no compile command for {name}")


def compiles(entry, text, tmp):
    probe = os.path.join(tmp, "probe.c")
    with open(probe, "w") as f:
        f.write(text)
    cmd = shlex.split(entry["command"])
    # the target's own flags, the probe instead of the source, no output
    i = cmd.index("-o")
    del cmd[i:i + 2]
    cmd = [c for c in cmd if c not in ("-MD",)]
    for flag in ("-MQ", "-MF"):
        while flag in cmd:
            j = cmd.index(flag)
            del cmd[j:j + 2]
    cmd[cmd.index("-c") + 1] = probe
    cmd.append("-fsyntax-only")
    return subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True).returncode == 0


def check_tools(build):
    fails = []
    allowed = {"tools/txlm/txlm.c": {"include"}, "tools/pack/txlm_pack.c": {"include", "container", "import"}}
    fails = check_includes(build, allowed)
    print("tools/txlm/txlm.c sees include/ only; tools/pack/txlm_pack.c include/, format/container/ and format/import/")
    return fails


PRIVATE = {"container": "txlm_file.h", "import": "pack.h", "text": "tokenizer.h", "engine": "session.h",
           "engine/vk": "kernels.h", "api": "txlm_api_error.h"}


def check_includes(build, allowed, private=PRIVATE, public=('#include "txlm.h"\nint probe(void) { return TXLM_OK; }\n',)):
    """Each source's own command line: the public headers (probes) compile, a
    library's private header only where allowed."""
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        for tool, ok_dirs in allowed.items():
            entry = command_for(build, tool)
            for probe in public:
                if not compiles(entry, probe, tmp):
                    fails.append(f"{tool}: a file of {probe.splitlines()[0]} does not compile")
            for folder, header in private.items():
                ok = compiles(entry, f'#include "{header}"\nint probe(void);\n', tmp)
                if ok != (folder in ok_dirs):
                    fails.append(f"{tool}: a file including {folder}/{header} "
                                 f"{'compiles' if ok else 'does not compile'}")
    return fails


def glib_declared(glib_dir):
    """The functions txlm-glib's public headers declare (TXLM_GLIB_API), with
    the _get_type of each G_DECLARE_FINAL_TYPE."""
    declared = set()
    for h in os.listdir(glib_dir):
        if not h.endswith(".h") or "private" in h or h in ("txlm-job.h", "txlm-utf8-out.h"):
            continue
        text = open(os.path.join(glib_dir, h)).read()
        declared |= set(re.findall(r"TXLM_GLIB_API[^;(]*?\b(txlm_\w+)\s*\(", text))
        declared |= {m + "_get_type" for m in re.findall(r"G_DECLARE_FINAL_TYPE\s*\(\s*\w+\s*,\s*(\w+)", text)}
    return declared


def check_glib(so, libtxlm, libtxlm_a, glib_dir, build):
    fails = []
    needed = subprocess.run(["readelf", "-d", so], check=True, capture_output=True, text=True).stdout
    if not re.search(r"NEEDED.*\[libtxlm\.so\.0\]", needed):
        fails.append("readelf -d: libtxlm-glib does not link libtxlm.so.0")
    declared = glib_declared(glib_dir)
    exported = symbols(so, "-D", "--defined-only")
    for s in exported:
        if s not in declared:
            fails.append(f"nm -D: {s} is exported but not declared in glib/'s public headers")
    missing = sorted(d for d in declared if d not in exported)
    if missing:
        fails.append(f"declared in glib/'s headers but not exported: {', '.join(missing)}")
    txlm_exports = set(symbols(libtxlm, "-D", "--defined-only"))
    for s in sorted(txlm_exports & set(exported)):
        fails.append(f"{s} is exported by both libtxlm and libtxlm-glib")
    engine = {s for s in symbols(libtxlm_a, "--defined-only") if s.startswith("txlm_")}
    for s in sorted(engine & set(symbols(so, "--defined-only"))):
        fails.append(f"nm: {s}, libtxlm's own code, is inside libtxlm-glib")
    if len(engine) < 100:
        fails.append(f"only {len(engine)} txlm_ symbols in {libtxlm_a}: the search would find nothing")
    fails += check_includes(build, {"glib/txlm-session.c": {"include"}})
    print(f"libtxlm-glib: links libtxlm.so.0; {len(exported)} exported symbols, all declared in glib/'s headers, "
          f"none of libtxlm's {len(txlm_exports)}; none of libtxlm.a's {len(engine)} txlm_ symbols inside; "
          "glib/txlm-session.c sees include/ only")
    return fails


GLIB_PRIVATE = {"glib": "txlm-glib-private.h", "glib/session": "txlm-session-private.h", "glib/job": "txlm-job.h",
                "glib/utf8": "txlm-utf8-out.h"}


def check_app(exe, libtxlm_a, glib_so, build):
    fails = []
    needed = subprocess.run(["readelf", "-d", exe], check=True, capture_output=True, text=True).stdout
    if not re.search(r"NEEDED.*\[libtxlm-glib-1\.0\.so\.0\]", needed):
        fails.append("readelf -d: txlm-write does not link libtxlm-glib-1.0.so.0")
    inside = {s for s in symbols(exe, "--defined-only") if s.startswith("txlm_")}
    engine = {s for s in symbols(libtxlm_a, "--defined-only") if s.startswith("txlm_")}
    glib = set(symbols(glib_so, "-D", "--defined-only"))
    for s in sorted(inside & (engine | glib)):
        fails.append(f"nm: {s}, a library's own code, is inside txlm-write")
    if len(engine) < 100 or len(glib) < 50:
        fails.append(f"only {len(engine)} and {len(glib)} symbols in the libraries: the search would find nothing")
    public = ('#include "txlm.h"\nint probe(void) { return TXLM_OK; }\n',
              '#include <txlm-glib.h>\nGType probe(void) { return TXLM_TYPE_SESSION; }\n')
    fails += check_includes(build, {"apps/write/main.c": {"include"}}, {**PRIVATE, **GLIB_PRIVATE}, public)
    print(f"txlm-write: links libtxlm-glib-1.0.so.0, none of the libraries' {len(engine | glib)} txlm_ symbols inside; "
          "its sources see include/ and <txlm-glib.h>, no private header")
    return fails


def main():
    if sys.argv[1] == "library":
        fails = check_library(*sys.argv[2:5])
    elif sys.argv[1] == "glib":
        fails = check_glib(*sys.argv[2:7])
    elif sys.argv[1] == "app":
        fails = check_app(*sys.argv[2:6])
    else:
        fails = check_tools(sys.argv[2])
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
