#!/usr/bin/env bash
# Reruns the studies of docs/results/ on the current build and regenerates their tables, so the
# pages never drift from the code.
#
#   studies/rerun_results.sh [--update] OUT_DIR [SECTION ...]     (default: every section)
#   studies/rerun_results.sh --splice OUT_DIR     (only the --update step, from an earlier run)
#   studies/rerun_results.sh --list
#
# Each section runs its commands (JSON and traces into OUT_DIR/SECTION/) and writes its markdown
# tables to OUT_DIR/md/NAME.md. With --update, every block of docs/results/*.md between
#   <!-- generated: NAME -->   and   <!-- end generated: NAME -->
# is replaced by OUT_DIR/md/NAME.md, headed by the command and commit that produced it. Text
# around the blocks (what the numbers mean) is still written by hand: reread it after a rerun.
# K (the binary, default build/kvpolicy) and T (the traces, default ../shared/traces) may be
# set; the section scripts use --jobs 1, so the whole run takes about an hour on 2 cores.
set -euo pipefail
# Braces: bash reads the whole script before running it, so editing it mid-run is harmless.
{
src=$(cd "$(dirname "$0")/.." && pwd)
K=${K:-$src/build/kvpolicy}
T=${T:-$src/../shared/traces}
export K T
MC=$T/mooncake-conversation/conversation_trace.jsonl

# name: what it regenerates (a study of docs/results/)
SECTIONS=(
  "hitrates-mooncake: hit rates on the Mooncake conversation trace"
  "mrc: sizing, hit rate and TTFT against GB of KV (studies/mrc_results.sh)"
  "hitrates-builtin: hit rates on the built-in workload"
  "gsp: LRU's worst case, GSP in round-robin and random order"
  "bench: replay throughput, memory per block, eviction latency, load speed (kvpolicy bench)"
  "microbench: data-structure micro-benchmarks (kvpolicy_microbench, its own build in OUT_DIR)"
  "gbm-report: the GBM predictor's quality and cost in the cache (predictor-report)"
  "robustness: LARU/FPB/HF under noisy predictions (studies/robustness_results.sh)"
  "predictor: the reuse predictor against LRU and Belady (studies/predictor_results.sh)"
  "tail: T-LRU vs LRU and Threshold-LRU (studies/tail_results.sh)"
  "characterization: trace characterization (trace stats --deep)"
  "wa-study: WA vs classic policies with a DRAM tier (study wa)"
  "serve: serve mode, routers and the RLT curve (studies/serve_results.sh, studies/rlt_curve.sh)"
  "lpc: LPC, its classifier and the guard (studies/lpc_results.sh)"
  "lpc-cross: LPC across datasets: per-turn transfer, calibration, decay, drift (studies/lpc_cross.sh)"
  "route-grid: every router x {lru, rlt, auto} on five traces, three loads, 4 and 16 workers (studies/route_grid.sh)"
)

usage() {
  echo "usage: $0 [--update] OUT_DIR [SECTION ...]; sections:" >&2
  printf '  %s\n' "${SECTIONS[@]}" >&2
  exit 2
}
update=0 splice_only=0
[[ ${1:-} == --list ]] && { printf '%s\n' "${SECTIONS[@]%%:*}"; exit 0; }
[[ ${1:-} == --update ]] && { update=1; shift; }
[[ ${1:-} == --splice ]] && { update=1 splice_only=1; shift; }
[[ $# -ge 1 ]] || usage
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift
wanted=("$@")
[[ ${#wanted[@]} -gt 0 || $splice_only -eq 1 ]] || wanted=("${SECTIONS[@]%%:*}")
for s in "${wanted[@]+"${wanted[@]}"}"; do
  printf '%s\n' "${SECTIONS[@]%%:*}" | grep -qx -- "$s" || { echo "unknown section: $s" >&2; usage; }
done
if ((!splice_only)); then
  [[ -x $K ]] || { echo "no kvpolicy binary at $K (make build, or set K)" >&2; exit 1; }
  [[ -e $MC ]] || { echo "no traces at $T (set T)" >&2; exit 1; }
fi
mkdir -p "$out/md"
tables() { python3 "$src/studies/results_tables.py" "$@"; }
run() { echo "+ $*" >&2; "$@" > /dev/null; }
# md NAME: stdin becomes OUT_DIR/md/NAME.md
md() { cat > "$out/md/$1.md"; }

section_hitrates-mooncake() {
  run "$K" compare -t "$MC" --jobs 1 --json mooncake.jsonl
  tables hitrates mooncake.jsonl --gap | md hitrates-mooncake
}

section_mrc() {
  echo "+ studies/mrc_results.sh $PWD $out/figures" >&2
  "$src/studies/mrc_results.sh" "$PWD" "$out/figures" | md mrc
}

section_hitrates-builtin() {
  run "$K" compare --jobs 1 --json builtin.jsonl
  tables hitrates builtin.jsonl --gap | md hitrates-builtin
}

section_gsp() {
  local files=()
  for order in round_robin random; do
    run "$K" trace generate --kind gsp --params order=$order --out gsp-$order.kvtrace
    run "$K" compare -t gsp-$order.kvtrace -p lru,rlt,belady -c 0.05,0.1,0.2 --jobs 1 \
      --json gsp-$order.jsonl
    files+=("$order=gsp-$order.jsonl")
  done
  tables gsp "${files[@]}" | md gsp
}

section_bench() {
  run "$K" bench --data "$T" --repeat 3 --json bench.json
  for t in throughput memory latency load serve; do
    python3 "$src/studies/bench_tables.py" bench.json --only $t | md bench-$t
  done
}

section_microbench() {
  run cmake -S "$src" -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVPOLICY_BENCH=ON
  run cmake --build build-bench --target kvpolicy_microbench
  run build-bench/kvpolicy_microbench --benchmark_min_time=0.3 --benchmark_format=json \
    --benchmark_out=micro.json
  tables microbench micro.json | md microbench
}

section_gbm-report() {
  echo "+ $K predictor-report -t $MC -c 0.02,0.05,0.1 --json predictor-report.jsonl" >&2
  "$K" predictor-report -t "$MC" -c 0.02,0.05,0.1 --json predictor-report.jsonl > report.txt
  {
    grep -E '^(GBM on the whole|inference)' report.txt | sed 's/^/    /'
    echo
    tables predictor-report predictor-report.jsonl
  } | md gbm-report
}

# A section script of its own: SCRIPT prints its markdown on stdout.
script_section() {
  local name=$1 script=$2
  [[ -x $src/studies/$script ]] || { echo "missing studies/$script" >&2; return 1; }
  echo "+ studies/$script $PWD" >&2
  "$src/studies/$script" "$PWD" | md "$name"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "studies/$script failed" >&2; return 1; }
}
section_robustness() { script_section robustness robustness_results.sh; }
section_predictor() { script_section predictor predictor_results.sh; }
section_tail() { script_section tail tail_results.sh; }
section_route-grid() {
  echo "+ studies/route_grid.sh $PWD" >&2
  KVPOLICY=$K KVPOLICY_DATA=$T JOBS=1 "$src/studies/route_grid.sh" "$PWD"
  python3 "$src/studies/route_grid_tables.py" "$PWD" summary | md route-grid
  python3 "$src/studies/route_grid_tables.py" "$PWD" full | md route-grid-full
}

# The mixed text-built trace of the characterization and WA sections (Alibaba schema).
mixed_trace() {
  [[ -s mixed.jsonl ]] && return 0
  local parts=() s
  for s in chatbot-arena:$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl \
    sharegpt:$T/sharegpt-sample/sharegpt_sample_slim.jsonl \
    loogle:$T/loogle/shortdep_qa.jsonl loogle:$T/loogle/longdep_qa.jsonl; do
    local part=part-$(basename "${s#*:}" .jsonl).jsonl
    run "$K" trace build --skip-bad-lines --source "${s%%:*}" --input "${s#*:}" --out "$part"
    parts+=("$part")
  done
  run python3 "$src/studies/merge_bailian.py" mixed.jsonl "${parts[@]}"
}

section_characterization() {
  mixed_trace
  run "$K" trace generate --kind conversation --seed 1 --out conv.kvtrace
  run "$K" trace stats --deep --trace "$MC" --sessions infer --json mc.json --csv-dir mc-csv
  run "$K" trace stats --deep --trace mixed.jsonl --format bailian --json mixed.json \
    --csv-dir mixed-csv
  run "$K" trace stats --deep --trace conv.kvtrace --json conv.json
  tables characterization Mooncake=mc.json "mixed text=mixed.json" \
    "synthetic conv.=conv.json" | md characterization
  plot --json mc.json --prefix mooncake
  plot --json mixed.json --prefix mixed-text
}
# The figures of docs/figures, into OUT_DIR/figures (copied to docs/figures by --update).
plot() { run python3 "$src/studies/plot_characterization.py" --out-dir "$out/figures" "$@"; }

section_wa-study() {
  mixed_trace
  local policies=lru,fifo,lfu,s3fifo,gdsf:cost=depth,wa,wa:signal=0,wa:life=none,wa:categories=single,wa:life=p90_all
  local mc=() mixed=() h
  for h in 60GB 0.01 0.02 0.05; do
    run "$K" study wa --trace "$MC" --sessions infer -c $h --dram-ratios 0,1,2,3,4 \
      -p $policies --json mc-hbm$h.jsonl
    mc+=("$(hbm_label $h)=mc-hbm$h.jsonl")
  done
  for h in 0.01 0.03 0.1; do
    run "$K" study wa --trace mixed.jsonl --format bailian -c $h --dram-ratios 0,1,2,3,4 \
      -p $policies --json mixed-hbm$h.jsonl
    mixed+=("$(hbm_label $h)=mixed-hbm$h.jsonl")
  done
  tables wa-study "${mc[@]}" | md wa-study-mooncake
  tables wa-study "${mixed[@]}" | md wa-study-mixed
  plot --study mc-hbm60GB.jsonl --prefix mooncake-hbm60GB
  plot --study mc-hbm0.01.jsonl --prefix mooncake-hbm1pct
  plot --study mixed-hbm0.03.jsonl --prefix mixed-text-hbm3pct
}
hbm_label() { python3 -c "import sys; h=sys.argv[1]; print(h if h.endswith('B') else f'{float(h)*100:g} %')" "$1"; }

section_serve() {
  script_section serve serve_results.sh
  script_section serve-rlt-curve rlt_curve.sh
}

section_lpc() {
  echo "+ studies/lpc_results.sh $PWD $out/figures" >&2
  KVPOLICY=$K KVPOLICY_DATA=$T "$src/studies/lpc_results.sh" "$PWD" "$out/figures" | md lpc
}

section_lpc-cross() {
  echo "+ studies/lpc_cross.sh $PWD" >&2
  KVPOLICY=$K KVPOLICY_DATA=$T "$src/studies/lpc_cross.sh" "$PWD" | md lpc-cross
}

commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The binary's code: uncommitted changes there make the figures unattributable.
dirty=$(git -C "$src" status --porcelain -- src include CMakeLists.txt cmake 2>/dev/null | head -c1 || true)
[[ -z $dirty ]] || commit="$commit (with uncommitted changes)"
for s in "${wanted[@]+"${wanted[@]}"}"; do
  rm -rf "${out:?}/$s"  # a fresh run: outputs opened for appending would mix two runs
  mkdir -p "$out/$s"
  start=$SECONDS
  (cd "$out/$s" && "section_$s")
  echo "$s: $((SECONDS - start)) s" >&2
  echo "$s $commit" > "$out/md/$s.commit"
done

if ((update)); then
  if compgen -G "$out/figures/*.png" > /dev/null; then cp "$out"/figures/*.png "$src/docs/figures/"; fi
  python3 - "$src/docs/results" "$out/md" <<'EOF'
import glob, os, re, sys
doc_dir, md_dir = sys.argv[1:]
# NAME.md comes from the section whose name starts it (bench-memory from bench, ...).
commits = {}
for f in os.listdir(md_dir):
    if f.endswith(".commit"):
        commits[f[:-7]] = open(os.path.join(md_dir, f)).read().split(" ", 1)[1].strip()
def commit_of(name):
    best = max((s for s in commits if name == s or name.startswith(s + "-")), key=len, default=None)
    return commits.get(best, "unknown")
pattern = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end generated: \2 -->)", re.S)
done = []
def fill(m):
    path = os.path.join(md_dir, m.group(2) + ".md")
    if not os.path.exists(path):
        return m.group(0)
    done.append(m.group(2))
    body = open(path).read().strip("\n")
    section = max((s for s in commits if m.group(2) == s or m.group(2).startswith(s + "-")),
                  key=len, default=m.group(2))
    head = (f"*Regenerated by `studies/rerun_results.sh OUT {section}`, Release build of commit "
            f"{commit_of(m.group(2))}.*\n\n")
    return m.group(1) + head + body + "\n" + m.group(4)
# Each study's file holds its own blocks; a file with none is left untouched.
for doc in sorted(glob.glob(os.path.join(doc_dir, "*.md"))):
    text = open(doc).read()
    filled = pattern.sub(fill, text)
    if filled != text:
        open(doc, "w").write(filled)
print("updated in docs/results/:", " ".join(done) or "nothing", file=sys.stderr)
EOF
fi
exit
}
