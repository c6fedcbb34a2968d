#!/usr/bin/env bash
# Measures docs/results/mpi.md, distributed sweeps over MPI: one simulate sweep (6 policies x
# 4 capacities on the Mooncake conversation trace repeated 18 times with fresh keys, bench's
# workload (a)) as one process on 1 and 2 threads and under `mpirun -np 1` and `-np 2`: wall
# time, configurations per second, peak RSS per rank (/usr/bin/time), the coordinator's summary
# line; then fits the model of studies/scaling_model.py and projects 4 to 64 ranks.
# Usage: KVPOLICY_DATA=../shared/traces scaling_results.sh BUILD_DIR OUT_DIR
set -euo pipefail
K=$(cd "${1:?usage: scaling_results.sh BUILD_DIR OUT_DIR}" && pwd)/kvpolicy
out=${2:?usage: scaling_results.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
T=${KVPOLICY_DATA:?set KVPOLICY_DATA to the traces directory}/mooncake-conversation/conversation_trace.jsonl
mkdir -p "$out"
cd "$out"
[[ -s x18.kvtrace ]] || "$K" trace convert --trace "$T" --to native --repeat 18 --out x18.kvtrace
SIM=(simulate -t x18.kvtrace -p lru,fifo,lfu,sieve,s3fifo,belady -c 1%,2%,5%,10% --seed 1)
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo)
[[ $(id -u) -eq 0 ]] && MPI+=(--allow-run-as-root)
FMT='rss_kb=%M wall_s=%e user_s=%U sys_s=%S'

echo "commit $(git -C "$here" rev-parse --short HEAD); $(uptime)"
"$K" trace stats -t x18.kvtrace > stats.txt
echo "trace load: $(grep '^load:' stats.txt)"
for j in 1 2; do
  /usr/bin/time -f "$FMT" -o plain-j$j.time "$K" "${SIM[@]}" -j $j --json plain-j$j.jsonl \
    > plain-j$j.out 2> plain-j$j.err
  echo "plain -j $j: $(cat plain-j$j.time); load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
for np in 1 2; do
  # Each rank under its own /usr/bin/time, the whole job under another.
  /usr/bin/time -f "$FMT" -o np$np.time "${MPI[@]}" -np $np sh -c \
    "/usr/bin/time -f '$FMT' -o np$np.rank\$OMPI_COMM_WORLD_RANK.time $K $(printf '%q ' "${SIM[@]}") --json np$np.jsonl" \
    > np$np.out 2> np$np.err
  echo "mpirun -np $np: $(cat np$np.time); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for r in $(seq 0 $((np - 1))); do echo "  rank $r: $(cat np$np.rank$r.time)"; done
  grep 'configurations on' np$np.err
done
python3 "$here/../scripts/same_results.py" \
  plain-j1.jsonl np2.jsonl && echo "np2 rows = plain -j 1 rows"
python3 "$here/scaling_model.py" .
