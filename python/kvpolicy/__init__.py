"""kvpolicy from Python: the prefix-cache simulator, an online KV cache, and an eviction-policy
adapter that lets any kvpolicy policy decide evictions in a Python engine's radix cache.

    import kvpolicy
    trace = kvpolicy.load_trace("conversation_trace.jsonl")
    rows = kvpolicy.simulate(trace, ["lru", "s3fifo", "belady"], ["2%", "40GB"])
    rows = kvpolicy.serve(trace, policies=["lru", "s3fifo"], routers=["cache_aware"], workers=2)
    rows = kvpolicy.mrc(trace, ["lru", "s3fifo"], points=20, target_hit="30%")
    findings = kvpolicy.doctor("conversation_trace.jsonl")   # why the hit rate is low

simulate, serve, mrc, size, import_trace, doctor and recommend call the same application layer as
the command line and return its records: simulate/serve/mrc/size one dict per row of
`kvpolicy simulate|serve|mrc|size --json`, doctor and recommend the object their --json writes.

See docs/api.md for the whole API, its thread-safety and the cost of a call.
"""

import contextlib
import json

from ._kvpolicy import (  # noqa: F401  (re-exported)
    ConfigError,
    Error,
    InputError,
    Inserted,
    Trace,
    is_offline,
    load_trace,
    policy_names,
    generate_trace,
    _KvCache,
    _PolicyTree,
    _doctor,
    _import_trace,
    _leaderboard,
    _lpc_decay,
    _mrc,
    _policies,
    _recommend,
    _routers,
    _route_tune,
    _serve,
    _size,
    _simulate,
    __version__,
)

__all__ = [
    "Cache",
    "ConfigError",
    "doctor",
    "Error",
    "EvictionPolicy",
    "generate_trace",
    "InputError",
    "Inserted",
    "Trace",
    "is_offline",
    "import_trace",
    "leaderboard",
    "lpc_decay",
    "load_trace",
    "mrc",
    "policies",
    "policy_names",
    "recommend",
    "route_tune",
    "routers",
    "serve",
    "simulate",
    "size",
]


def _as_list(value):
    return [value] if isinstance(value, (str, int, float)) else list(value)


def simulate(trace, policies=("lru",), capacities=("5%",), *, seed=1, jobs=0, dram=0.0,
             dram_policy="lru", model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto",
             xi_ms=200.0, slo_ms=200.0):
    """Replays `trace` (a Trace, or a path for load_trace) through every policy at every
    capacity, on `jobs` threads (0 = every core), with the GIL released.

    Policies are specs as on the command line ("lru", "laru:predictor=noisy,p=0.2"); capacities
    are blocks (4096), shares of the trace's unique blocks (0.05 or "5%"), tokens ("10000t") or KV
    memory ("40GB", through model and kv_dtype). Returns one dict per (policy, capacity), with the
    fields of `kvpolicy simulate --json` (docs/formats.md): a list of records pandas takes as is.
    """
    if isinstance(trace, str):
        trace = load_trace(trace)
    lines = _simulate(trace, [str(p) for p in _as_list(policies)],
                      [str(c) for c in _as_list(capacities)], seed, jobs, float(dram),
                      dram_policy, model, gpu, kv_dtype, float(xi_ms), float(slo_ms))
    return [json.loads(line) for line in lines]


def _trace(trace):
    return load_trace(trace) if isinstance(trace, str) else trace


def serve(trace, policies=("lru",), capacities=("0.1",), *, routers=("round_robin",), workers=(1,),
          model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto", cost_params="", tp=1, rate=0.0,
          time_scale=1.0, clients=0, think_time_s=0.0, max_batch_tokens=8192, max_running=256,
          cache_outputs=True, slo_ms=200.0, seed=1, jobs=0, allocation="chunked",
          prefill_workers=0, decode_workers=0, decode_router="least_loaded",
          kv_link_gb_per_s=50.0, kv_link_latency_us=10.0, decode_cache=True,
          kv_transfer="after-prefill", tiers=None, stepped=False, arrival_jitter_s=0.0):
    """Runs `trace` (a Trace, or a path for load_trace) through a simulated serving cluster for
    every (capacity, workers, router, policy), as `kvpolicy serve` does, with the GIL released.

    Capacities are KV memory per GPU (a worker has `tp` times it), in any form `-c` takes
    (blocks, "10%", "10000t", "40GB"); routers and policies are specs as on the command line
    (the sets online, offline, all expand). The other keywords are serve's flags (rate for
    --rate, clients for --clients, cache_outputs=False for --no-cache-outputs, allocation,
    prefill_workers / decode_workers / decode_router for P/D, kv_link_gb_per_s and
    kv_link_latency_us for --kv-link-bandwidth / --kv-link-latency, decode_cache=False for
    --decode-cache off, kv_transfer for --kv-transfer, stepped=True for
    --stepped, arrival_jitter_s for --arrival-jitter, ...). Returns one
    dict per configuration with the fields of `kvpolicy serve --json` (docs/formats.md).
    tiers: memory tiers as serve's flags with underscores, e.g. dict(dram="2",
    dram_policy="s3fifo", ssd="64GB", ssd_admit="seen>=2", placement="exclusive",
    overlap_transfers=True, offload_min_priority=35) (docs/serve.md, "Memory tiers").
    """
    lines = _serve(_trace(trace), [str(r) for r in _as_list(routers)],
                   [str(p) for p in _as_list(policies)], [str(w) for w in _as_list(workers)],
                   [str(c) for c in _as_list(capacities)],
                   dict(model=model, gpu=gpu, kv_dtype=kv_dtype, cost_params=cost_params,
                        tp=int(tp), rate=float(rate), time_scale=float(time_scale),
                        clients=int(clients), think_time_s=float(think_time_s),
                        max_batch_tokens=int(max_batch_tokens), max_running=int(max_running),
                        cache_outputs=bool(cache_outputs), slo_ms=float(slo_ms), seed=int(seed),
                        jobs=int(jobs), allocation=str(allocation),
                        prefill_workers=int(prefill_workers), decode_workers=int(decode_workers),
                        decode_router=str(decode_router),
                        kv_link_gb_per_s=float(kv_link_gb_per_s),
                        kv_link_latency_us=float(kv_link_latency_us),
                        decode_cache=bool(decode_cache), kv_transfer=str(kv_transfer),
                        tiers=dict(tiers or {}), stepped=bool(stepped),
                        arrival_jitter_s=float(arrival_jitter_s)))
    return [json.loads(line) for line in lines]


def route_tune(trace, router, *, policy="lru", workers=4, capacity="0.1", objective="ttft-p50",
               budget=24, search="grid", split=0.5, space="", json_path=None, resume=False,
               model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto", cost_params="", tp=1,
               rate=0.0, time_scale=1.0, max_batch_tokens=8192, max_running=256,
               cache_outputs=True, slo_ms=200.0, seed=1, jobs=0, allocation="chunked",
               replicates=1, arrival_jitter_s=0.0):
    """Searches `router`'s parameters in serve mode as `kvpolicy route-tune` does: tuned on the
    first `split` of the trace by arrival time, the default and the tuned setting judged on the
    rest, and the configuration to paste (docs/serve.md, "Autotuning a router: route-tune");
    replicates and arrival_jitter_s as --replicates and --arrival-jitter. Returns the report `route-tune --json` writes, as a dict; json_path also writes it there
    (its runs stream to json_path + ".runs" meanwhile, which resume=True reads).
    """
    line = _route_tune(_trace(trace), str(router), str(policy), str(workers), str(capacity),
                       dict(model=model, gpu=gpu, kv_dtype=kv_dtype, cost_params=cost_params,
                            tp=int(tp), rate=float(rate), time_scale=float(time_scale), clients=0,
                            think_time_s=0.0, max_batch_tokens=int(max_batch_tokens),
                            max_running=int(max_running), cache_outputs=bool(cache_outputs),
                            slo_ms=float(slo_ms), seed=int(seed), jobs=int(jobs),
                            allocation=str(allocation), prefill_workers=0, decode_workers=0,
                            decode_router="least_loaded", kv_link_gb_per_s=50.0,
                            kv_link_latency_us=10.0, decode_cache=True,
                            kv_transfer="after-prefill", tiers={}, stepped=False,
                            arrival_jitter_s=float(arrival_jitter_s)),
                       dict(objective=str(objective), search=str(search), budget=int(budget),
                            split=float(split), space=str(space), json=str(json_path or ""),
                            resume=bool(resume), replicates=int(replicates)))
    return json.loads(line)


def size(trace, *, model="llama-3.1-8b", gpu="a100-80gb", tp=1, max_tp=8, workers=(1, 2, 4, 8),
         router="cache_aware", policy="lru", target_hit=None, target_token_hit=None,
         slo_ttft_p50_ms=0.0, slo_ttft_p90_ms=0.0, slo_ttft_p99_ms=0.0,
         gpu_memory_utilization=0.9, reserve_gb=2.0, tolerance=0.02, rate=0.0, kv_dtype="auto",
         cost_params="", max_batch_tokens=8192, max_running=256, cache_outputs=True, seed=1,
         jobs=0, allocation="chunked", prefill_workers=0, decode_workers=0,
         decode_router="least_loaded", kv_link_gb_per_s=50.0, kv_link_latency_us=10.0,
         decode_cache=True, kv_transfer="after-prefill"):
    """Sizes a deployment of `trace` (a Trace, or a path for load_trace) as `kvpolicy size`
    does, with the GIL released: per worker count, the smallest KV memory per replica whose
    serve-mode run meets every target given (target_hit / target_token_hit: "30%" or 0.3;
    slo_ttft_*_ms: > 0), the run at the GPU's full KV memory, and the replay cache's answer.
    workers: counts, or a string "1,2,4,8" / "1-8". A replica's KV memory is tp x the GPU's HBM x
    gpu_memory_utilization - the weights - tp x reserve_gb; an answer more than that is searched
    again at the tp (up to max_tp) that holds it. Returns one dict per row of
    `kvpolicy size --json` (docs/formats.md, docs/serve.md). allocation and the P/D keywords
    are serve()'s; with prefill_workers and decode_workers the one deployment of their sum is
    sized (workers left as it is, or that sum).
    """
    if not isinstance(workers, str):
        workers = ",".join(str(w) for w in _as_list(workers))
    lines = _size(_trace(trace), dict(
        model=model, gpu=gpu, tp=int(tp), max_tp=int(max_tp), workers=workers, router=str(router),
        policy=str(policy), target_hit="" if target_hit is None else str(target_hit),
        target_token_hit="" if target_token_hit is None else str(target_token_hit),
        slo_ttft_p50_ms=float(slo_ttft_p50_ms), slo_ttft_p90_ms=float(slo_ttft_p90_ms),
        slo_ttft_p99_ms=float(slo_ttft_p99_ms),
        gpu_memory_utilization=float(gpu_memory_utilization), reserve_gb=float(reserve_gb),
        tolerance=float(tolerance), rate=float(rate), kv_dtype=kv_dtype, cost_params=cost_params,
        max_batch_tokens=int(max_batch_tokens), max_running=int(max_running),
        cache_outputs=bool(cache_outputs), seed=int(seed), jobs=int(jobs),
        allocation=str(allocation), prefill_workers=int(prefill_workers),
        decode_workers=int(decode_workers), decode_router=str(decode_router),
        kv_link_gb_per_s=float(kv_link_gb_per_s), kv_link_latency_us=float(kv_link_latency_us),
        decode_cache=bool(decode_cache), kv_transfer=str(kv_transfer)))
    return [json.loads(line) for line in lines]


def mrc(trace, policies=("lru",), *, points=40, min="1%", max="100%", linear=False,
        target_hit=None, model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto", cost_params="",
        seed=1, jobs=0):
    """Hit rate and replay TTFT against capacity for each policy (LRU in one stack-distance
    pass, the others by replays), as `kvpolicy mrc` does, with the GIL released.

    `points` capacities from `min` to `max` (blocks, shares, tokens or KV memory), spaced
    geometrically unless `linear`. With `target_hit` ("30%" or 0.3), each policy's smallest
    capacity reaching that block hit rate is searched too. Returns the rows of
    `kvpolicy mrc --json`: one dict per (policy, capacity) with kind "point", then per policy a
    dict with kind "target" when a target was given (docs/formats.md).
    """
    target = "" if target_hit is None else str(target_hit)
    lines = _mrc(_trace(trace), [str(p) for p in _as_list(policies)], int(points), str(min),
                 str(max), bool(linear), target, model, gpu, kv_dtype, cost_params, int(seed),
                 int(jobs))
    return [json.loads(line) for line in lines]


def leaderboard(traces, capacities=("2%", "5%", "10%", "20%"), policies="online", *,
                seeds="wa,tlru,rlt,laru:predictor=reuse,fpb:predictor=reuse,lpc", format="auto",
                sessions="auto", block_tokens=0, max_requests=0, model="llama-3.1-8b",
                gpu="a100-80gb", kv_dtype="auto", seed=1, min_margin=0.0, jobs=0, json_path="",
                resume=False):
    """Every deployable policy on several traces, as `kvpolicy leaderboard` does, with the GIL
    released: each (trace, capacity) cell's margin over LRU and over the best seed policy, wins
    per trace (a trace counts when the policy beats LRU and every seed policy at >= ceil(3/4 of
    the sizes); `min_margin` points: a win must be by more than that), and a ranked summary.

    `traces` is a list (or a comma-separated string) of "[label=]path[@format]", "builtin" or
    "builtin:KIND". `json_path` streams the replay rows there (and `resume` keeps those already
    in it). Returns a dict: `text` (the tables the command prints), `rows` (the dicts of
    `--board-json`: kinds cell, trace and summary; docs/formats.md) and `results` (every replay's
    row, Result JSON).
    """
    text, rows, results = _leaderboard(
        ",".join(str(t) for t in _as_list(traces)),
        {"format": format, "sessions": sessions, "block_tokens": int(block_tokens),
         "max_requests": int(max_requests),
         "capacities": ",".join(str(c) for c in _as_list(capacities)),
         "policies": ",".join(str(p) for p in _as_list(policies)),
         "seeds": ",".join(str(p) for p in _as_list(seeds)), "model": model, "gpu": gpu,
         "kv_dtype": kv_dtype, "seed": int(seed), "min_margin": float(min_margin),
         "jobs": int(jobs), "json": str(json_path),
         "resume": bool(resume)})
    return {"text": text, "rows": [json.loads(r) for r in rows],
            "results": [json.loads(r) for r in results]}


def lpc_decay(trace, *, scales=(0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2),
              capacities="2%,5%,10%,20%", lpc_params="", seed=1, jobs=0):
    """LPC's decay rate chosen on a validation trace, as `kvpolicy study lpc-decay` does: lpc at
    each rate in `scales` (per second), with `lpc_params` added, at every capacity; the rate of
    the highest mean block hit rate is chosen. Build the trace from the validation split of the
    classifier's training data, never from the split you report on (docs/policies.md, lpc).
    Returns the object `study lpc-decay --json` writes (chosen_scale_s, capacities,
    lru_hit_rates, scales)."""
    return json.loads(_lpc_decay(_trace(trace), [float(s) for s in _as_list(scales)],
                                 str(capacities), str(lpc_params), int(seed), int(jobs)))


def import_trace(input, map="", out=None, *, preset="", chat_template="chatml", format="auto",
                 time_unit="s", block_tokens=16, tokenizer="auto", skip_bad_lines=False,
                 assume=None):
    """Imports your own request log as a native trace written to `out` (FILE.kvtrace), as
    `kvpolicy trace import` does: CSV or JSONL, plain, gzip or zstd (told by the first bytes),
    "-" for standard input.

    `map` names the columns, target=column,...: time (required); one of tokens, text, messages
    (OpenAI chat messages, rendered by `chat_template`: chatml, llama3, plain or a format with
    {role} and {content}), hashes (integers or strings); optional id (JSONL lines sharing a
    request id are joined), session, prompt_tokens, output or output_text, turn, category, user.
    JSONL columns may be paths (usage.completion_tokens, messages[-1].content). `preset`
    (openai-chat, openai-completion, vllm-log, otel-genai) gives a mapping (and for the last two
    the file format) that `map` overrides target by target.
    Returns what was written: a dict of requests, sessions, skipped_rows, block_accesses,
    unique_blocks, prompt_tokens, output_tokens, duration_s, format, compression, joined_lines,
    responses_without_request, the tokenizer used (or None), paths, and `sanity` (the report
    printed after an import: prompt lengths, sessions, ideal hit rate, warnings). Load the result
    with load_trace(out).

    A log of lengths only (map prompt_tokens=COLUMN, no prompt content) is refused unless
    `assume` names an assumption model, key=value,... ("" for its defaults), as `--assume` does:
    the prompts are then the model's, and the dict's `assumptions` (the model, defaults filled
    in), `assumptions_statement` and `continuations` say so; hit rates on such a trace measure the
    assumptions (docs/formats.md, "Length-only logs").
    """
    if out is None:
        raise TypeError("import_trace() needs out (FILE.kvtrace)")
    if assume is not None and not isinstance(assume, str):
        raise TypeError("assume must be a str (key=value,...) or None")
    return _import_trace(str(input), map, str(out), format, time_unit, int(block_tokens),
                         str(tokenizer), bool(skip_bad_lines), str(preset), str(chat_template),
                         assume)


def doctor(trace=None, *, input=None, map="", preset="", chat_template="chatml", format="auto",
           time_unit="s", block_tokens=0, tokenizer="auto", skip_bad_lines=False,
           sessions="auto", capacity="", policy="lru", workers=4, routing=True,
           model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto", seed=1, jobs=0):
    """Why is the prefix-cache hit rate low? As `kvpolicy doctor` does, on a trace file (`trace`,
    any format load_trace reads) or a request log (`input` with `map` and/or `preset`, read as
    import_trace reads it; block_tokens 0 = 16 for a log, the format's for a trace). Returns the
    findings as a dict, the object `kvpolicy doctor --json` writes: the sanity report, the finite
    cache (ideal, the policy, lru, belady), prefix breaks within and across sessions with their
    causes, block size, routers (unless routing=False) and the remedies ranked by measured gain.
    capacity "" = the KV memory the GPU leaves after the weights (docs/doctor.md).
    """
    if (trace is None) == (input is None):
        raise ConfigError("doctor: give either a trace or an input log")
    options = dict(map=map, preset=preset, chat_template=chat_template, format=format,
                   time_unit=time_unit, block_tokens=int(block_tokens), tokenizer=str(tokenizer),
                   skip_bad_lines=bool(skip_bad_lines), sessions=sessions, capacity=str(capacity),
                   policy=policy, workers=int(workers), routing=bool(routing), model=model, gpu=gpu,
                   kv_dtype=kv_dtype, seed=int(seed), jobs=int(jobs))
    return json.loads(_doctor("" if trace is None else str(trace),
                              "" if input is None else str(input), options))


def recommend(trace=None, *, results=None, capacity="", policy=None, among="online",
              format="auto", sessions="auto", block_tokens=0, model="llama-3.1-8b",
              gpu="a100-80gb", kv_dtype="auto", seed=1, jobs=0):
    """The policy to run at `capacity` and its configuration in vLLM, SGLang and LMCache, as
    `kvpolicy recommend` gives it: from a trace file (`trace`; the candidates `among`, "online"
    by default, are replayed at `capacity`, which is required) or from a finished run's rows
    (`results`: a `compare`, `simulate` or `mrc --json` file; `capacity` picks one of its
    capacities when it holds several; block_tokens gives their block size when the rows lack
    it). `policy` forces an online spec instead of the best. Returns the object
    `kvpolicy recommend --json` writes: the choice, its margin over LRU and whether it is within
    noise, every candidate, and per engine ("engines": vllm, sglang, lmcache) its support,
    install line, configuration and launch line, or why it cannot (docs/engines.md).
    """
    if (trace is None) == (results is None):
        raise ConfigError("recommend: give either a trace or results (a result file)")
    options = dict(format=format, sessions=sessions, block_tokens=int(block_tokens),
                   capacity=str(capacity), among=",".join(_as_list(among)),
                   policy="" if policy is None else str(policy), model=model, gpu=gpu,
                   kv_dtype=kv_dtype, seed=int(seed), jobs=int(jobs))
    return json.loads(_recommend("" if trace is None else str(trace),
                                 "" if results is None else str(results), options))


def policies():
    """Every registered eviction policy, as `kvpolicy policies` lists them: one dict each with
    name, summary, paper, offline (reads the trace's future), randomized, and params (a list of
    dicts: name, type, default, allowed, help)."""
    return _policies()


def routers():
    """Every registered serve-mode router, as `kvpolicy routers` lists them: one dict each with
    name, summary, source, randomized, max_workers (0 = any) and params (as in policies())."""
    return _routers()


class Cache:
    """A prefix cache of KV blocks run by a kvpolicy policy, as an engine calls it.

    Sequences are token ids (only full blocks of `block_tokens` are cached), or the engine's own
    chained block hashes through the `keys=` keyword. Request fields a policy may read (time in
    seconds, session, turn, category, prompt_tokens, output_tokens, continuation, priority) are
    keywords of lookup() and insert(). Threads may share a Cache: each call holds its lock (insert_many
    with the GIL released).
    """

    def __init__(self, policy="lru", capacity_blocks=1024, block_tokens=16, seed=1):
        """An empty cache of capacity_blocks blocks of block_tokens tokens, evicted by the
        online policy spec `policy` ("lru", "s3fifo", "laru:predictor=noisy,p=0.2"); seed
        drives randomized policies. ConfigError for an unknown or offline policy."""
        self._c = _KvCache(policy, capacity_blocks, block_tokens, seed)

    def _keys(self, tokens, keys):
        if (tokens is None) == (keys is None):
            raise TypeError("give either tokens or keys=")
        return list(keys) if keys is not None else self._c.block_keys(tokens)

    def block_keys(self, tokens):
        """The chained keys of the full blocks of `tokens` (trace import's keys)."""
        return self._c.block_keys(tokens)

    def match(self, tokens=None, *, keys=None):
        """Cached prefix length in tokens (in blocks with keys=). No side effects."""
        n = self._c.match(self._keys(tokens, keys))
        return n if keys is not None else n * self._c.block_tokens

    def lookup(self, tokens=None, *, keys=None, **request):
        """As match(), and the policy is told the cached prefix was used."""
        n = self._c.lookup(self._keys(tokens, keys), **request)
        return n if keys is not None else n * self._c.block_tokens

    def insert(self, tokens=None, *, keys=None, **request):
        """One request as replay runs it: the cached prefix counts as hits, the missing blocks
        are inserted, evicting as the policy chooses. Returns (hit, inserted, evicted) blocks."""
        return self._c.insert(self._keys(tokens, keys), **request)

    def insert_many(self, requests):
        """insert() for many key sequences in one call, the GIL released; hit blocks each."""
        return self._c.insert_many([list(k) for k in requests])

    def pin(self, tokens=None, *, keys=None):
        """Pins every full block of the sequence (all must be cached): never evicted."""
        self._c.pin(self._keys(tokens, keys))

    def unpin(self, tokens=None, *, keys=None):
        """Releases one pin() of every full block of the sequence."""
        self._c.unpin(self._keys(tokens, keys))

    def evict(self, num_blocks, *, exclude=(), all_or_nothing=False):
        """Frees up to num_blocks unpinned blocks in the policy's order, sparing the keys in
        `exclude`; returns their keys. all_or_nothing: [] and no change when fewer can go."""
        return self._c.evict(num_blocks, exclude=exclude, all_or_nothing=all_or_nothing)

    def remove(self, tokens=None, *, keys=None):
        """The engine dropped these blocks (and every block after them): they leave, told to
        the policy as removed, not evicted. Blocks not cached are skipped; returns how many
        blocks left."""
        return self._c.remove(self._keys(tokens, keys))

    def clear(self):
        """Drops every block and starts the policy afresh (the engine's cache reset)."""
        self._c.clear()

    def stats(self):
        """Counters as a dict: requests, hits, inserted, evictions, size, pinned, and the
        policy's own (a learned policy's model state, for instance)."""
        return self._c.stats()

    def __len__(self):
        """The number of blocks cached."""
        return len(self._c)

    @property
    def capacity(self):
        """Capacity in blocks."""
        return self._c.capacity

    @property
    def block_tokens(self):
        """Tokens per block."""
        return self._c.block_tokens

    @property
    def policy(self):
        """The policy's label, its parameters included ("lru", "s3fifo:small=0.1")."""
        return self._c.policy


class EvictionPolicy(_PolicyTree):
    """A kvpolicy policy deciding evictions for a cache that lives elsewhere: an engine's radix
    tree (SGLang's shape: one node per KV block, lock references, evict(n)) or, with flat=True,
    an offload tier of independent blocks (vLLM's CPU tier, LMCache). docs/api.md has the
    contract; kvpolicy.integrations holds the adapters for those engines.

    The cache tells it its events with its own node ids: distinct 64-bit ints, best a hash of
    the node's whole prefix (as vLLM's block hashes), so that a page evicted and brought back has
    the same id and policies that remember evicted blocks (S3-FIFO's ghost queue, WA) see it:
      on_insert(node, parent=None)   a node was added: Inserted.ADDED, CACHED (already tracked:
                                     no event, not a hit) or REFUSED (full: nothing added)
      on_insert_chain(nodes, parent) a run of nodes, each under the one before, in one call
      on_hit(node), on_hits(nodes)   cached nodes matched by a request
      on_lock / on_unlock (and on_locks / on_unlocks)   a running request holds / releases it
      on_remove(node)                the cache dropped it (not the policy's choice)
      evict(n, exclude=, all_or_nothing=) -> [node, ...]   which nodes to delete now
      victims(n) then commit(nodes) / cancel(nodes)       eviction the cache confirms later
      clear()                        the cache was reset
    The batch calls take ignore_missing=True to skip untracked nodes. Group one request's calls
    with `with policy.request(time=..., session=..., blocks=[...])` (or begin_request()/
    end_request()), where blocks are the ids of the prompt's pages in order, cached or not (WA,
    the guard and the learned policies read the whole prompt); calls outside a request are a
    request of their own, and a request holds the nodes it hit or inserted until it ends, so
    evict() never takes them. The cache evicts before it inserts: on_insert into a full policy
    (len == capacity) adds nothing and returns REFUSED, unless make_room=True (the policy's
    victim goes first).
    """

    def __init__(self, policy="lru", capacity_blocks=1024, block_tokens=16, seed=1, *,
                 flat=False):
        """A policy tracking up to capacity_blocks nodes of block_tokens tokens; seed drives
        randomized policies; flat=True: parents are ignored and any unlocked node may be
        evicted (an offload tier). ConfigError for an unknown or offline policy."""
        super().__init__(policy, capacity_blocks, block_tokens, seed, flat=flat)

    @contextlib.contextmanager
    def request(self, **request):
        """`with policy.request(time=..., blocks=[...]):` begin_request() ... end_request()."""
        self.begin_request(**request)
        try:
            yield self
        finally:
            self.end_request()
