#!/usr/bin/env bash
# Runs every fuzz target of a fuzz build (make fuzz) over its corpus and seeds, then fuzzes it for
# SECONDS; prints a markdown table of executions and coverage per target and fails on a finding.
# Usage: tools/fuzz.sh BUILD_DIR SECONDS [TABLE.md]
# The corpus grows in BUILD_DIR/fuzz-corpus/TARGET across runs; a crashing input is kept in
# BUILD_DIR/fuzz-findings/ (reproduce: KVPOLICY_FUZZ_TARGET=T BUILD_DIR/kvpolicy_fuzz FILE).
set -euo pipefail
build=$1 seconds=$2 table=${3:-}
fuzzer=$build/kvpolicy_fuzz
seeds=$build/fuzz-seeds
rm -rf "$seeds"
"$build/kvpolicy_fuzz_seeds" "$seeds"
mkdir -p "$build/fuzz-findings" "$build/fuzz-logs"
export TMPDIR=${TMPDIR:-/tmp}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rows="| target | exercises | executions | executions/s | accepted | rejected with a message | edges | features | corpus | result |
|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
failed=0
while IFS=$'\t' read -r target covers; do
  corpus=$build/fuzz-corpus/$target
  log=$build/fuzz-logs/$target.log
  mkdir -p "$corpus"
  # -timeout: one input taking seconds is a hang (the quadratic tokenizer was one);
  # -rss_limit_mb/-malloc_limit_mb: an input that makes a reader allocate gigabytes is a finding.
  if KVPOLICY_FUZZ_TARGET=$target "$fuzzer" "$corpus" "$seeds/$target" -max_total_time="$seconds" \
      -max_len=4096 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-findings/$target-" >"$log" 2>&1; then
    result=clean
  else
    result="**finding** (see $log)"
    failed=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  line=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$line")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$line")
  corp=$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$line")
  read -r acc rej < <(sed -n 's/^kvpolicy-fuzz: accepted \([0-9]*\) rejected \([0-9]*\)/\1 \2/p' "$log" | tail -1) || true
  rate=$(( ${execs:-0} / (${secs:-0} > 0 ? ${secs:-1} : 1) ))
  rows+=$'\n'"| $target | $covers | ${execs:-?} | $rate | ${acc:-?} | ${rej:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $result |"
  echo "fuzz: $target: ${execs:-?} executions, ${cov:-?} edges, $result" >&2
done < <("$build/kvpolicy_fuzz_seeds" --list)
echo "$rows"
[ -n "$table" ] && echo "$rows" >"$table"
exit $failed
