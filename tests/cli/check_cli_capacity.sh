#!/usr/bin/env bash
# One capacity, one rounding (ctest: CliCapacity): `-c 100%` is every unique block of the trace
# in every command that takes a capacity and in Python's simulate (it was one block where a share
# became the bare number 1.0); shares above 100 % are read; "2%" is the same block count in
# simulate and study lpc (one rounded, the other floored). Usage: check_cli_capacity.sh
# KVPOLICY_BINARY [PYTHONPATH of the built module]
set -uo pipefail
K=${1:?usage: check_cli_capacity.sh KVPOLICY_BINARY [PYTHON_MODULE_DIR]}
PYDIR=${2:-}
source "$(dirname "$0")/lib.sh"
# 2,240 unique blocks: 2 % of them is 44.8, so rounding and flooring differ.
"$K" trace generate --kind zipf --params requests=400,prefixes=40 --out t.kvtrace > /dev/null ||
  exit 1
"$K" trace stats -t t.kvtrace --json stats.json > /dev/null 2>&1
unique=$(python3 -c 'import json; print(json.load(open("stats.json"))["unique_blocks"])')
[[ $unique =~ ^[0-9]+$ ]] || fail_now "trace stats --json gave no unique_blocks"

# blocks_in FILE: the capacity_blocks of every JSON row (objects nested anywhere), sorted, unique.
blocks_in() {
  python3 - "$1" <<'EOF'
import json, sys
found = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "capacity_blocks" and isinstance(x, int):
                found.add(x)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
text = open(sys.argv[1]).read()
try:
    walk(json.loads(text))
except ValueError:
    for line in text.splitlines():
        if line.strip():
            walk(json.loads(line))
print(" ".join(str(b) for b in sorted(found)))
EOF
}

# expect_blocks "ARGS" WANT: the command's --json rows all name WANT blocks.
expect_blocks() {
  local args=$1 want=$2
  rm -f out.json
  # shellcheck disable=SC2086
  "$K" $args --json out.json > /dev/null 2> err.txt || {
    fail "kvpolicy $args -> $(tail -1 err.txt)"
    return
  }
  local got
  got=$(blocks_in out.json)
  [[ $got == "$want" ]] || fail "kvpolicy $args: capacity_blocks $got, expected $want"
}

for cmd in "simulate -p lru" "compare -p lru" "study tail --xi 100" "study robustness -p lru -n 0" \
  "study wa -p lru --dram-ratios 0" "study lpc -p lru,belady --baseline lru --oracle belady" \
  "serve -p lru" "predictor-report -p laru --mode sync"; do
  expect_blocks "$cmd -t t.kvtrace -c 100%" "$unique"
done
# mrc's curve ends at --max: 100% is the trace's unique blocks.
rm -f out.json
"$K" mrc -t t.kvtrace -p lru --points 3 --max 100% --json out.json > /dev/null 2> err.txt ||
  fail "mrc --max 100% -> $(tail -1 err.txt)"
[[ $(blocks_in out.json) == *" $unique" ]] || fail "mrc --max 100%: capacities $(blocks_in out.json), expected up to $unique"

# Above the trace: 150 % is half as many blocks again, and an infinite cache's hit rate.
want=$(((unique * 3 + 1) / 2))
expect_blocks "simulate -p lru -t t.kvtrace -c 150%" "$want"

# One rounding: 2 % is the same blocks in simulate and study lpc (nearest block).
expect_blocks "simulate -p lru -t t.kvtrace -c 2%" "$(python3 -c "print(int($unique * 0.02 + 0.5))")"
expect_blocks "study lpc -p lru,belady --baseline lru --oracle belady -t t.kvtrace -c 2%" \
  "$(python3 -c "print(int($unique * 0.02 + 0.5))")"

# Python's simulate reads the same capacities.
if [[ -n $PYDIR && -f $PYDIR/kvpolicy/__init__.py ]]; then  # the built package, not plot_mrc.py alone
  PYTHONPATH=$PYDIR /usr/bin/python3 - t.kvtrace "$unique" <<'EOF' || fail "Python simulate: 100% is not every unique block"
import sys, kvpolicy
rows = kvpolicy.simulate(sys.argv[1], ["lru"], ["100%", "150%"])
got = [r["capacity_blocks"] for r in rows]
unique = int(sys.argv[2])
assert got == [unique, (unique * 3 + 1) // 2], (got, unique)
assert rows[0]["capacity_fraction"] == 1.0, rows[0]
EOF
fi

finish "-c 100% is every unique block ($unique) in every command; 150% and 2% agree"
