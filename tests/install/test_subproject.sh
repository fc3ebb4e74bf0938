#!/usr/bin/env bash
# txlm as a meson subproject (docs/embedding.md, "As a meson subproject"):
# a program's own meson.build asks for dependency('txlm', fallback:
# ['txlm', 'txlm_dep']) with this checkout linked as subprojects/txlm;
# --force-fallback-for=txlm builds txlm inside the program's build even
# where a txlm.pc is installed. Checks that the subproject configures only
# the library (no txlm, txlm-pack, benchmark or test program, none of their
# dependencies), that the program links libtxlm from the subproject, and
# runs it on the demo model.
# usage: test_subproject.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
app="$tmp/app"
mkdir -p "$app/subprojects"
ln -s "$src" "$app/subprojects/txlm"
cp "$src/examples/embed.c" "$app/embed.c"
cat > "$app/meson.build" <<'EOF'
project('embed', 'c', meson_version : '>=1.0.0')
txlm_dep = dependency('txlm', fallback : ['txlm', 'txlm_dep'])
executable('embed', 'embed.c', dependencies : txlm_dep)
EOF
meson setup "$app/build" "$app" --force-fallback-for=txlm > "$tmp/setup.log" 2>&1 ||
    { echo "FAIL: meson setup of the program"; cat "$tmp/setup.log"; exit 1; }
# what the subproject configured: its executables and the dependencies it looked up
python3 - "$app/build" <<'PY'
import json, subprocess, sys
def introspect(what):
    return json.loads(subprocess.run(["meson", "introspect", sys.argv[1], what], check=True,
                                     capture_output=True, text=True).stdout)
targets = introspect("--targets")
exes = sorted(t["name"] for t in targets if t["type"] == "executable" and t["subproject"] == "txlm")
libs = sorted(t["name"] for t in targets if t["type"] == "shared library" and t["subproject"] == "txlm")
# gen_wt103_classes: the build-time generator of the character table (text/meson.build)
fails = [f"the subproject builds the program {e}" for e in exes if e != "gen_wt103_classes"]
if libs != ["txlm"]:
    fails.append(f"the subproject's shared libraries are {libs}, not ['txlm']")
deps = {d["name"] for d in introspect("--dependencies")}
for name in ("libcjson", "snappy", "libmicrohttpd", "libedit"):
    if name in deps:
        fails.append(f"the subproject looks up {name}, which only txlm's commands need")
for f in fails:
    print("FAIL:", f)
print(f"subproject txlm: executables {exes}, shared libraries {libs}; dependencies {sorted(deps)}")
sys.exit(1 if fails else 0)
PY
meson compile -C "$app/build" > "$tmp/compile.log" 2>&1 ||
    { echo "FAIL: meson compile of the program"; tail -n 40 "$tmp/compile.log"; exit 1; }
linked=$(env -u LD_LIBRARY_PATH ldd "$app/build/embed" | grep libtxlm)
[[ $linked == *"libtxlm.so.0 => $app/build/subprojects/txlm/libtxlm.so.0 "* ]] ||
    { echo "FAIL: the program does not link the subproject's libtxlm: $linked"; exit 1; }
out=$(printf 'The secret of life is\nLove\n' | env -u LD_LIBRARY_PATH "$app/build/embed" "$src/models/demo.txlm" 3)
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c '^> ')" -ge 2 ] || { echo "FAIL: two prompts, not two answers"; exit 1; }
echo "a program with txlm as its meson subproject builds and runs"
