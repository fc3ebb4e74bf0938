#!/usr/bin/env bash
# Fuzzes one target: tests/fuzz/run.sh TARGET SECONDS
# Builds the libFuzzer targets with clang, ASan and UBSan (every UB report
# aborts) into build-fuzz/ (a separate meson build directory, configured
# once), then runs TARGET for SECONDS. New interesting inputs accumulate in
# tests/fuzz/out/TARGET/corpus (not committed), crashes in
# tests/fuzz/out/TARGET/ (copy them to tests/fuzz/regress/TARGET/ once fixed),
# and the log, with libFuzzer's final statistics, in tests/fuzz/out/TARGET.log.
# Extra arguments after SECONDS go to libFuzzer (e.g. -jobs=2).
# Everything runs inside main, which bash reads whole before running it:
# editing this file during a long run cannot change the running copy.
main() {
  set -euo pipefail
  if [ $# -lt 2 ]; then
    echo "usage: $0 TARGET SECONDS [libFuzzer options]" >&2
    exit 2
  fi
  target=$1 secs=$2
  shift 2
  here=$(cd "$(dirname "$0")" && pwd)
  root=$(cd "$here/../.." && pwd)
  build=${FUZZ_BUILD:-$root/build-fuzz}
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" "$root" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized \
      -Dvalidation=disabled \
      -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" > /dev/null
  fi
  flock "$build" meson compile -C "$build" "fuzz_${target}_libfuzzer" > /dev/null
  out=$root/tests/fuzz/out/$target
  mkdir -p "$out/corpus"
  seeds=()
  for d in "$here/corpus/$target" "$here/regress/$target"; do [ -d "$d" ] && seeds+=("$d"); done
  dict=()
  [ -f "$here/$target.dict" ] && dict=(-dict="$here/$target.dict")
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  log=$root/tests/fuzz/out/$target.log
  set +e
  # A private copy: a rebuild of build-fuzz/ during a long run must not touch it.
  cp "$build/tests/fuzz/fuzz_${target}_libfuzzer" "$out/fuzzer"
  nice -n "${FUZZ_NICE:-15}" "$out/fuzzer" -max_total_time="$secs" -print_final_stats=1 \
    -rss_limit_mb=2048 -artifact_prefix="$out/" "${dict[@]}" "$@" "$out/corpus" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  set -e
  grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::|SUMMARY|==[0-9]+==ERROR)' "$log" || true
  exit $rc
}
main "$@"
exit
