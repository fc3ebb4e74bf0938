#!/usr/bin/env bash
# Prints a markdown table of the last run.sh run of each target, from
# tests/fuzz/out/TARGET.log and tests/fuzz/out/TARGET/corpus.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)/out
echo "| target | seconds | executions | exec/s | edges | corpus files | corpus bytes | crashes |"
echo "|---|---|---|---|---|---|---|---|"
for log in "$out"/*.log; do
  t=$(basename "$log" .log)
  [ -s "$log" ] || continue
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  files=$(find "$out/$t/corpus" -type f | wc -l)
  bytes=$(du -sb "$out/$t/corpus" | cut -f1)
  crashes=$(find "$out/$t" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o -maxdepth 1 -name 'timeout-*' | wc -l)
  echo "| $t | ${secs:-?} | ${execs:-?} | ${rate:-?} | ${cov:-?} | $files | $bytes | $crashes |"
done
