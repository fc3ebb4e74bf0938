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
"""
import json
import os
import re
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
        if e["file"].endswith("tools/" + name):
            return e
    sys.exit(f"no compile command for tools/{name}")


def compiles(entry, text, tmp):
    probe = os.path.join(tmp, "probe.c")
    with open(probe, "w") as f:
        f.write(text)
    cmd = entry["command"].split()
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
    private = {"container": "txlm_file.h", "import": "pack.h", "text": "tokenizer.h", "engine": "session.h",
               "engine/vk": "kernels.h", "api": "txlm_api_error.h"}
    allowed = {"txlm/txlm.c": {"include"}, "pack/txlm_pack.c": {"include", "container", "import"}}
    with tempfile.TemporaryDirectory() as tmp:
        for tool, ok_dirs in allowed.items():
            entry = command_for(build, tool)
            if not compiles(entry, '#include "txlm.h"\nint probe(void) { return TXLM_OK; }\n', tmp):
                fails.append(f"tools/{tool}: a file including txlm.h does not compile")
            for folder, header in private.items():
                ok = compiles(entry, f'#include "{header}"\nint probe(void);\n', tmp)
                if ok != (folder in ok_dirs):
                    fails.append(f"tools/{tool}: a file including {folder}/{header} "
                                 f"{'compiles' if ok else 'does not compile'}")
    print("tools/txlm/txlm.c sees include/ only; tools/pack/txlm_pack.c include/, format/container/ and format/import/")
    return fails


def main():
    fails = check_library(*sys.argv[2:5]) if sys.argv[1] == "library" else check_tools(sys.argv[2])
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
