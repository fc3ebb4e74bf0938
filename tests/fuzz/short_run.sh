#!/usr/bin/env bash
# A few seconds of libFuzzer on one target, as a test: NAME SOURCE_DIR [BINARY [WHY]].
# Without BINARY (or with an empty one), uses (and first rebuilds) the one
# tests/fuzz/run.sh built in build-fuzz/, and is skipped (status 77) when
# there is none, printing WHY the build has no libFuzzer targets of its own.
# New inputs go to a temporary directory; a crashing input is copied to
# tests/fuzz/out/NAME/.
set -euo pipefail
name=$1 dir=$2 bin=${3:-} why=${4:-the suite was not built with clang}
root=$(cd "$dir/../.." && pwd)
if [ -z "$bin" ]; then
  bin=$root/build-fuzz/tests/fuzz/fuzz_${name}_libfuzzer
  # Bring it up to date with the sources first.
  # (one compile at a time: meson test runs these tests in parallel)
  [ ! -f "$root/build-fuzz/build.ninja" ] ||
    flock "$root/build-fuzz" meson compile -C "$root/build-fuzz" "fuzz_${name}_libfuzzer" > /dev/null
fi
if [ ! -x "$bin" ]; then
  echo "no libFuzzer build of $name ($why; tests/fuzz/run.sh makes one in build-fuzz/): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus"
seeds=()
for d in "$dir/corpus/$name" "$dir/regress/$name"; do [ -d "$d" ] && seeds+=("$d"); done
set +e
"$bin" -max_total_time="${FUZZ_SHORT_SECONDS:-5}" -artifact_prefix="$tmp/" -print_final_stats=1 \
  "$tmp/corpus" "${seeds[@]}" 2>"$tmp/log"
rc=$?
set -e
grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|SUMMARY)' "$tmp/log" || true
if [ $rc -ne 0 ]; then
  tail -n 40 "$tmp/log"
  mkdir -p "$root/tests/fuzz/out/$name"
  cp "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-* "$root/tests/fuzz/out/$name/" 2>/dev/null || true
  echo "fuzz_$name failed; inputs kept in tests/fuzz/out/$name/"
fi
exit $rc
