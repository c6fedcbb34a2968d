#!/usr/bin/env bash
# `kvpolicy serve` with memory tiers end to end (ctest: CliServeTiers): --dram, --ssd and
# --remote in several units, their policies, filters and links in every JSON row, hits per tier
# adding up to block_hits, and bad tier flags refused before any work.
# Usage: check_serve_tiers_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_serve_tiers_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=150 --out t.kvtrace > /dev/null || exit 1
"$K" serve -t t.kvtrace -c 400 -w 2 --dram 2 --dram-policy s3fifo --ssd 3000b --ssd-admit 'seen>=2' \
  --remote 1GB --remote-link rdma-400 --json tiers.jsonl > out.txt 2> err.txt ||
  fail "serve with tiers exited $?: $(cat err.txt)"
"$K" serve -t t.kvtrace -c 400 -w 2 --json hbm.jsonl > /dev/null 2> err.txt ||
  fail "serve without tiers exited $?: $(cat err.txt)"
python3 - tiers.jsonl hbm.jsonl << 'PY' || fail "tier rows inconsistent"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
h = json.loads(open(sys.argv[2]).readline())
tiers = r["tiers"]
assert [t["tier"] for t in tiers] == ["dram", "ssd", "remote"], tiers
dram, ssd, remote = tiers
assert dram["capacity_blocks"] == 800 and dram["policy"] == "s3fifo" and dram["link"] == "pcie4", dram
assert ssd["capacity_blocks"] == 3000 and ssd["admission"] == "seen>=2" and ssd["link"] == "nvme", ssd
assert remote["link"] == "rdma-400" and remote["capacity_blocks"] == int(1e9 // (16 * 131072)), remote
assert r["tier_placement"] == "exclusive" and r["tier_write"] == "write-back", r
assert r["hbm_hits"] + sum(t["hits"] for t in tiers) == r["block_hits"], r
assert dram["hits"] > 0 and r["transfer_seconds"] > 0, r
assert abs(ssd["bytes_written"] - ssd["blocks_written"] * 16 * 131072) < 1, ssd
# More memory never loses hits here, and HBM alone sees what HBM saw before.
assert r["block_hits"] > h["block_hits"], (r["block_hits"], h["block_hits"])
assert "tiers" not in h and "hbm_hits" not in h, h
PY
# --dram 0, as simulate's: no tier.
"$K" serve -t t.kvtrace -c 400 --dram 0 --json zero.jsonl > /dev/null 2>&1 || fail "--dram 0 exited $?"
grep -q '"tiers"' zero.jsonl && fail "--dram 0 made a tier: $(head -c 300 zero.jsonl)"
# Bad tier flags: one clear error each, before any work.
expect_error "--dram-admit" serve -t t.kvtrace -c 400 --dram 2 --dram-admit sometimes
expect_error "unknown link" serve -t t.kvtrace -c 400 --dram 2 --dram-link pcie9
expect_error "--ssd '-1'" serve -t t.kvtrace -c 400 --ssd -1
expect_error "write-through" serve -t t.kvtrace -c 400 --dram 2 --write write-through
expect_error "--placement" serve -t t.kvtrace -c 400 --dram 2 --placement sideways
expect_error "unknown policy" serve -t t.kvtrace -c 400 --dram 2 --dram-policy nosuch
# The minimum priority for offload: a system prompt hinted at 20 is dropped below 30, not demoted.
for min in "" 30; do
  "$K" serve -t t.kvtrace -c 400 --dram 2 --hint system-prompt=20:inf \
    ${min:+--offload-min-priority $min} --json "offload$min.jsonl" > /dev/null 2> err.txt ||
    fail "serve --offload-min-priority '$min' exited $?: $(cat err.txt)"
done
python3 - offload.jsonl offload30.jsonl << 'PY' || fail "offload rows inconsistent"
import json, sys
off = json.loads(open(sys.argv[1]).readline())
on = json.loads(open(sys.argv[2]).readline())
assert "offload_min_priority" not in off and "offload_skipped_priority" not in off, off
assert on["offload_min_priority"] == 30 and on["offload_skipped_priority"] > 0, on
# Every HBM victim is written to DRAM, refused, dropped for room or skipped for its priority.
d = on["tiers"][0]
assert d["blocks_written"] + d["rejected"] + d["full"] + on["offload_skipped_priority"] <= on["evictions"], on
PY
expect_error "--offload-min-priority" serve -t t.kvtrace -c 400 --dram 2 --offload-min-priority 101
expect_error "--offload-min-priority" serve -t t.kvtrace -c 400 --dram 2 --offload-min-priority x
expect_error "write-back" serve -t t.kvtrace -c 400 --dram 2 --placement inclusive \
  --write write-through --offload-min-priority 30
expect_error "--offload-min-priority" simulate -t t.kvtrace -p lru -c 0.1 --dram 1 \
  --offload-min-priority -3
finish "serve tiers CLI: ok"
