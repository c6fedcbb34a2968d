#!/usr/bin/env bash
# Issue 38, item 1: LBGR's robust variant against the paper's and cache_aware, each with lru and
# rlt, on Mooncake and a conversation trace (Chatbot Arena, or ShareGPT) at 50/70/85/95 % of the
# cluster's capacity with 4 and 8 workers, and on route-study's GSP round-robin at 12 requests/s
# (the paper's 72x row). Capacity: the larger completed-request throughput of least_loaded+lru
# and cache_aware+lru under overload (open loop, arrivals rescaled to OVERLOAD x the trace's
# nominal rate, see capacity.txt); burst.txt, each trace's share of requests in the busiest tenth
# of its span. Resumable: a run whose JSON exists is skipped, and a sweep
# file is completed with --resume. Tables: python3 studies/lbgr_fix_tables.py OUT.
# Env: KVPOLICY (binary), KVPOLICY_DATA (traces), TRACES ("mooncake arena sharegpt"), WORKERS
# ("4 8"), LOADS ("50 70 85 95"), ROUTERS (the routers compared), JOBS (simulations at once),
# SEEDS ("1": serve's --seed, the routers' and RLT's; the tables average over the seeds run),
# JITTER (0; a share of the mean gap between arrivals: each seed is then a replicate whose
# arrivals are delayed by up to JITTER / rate seconds, serve's --arrival-jitter), GPU (serve's
# --gpu; empty: its default), CAPACITY (KV memory per GPU) and REQUEST_LOGS ("ROUTER/POLICY
# ROUTER/POLICY", e.g. "lbgr/rlt cache_aware/lru": each cell and seed also runs these two alone
# with serve --request-log, log-CELL-sN-1.csv and -2.csv, for lbgr_fix_tables.py --paired).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: studies/lbgr_fix.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
K=$(realpath "${KVPOLICY:-$src/build/kvpolicy}")
T=${KVPOLICY_DATA:-$src/../shared/traces}
TRACES=${TRACES:-"mooncake1 mooncake2 mooncake arena sharegpt"}
WORKERS=${WORKERS:-"4 8"}
LOADS=${LOADS:-"50 70 85 95"}
ROUTERS=${ROUTERS:-"cache_aware,lbgr:variant=paper,lbgr"}
JOBS=${JOBS:-2}
SEEDS=${SEEDS:-1}
CAPACITY=${CAPACITY:-40GB}  # KV memory per GPU (A100-80GB, the serve default)
JITTER=${JITTER:-0}
CLUSTER=(-c "$CAPACITY")
[[ -n ${GPU:-} ]] && CLUSTER+=(--gpu "$GPU")
cd "$out"
say() { echo "[lbgr_fix $(date -u +%H:%M:%S)] $*" >&2; }
run() { echo "+ $*" >&2; "$@" > /dev/null; }

# The traces: Mooncake as shipped, and its halves by time (its lines are in time order):
# mooncake1, the first 6,015 requests (where lbgr's defaults were tuned), and mooncake2, the
# other 6,016 (held out); conversations built once with `trace build`.
M=$T/mooncake-conversation/conversation_trace.jsonl
[[ $TRACES == *mooncake1* && ! -e mooncake1.jsonl ]] && head -n 6015 "$M" > mooncake1.jsonl
[[ $TRACES == *mooncake2* && ! -e mooncake2.jsonl ]] && tail -n +6016 "$M" > mooncake2.jsonl
# The conversations' halves by time (sharegpt1/2, arena1/2; not in the default TRACES): the
# built trace written as JSONL (one request a line, in time order), cut at its middle line;
# a conversation that spans the cut keeps its early turns in half 1 and its later ones in 2.
for c in sharegpt:sharegpt arena:chatbot-arena; do
  name=${c%%:*}
  [[ " $TRACES " == *" ${name}1 "* || " $TRACES " == *" ${name}2 "* ]] || continue
  [[ -e ${name}1.jsonl && -e ${name}2.jsonl ]] && continue
  case $name in
    sharegpt) input=$T/sharegpt-sample/sharegpt_sample_slim.jsonl ;;
    arena) input=$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl ;;
  esac
  run "$K" trace build --source "${c#*:}" -i "$input" -o "$name-all.jsonl"
  half=$(($(wc -l < "$name-all.jsonl") / 2))
  head -n "$half" "$name-all.jsonl" > "${name}1.jsonl"
  tail -n +$((half + 1)) "$name-all.jsonl" > "${name}2.jsonl"
done
# synth: the generated conversation workload (`trace generate -k conversation`, seed 11; synthN:
# seed N), which no tuning has seen (not in the default TRACES).
# loogle1, loogle2: LooGLE's documents with their questions, in two halves of 10 documents
# (longdep_qa and shortdep_qa; shortdep_cloze and longdep_summarization); not in the default.
for tr in $TRACES; do
  [[ $tr == loogle[12] && ! -e $tr.kvtrace ]] || continue
  case $tr in
    loogle1) files="longdep_qa shortdep_qa" ;;
    loogle2) files="shortdep_cloze longdep_summarization" ;;
  esac
  for f in $files; do cat "$T/loogle/$f.jsonl"; done > "$tr.jsonl"
  run "$K" trace build --source loogle -i "$tr.jsonl" -o "$tr.kvtrace"
done
for tr in $TRACES; do
  [[ $tr == synth* && ! -e $tr.kvtrace ]] || continue
  seed=${tr#synth}
  run "$K" trace generate -k conversation --seed "${seed:-11}" -o "$tr.kvtrace"
done
trace_args() {
  case $1 in
    synth* | loogle[12]) echo "--trace $out/$1.kvtrace" ;;
    mooncake) echo "--trace $M --format mooncake" ;;
    mooncake1 | mooncake2) echo "--trace $out/$1.jsonl --format mooncake" ;;
    sharegpt1 | sharegpt2 | arena1 | arena2) echo "--trace $out/$1.jsonl --format bailian" ;;
    arena) echo "--trace $out/arena.kvtrace" ;;
    sharegpt) echo "--trace $out/sharegpt.kvtrace" ;;
    *) echo "unknown trace $1" >&2; exit 1 ;;
  esac
}
[[ $TRACES == *arena* && ! -e arena.kvtrace ]] &&
  run "$K" trace build --source chatbot-arena \
    -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" -o arena.kvtrace
[[ $TRACES == *sharegpt* && ! -e sharegpt.kvtrace ]] &&
  run "$K" trace build --source sharegpt -i "$T/sharegpt-sample/sharegpt_sample_slim.jsonl" \
    -o sharegpt.kvtrace

# How bursty each trace is: the share of its requests in the busiest tenth of its span
# (`trace stats`), for the tables' split by the load in that tenth (lbgr_fix_tables.py --by-peak).
: > burst.txt.tmp
for tr in $TRACES; do
  # shellcheck disable=SC2046
  run "$K" trace stats $(trace_args "$tr") --json "burst-$tr.json"
  echo "$tr $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_tenth_share"])' "burst-$tr.json")" >> burst.txt.tmp
done
mv burst.txt.tmp burst.txt

# Capacity per trace and cluster size: arrivals at a rate far above what the cluster serves
# (over_rps x workers: more than twice the measured capacity per worker), so the backlog decides
# the throughput.
over_rps() { case $1 in mooncake* | loogle*) echo 4 ;; *) echo 200 ;; esac; }
for tr in $TRACES; do
  for w in $WORKERS; do
    f=cap-$tr-w$w.jsonl
    if [[ -s $f ]]; then say "skip $f (done)"; continue; fi
    say "capacity of $tr on $w workers"
    # shellcheck disable=SC2046
    run "$K" serve $(trace_args "$tr") -w "$w" "${CLUSTER[@]}" -r least_loaded,cache_aware \
      --policy lru --rate $(($(over_rps "$tr") * w)) -j "$JOBS" --json "$f.tmp"
    mv "$f.tmp" "$f"
  done
done
capacity() {  # completed requests per second, the better of the two routers
  python3 -c 'import json,sys; print(max(json.loads(l)["throughput_rps"] for l in open(sys.argv[1])))' "$1"
}
: > capacity.txt.tmp
for tr in $TRACES; do for w in $WORKERS; do
  echo "$tr $w $(capacity cap-$tr-w$w.jsonl)" >> capacity.txt.tmp
done; done
mv capacity.txt.tmp capacity.txt

for tr in $TRACES; do
  for w in $WORKERS; do
    cap=$(capacity cap-$tr-w$w.jsonl)
    for load in $LOADS; do
      rate=$(python3 -c "print(round($cap * $load / 100, 4))")
      jitter=$(python3 -c "print(f'{$JITTER / $rate:.6g}')")
      say "$tr, $w workers, load $load % = $rate req/s"
      for seed in $SEEDS; do
        f=run-$tr-w$w-l$load.jsonl
        [[ $seed == 1 ]] || f=run-$tr-w$w-l$load-s$seed.jsonl
        # shellcheck disable=SC2046
        run "$K" serve $(trace_args "$tr") -w "$w" "${CLUSTER[@]}" -r "$ROUTERS" --policy lru,rlt \
          --rate "$rate" --seed "$seed" --arrival-jitter "$jitter" -j "$JOBS" --json "$f" --resume
        i=0
        for pair in ${REQUEST_LOGS:-}; do
          i=$((i + 1))
          log=log-$tr-w$w-l$load-s$seed-$i.csv
          [[ -s $log ]] && continue
          # shellcheck disable=SC2046
          run "$K" serve $(trace_args "$tr") -w "$w" "${CLUSTER[@]}" -r "${pair%/*}" \
            --policy "${pair#*/}" --rate "$rate" --seed "$seed" --arrival-jitter "$jitter" \
            --request-log "$log"
        done
      done
    done
  done
done

# GSP round-robin as route-study builds it, the paper's setting (4 workers, 12 requests/s).
say "gsp-round_robin at 12 requests/s"
run "$K" study route --workloads gsp-round_robin,gsp-random --data "$T" --rate 12 \
  --router "$ROUTERS" --policy lru,rlt --jobs "$JOBS" --json gsp-rate12.jsonl --resume
say done
