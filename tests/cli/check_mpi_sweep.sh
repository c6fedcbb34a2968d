#!/usr/bin/env bash
# Distributed sweeps over MPI (ctest: CliMpiSweep): `mpirun -np 2` and `-np 3` simulate and
# serve sweeps write the rows one process writes, in its order (timing fields aside); a worker
# rank failing mid-sweep loses no finished row and `--resume` completes the file. Exits 77
# (ctest: skipped) when kvpolicy was built without MPI or mpirun is absent.
# Usage: check_mpi_sweep.sh KVPOLICY_BINARY HAVE_MPI(0|1)
set -uo pipefail
K=${1:?usage: check_mpi_sweep.sh KVPOLICY_BINARY HAVE_MPI}
source "$(dirname "$0")/lib.sh"
[[ ${2:-0} == 1 ]] || skip "kvpolicy was built without MPI (install libopenmpi-dev and rebuild)"
command -v mpirun > /dev/null || skip "no mpirun on PATH (Debian: openmpi-bin)"
# Under ASan: OpenMPI's own components leak at exit (strings of their parameter tables, in
# modules unloaded before the leak check), so the ranks run without the leak check alone.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Loopback TCP only (no shared-memory transport in containers), more ranks than cores allowed,
# no pinning (the machine is shared); root needs its own flag.
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo)
[[ $(id -u) -eq 0 ]] && MPI+=(--allow-run-as-root)

"$K" trace generate --kind conversation --params sessions=150 --out t.kvtrace > /dev/null || exit 1
SIM=(simulate -t t.kvtrace -p lru,fifo,s3fifo,belady -c 2%,4%,6%,8%,10%,20% --seed 3)
"$K" "${SIM[@]}" -j 1 --json single.jsonl > single.txt 2>&1 || fail "single: $(cat single.txt)"

for np in 1 2 3; do
  "${MPI[@]}" -np $np "$K" "${SIM[@]}" --json np$np.jsonl > np$np.txt 2>&1 ||
    fail "mpirun -np $np simulate: $(tail -20 np$np.txt)"
  python3 "$same_results" single.jsonl np$np.jsonl || fail "mpirun -np $np: rows differ from one process"
done
# Rank 0 prints the table once; the workers print nothing.
[[ $(grep -c '^trace ' np3.txt) -eq 1 ]] || fail "-np 3 printed the table $(grep -c '^trace ' np3.txt) times"
grep -q '^belady  *10%' np3.txt || fail "-np 3: no table row for belady at 10%"

# Serve mode on three ranks.
SERVE=(serve --generate conversation:sessions=60 -r round_robin,cache_aware -p lru,fifo
       -w 1,2 -c 5%,20% --seed 2)
"$K" "${SERVE[@]}" -j 1 --json serve.jsonl > serve.txt 2>&1 || fail "single serve: $(cat serve.txt)"
"${MPI[@]}" -np 3 "$K" "${SERVE[@]}" --json serve3.jsonl > serve3.txt 2>&1 ||
  fail "mpirun -np 3 serve: $(tail -20 serve3.txt)"
python3 "$same_results" serve.jsonl serve3.jsonl || fail "serve -np 3: rows differ from one process"

# mrc: its replays over three ranks; the curves, the target search and the JSON rows equal one
# process's to the byte (mrc's rows carry no timing).
MRC=(mrc -t t.kvtrace -p lru,fifo,s3fifo --points 5 --min 2% --target-hit 20%)
"$K" "${MRC[@]}" -j 1 --json mrc1.jsonl > mrc1.txt 2> mrc1.err || fail "single mrc: $(cat mrc1.err)"
"${MPI[@]}" -np 3 "$K" "${MRC[@]}" --json mrc3.jsonl > mrc3.txt 2> mrc3.err ||
  fail "mpirun -np 3 mrc: $(tail -20 mrc3.err)"
cmp -s mrc1.jsonl mrc3.jsonl || fail "mrc -np 3: JSON differs from one process's"
cmp -s mrc1.txt mrc3.txt || fail "mrc -np 3: output differs: $(diff mrc1.txt mrc3.txt | head)"

# A worker rank dies when handed its third cell: the rows of the two cells it finished were
# written when they arrived (it names the cells; cell i is row i of a --jobs 1 run), so none
# is lost; every row present is right; the cell it died on is missing (rank 0 never hands a
# cell out twice), and --resume (on 2 ranks) completes the file.
KVPOLICY_TEST_FAIL_AFTER_CELLS=2 "${MPI[@]}" -np 2 -x KVPOLICY_TEST_FAIL_AFTER_CELLS \
  "$K" "${SIM[@]}" --json failed.jsonl > failed.txt 2>&1 &&
  fail "the run with a failing rank exited 0"
lost=$(python3 - single.jsonl failed.jsonl failed.txt << 'EOF'
import json, re, sys
single = [json.loads(l) for l in open(sys.argv[1])]
complete = open(sys.argv[2]).read().split("\n")[:-1]  # a kill may cut the last line short
have = {(r["policy"], r["capacity_blocks"]) for r in map(json.loads, filter(str.strip, complete))}
m = re.search(r"rank 1: KVPOLICY_TEST_FAIL_AFTER_CELLS=2: failing now, after cells ([0-9,]+)",
              open(sys.argv[3]).read())
if not m:
    print("rank 1 did not fail as asked")
else:
    cells = [int(c) for c in m.group(1).split(",")]
    missing = [c for c in cells if (single[c]["policy"], single[c]["capacity_blocks"]) not in have]
    if len(cells) != 2 or missing:
        print(f"rank 1 finished cells {cells}, missing from the file: {missing}")
EOF
)
[[ -z $lost ]] || fail "$lost: $(tail -5 failed.txt)"
rows=$(wc -l < failed.jsonl)  # complete lines (a kill may cut the last one short)
((rows >= 2 && rows < 24)) || fail "after the failure the file has $rows rows (expected 2 to 23)"
head -n "$rows" failed.jsonl > complete.jsonl
python3 "$same_results" single.jsonl complete.jsonl --subset || fail "a row written before the failure is wrong"
"${MPI[@]}" -np 2 "$K" "${SIM[@]}" --json failed.jsonl --resume > resumed.txt 2>&1 ||
  fail "--resume after the failure: $(tail -20 resumed.txt)"
python3 "$same_results" single.jsonl failed.jsonl || fail "the resumed file differs from one process's"

# Flags that make no sense under mpirun are refused on every rank, and the job ends.
"${MPI[@]}" -np 2 "$K" "${SIM[@]}" --shard 0/2 > bad.txt 2>&1 && fail "--shard under mpirun was accepted"
grep -q "drop --shard" bad.txt || fail "--shard under mpirun: $(tail -5 bad.txt)"
"${MPI[@]}" -np 2 "$K" "${SIM[@]}" -j 2 > bad.txt 2>&1 && fail "--jobs 2 under mpirun was accepted"
grep -q "one rank per core" bad.txt || fail "--jobs 2 under mpirun: $(tail -5 bad.txt)"
# Commands that do not share their work are refused on several ranks.
"${MPI[@]}" -np 2 "$K" compare -t t.kvtrace -p lru -c 2% > bad.txt 2>&1 && fail "compare under mpirun was accepted"
grep -q "only simulate, serve and mrc share their work" bad.txt || fail "compare under mpirun: $(tail -5 bad.txt)"

finish "MPI sweep checks passed"
