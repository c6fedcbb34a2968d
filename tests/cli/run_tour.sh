#!/usr/bin/env bash
# Runs README.md's "How much KV cache does my traffic need?" and "A tour of the CLI" blocks,
# command by command, so the README stays runnable
# (ctest: ReadmeTour). Usage: run_tour.sh BUILD_DIR [README]. The block's paths are rewritten:
# build/kvpolicy -> BUILD_DIR/kvpolicy, ../shared/traces -> $KVPOLICY_DATA, scripts/, studies/
# and tools/ -> the source tree's; each command runs in a fresh temporary directory, and `bench`
# gets --quick.
# Stops at the first command that fails; exits 0 with a message when the traces are absent.
set -euo pipefail

build_dir=$(cd "${1:?usage: run_tour.sh BUILD_DIR [README]}" && pwd)
readme=$(realpath "${2:-$(dirname "$0")/../../README.md}")
skip_code=0  # ReadmeTour has no skip code: a tour without the traces passes
source "$(dirname "$0")/lib.sh"
source_dir=$src
need_data mooncake-conversation/conversation_trace.jsonl chatbot-arena/chatbot_arena_conversations_raw.jsonl
data=$(cd "$data" && pwd)

# The blocks: the first ```sh fence after each of the two headings, with continued lines joined.
mapfile -t commands < <(awk '
  /^## (How much KV cache does my traffic need|A tour of the CLI)/ { tour = 1; next }
  tour && /^```sh/ { inside = 1; next }
  inside && /^```/ { inside = 0; tour = 0; next }
  inside {
    if (line != "") sub(/^[ \t]+/, "")
    if (sub(/\\[ \t]*$/, "")) { line = line $0; next }
    print line $0; line = ""
  }' "$readme")
if ((${#commands[@]} == 0)); then
  echo "no sh block under '## A tour of the CLI' or the sizing heading in $readme" >&2
  exit 1
fi

tour_start=$SECONDS
for i in "${!commands[@]}"; do
  cmd=${commands[$i]}
  cmd=${cmd//build\/kvpolicy/\"$build_dir\"/kvpolicy}
  cmd=${cmd//..\/shared\/traces/\"$data\"}
  for dir in scripts studies tools; do cmd=${cmd//$dir\//\"$source_dir\"/$dir/}; done
  # The full benchmark takes minutes; --quick runs the same tables on smaller workloads.
  if [[ $cmd == *"/kvpolicy bench "* ]]; then cmd=${cmd/ bench / bench --quick }; fi
  start=$SECONDS
  if ! eval "$cmd" >"$work/out.log" 2>&1; then
    echo "FAILED (README tour command $((i + 1))): ${commands[$i]}"
    echo "ran as: $cmd"
    tail -n 40 "$work/out.log"
    exit 1
  fi
  printf '%4ds  %s\n' $((SECONDS - start)) "${commands[$i]}"
done
echo "README tour: ${#commands[@]} commands passed in $((SECONDS - tour_start)) s"
