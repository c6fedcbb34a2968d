#!/usr/bin/env bash
# Issue 38, item 5: every online router x {lru, rlt, auto} on Mooncake, Chatbot Arena and
# ShareGPT conversations, LooGLE and GSP (round-robin, the RLT paper's order) at three loads
# (50/80/95 % of the cluster's measured capacity), 4 and 16 workers: median and P99 TTFT, hit
# rate and the gap closed to the offline router, through `route-bound` (one run per trace,
# workers, load and policy; round_robin and offline_bound with the same policy). Every worker is
# an L40 with 200k tokens of KV for Llama-3.1-8B, the route study's setting (section (b)).
# Capacity: the larger completed-request throughput of least_loaded+lru and cache_aware+lru
# with arrivals far above it (as studies/lbgr_fix.sh). Resumable: a finished JSON is skipped.
# Tables: python3 studies/route_grid_tables.py OUT.
# Env: KVPOLICY (binary), KVPOLICY_DATA (traces), TRACES, WORKERS, LOADS, POLICIES, JOBS (capacity runs at once),
# SEEDS ("1") and JITTER (0; a share of the mean gap between arrivals): with JITTER > 0 each seed is a
# replicate (route-bound's --arrival-jitter, docs/serve.md) and the tables average over them; give
# each JITTER its own OUT.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: studies/route_grid.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
K=$(realpath "${KVPOLICY:-$src/build/kvpolicy}")
T=${KVPOLICY_DATA:-$src/../shared/traces}
TRACES=${TRACES:-"mooncake arena sharegpt loogle gsp"}
WORKERS=${WORKERS:-"4 16"}
LOADS=${LOADS:-"50 80 95"}
POLICIES=${POLICIES:-"lru rlt auto"}
JOBS=${JOBS:-2}
SEEDS=${SEEDS:-1}
JITTER=${JITTER:-0}
CLUSTER=(--gpu l40 -c 200000t)
cd "$out"
say() { echo "[route_grid $(date -u +%H:%M:%S)] $*" >&2; }
run() { echo "+ $*" >&2; "$@" > /dev/null; }

# The traces, built once: the conversations with `trace build`, LooGLE from all four of its
# files (20 documents; fewer cannot load 16 workers), GSP as `trace generate` makes it.
M=$T/mooncake-conversation/conversation_trace.jsonl
build() {  # NAME SOURCE INPUT
  [[ -e $1.kvtrace ]] || run "$K" trace build --source "$2" -i "$3" -o "$1.kvtrace"
}
for tr in $TRACES; do
  case $tr in
    mooncake) ;;
    arena) build arena chatbot-arena "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" ;;
    sharegpt) build sharegpt sharegpt "$T/sharegpt-sample/sharegpt_sample_slim.jsonl" ;;
    loogle)
      [[ -e loogle.jsonl ]] || cat "$T"/loogle/{longdep_qa,shortdep_qa,shortdep_cloze,longdep_summarization}.jsonl > loogle.jsonl
      build loogle loogle loogle.jsonl ;;
    gsp) [[ -e gsp.kvtrace ]] || run "$K" trace generate -k gsp --params order=round_robin -o gsp.kvtrace ;;
    *) echo "unknown trace $tr" >&2; exit 1 ;;
  esac
done
trace_args() { if [[ $1 == mooncake ]]; then echo "-t $M -f mooncake"; else echo "-t $out/$1.kvtrace"; fi; }

# Capacity per trace and cluster size: arrivals at over_rps x workers, more than twice what a
# worker serves, so the backlog decides the throughput.
over_rps() { case $1 in mooncake | loogle) echo 4 ;; *) echo 200 ;; esac; }
capacity() {
  python3 -c 'import json,sys; print(max(json.loads(l)["throughput_rps"] for l in open(sys.argv[1])))' "$1"
}
for tr in $TRACES; do
  for w in $WORKERS; do
    f=cap-$tr-w$w.jsonl
    [[ -s $f ]] && continue
    say "capacity of $tr on $w workers"
    # shellcheck disable=SC2046
    run "$K" serve $(trace_args "$tr") -w "$w" \
      "${CLUSTER[@]}" -r least_loaded,cache_aware --policy lru \
      --rate $(($(over_rps "$tr") * w)) -j "$JOBS" --json "$f.tmp"
    mv "$f.tmp" "$f"
  done
done

for tr in $TRACES; do
  for w in $WORKERS; do
    cap=$(capacity "cap-$tr-w$w.jsonl")
    for load in $LOADS; do
      rate=$(python3 -c "print(round($cap * $load / 100, 4))")
      jitter=$(python3 -c "print(f'{$JITTER / $rate:.6g}')")
      for p in $POLICIES; do
        for seed in $SEEDS; do
          f=grid-$tr-w$w-l$load-$p.jsonl
          [[ $seed == 1 ]] || f=grid-$tr-w$w-l$load-$p-s$seed.jsonl
          [[ -s $f ]] && continue
          say "$tr, $w workers, load $load % = $rate req/s, $p, seed $seed"
          # shellcheck disable=SC2046
          run "$K" route-bound $(trace_args "$tr") -w "$w" "${CLUSTER[@]}" -r online -p "$p" \
            --rate "$rate" --seed "$seed" --arrival-jitter "$jitter" --regret-sample 0 --json "$f.tmp"
          mv "$f.tmp" "$f"
        done
      done
    done
  done
done
say done
