# Type stubs of the package kvpolicy (PEP 561: py.typed beside them). Every name of __all__ has
# one here; python/tests/test_package.py checks it.
from contextlib import AbstractContextManager
from enum import IntEnum
from typing import Any, Iterable, Optional, Sequence, Union

__version__: str

class Error(RuntimeError):
    """Any error kvpolicy reports; its message names the cause."""

class ConfigError(Error, ValueError):
    """A bad argument or option."""

class InputError(Error):
    """Bad input data: the message names the file, line and field."""

class Inserted(IntEnum):
    """What EvictionPolicy.on_insert did (REFUSED is falsy)."""

    REFUSED = 0
    ADDED = 1
    CACHED = 2

class Trace:
    """A replayable trace: requests with chained block keys."""

    @property
    def name(self) -> str: ...
    @property
    def block_tokens(self) -> int: ...
    @property
    def assumptions(self) -> Optional[str]: ...
    @property
    def assumptions_statement(self) -> str: ...
    @property
    def block_accesses(self) -> int: ...
    @property
    def unique_blocks(self) -> int: ...
    def __len__(self) -> int: ...
    def blocks(self, request: int) -> list[int]: ...
    def request(self, request: int) -> dict[str, Any]: ...

def load_trace(
    path: str,
    format: str = "auto",
    sessions: str = "auto",
    skip_bad_lines: bool = False,
    block_tokens: int = 0,
    max_requests: int = 0,
    session_min_blocks: int = 2,
    hints: list[str] = ...,
    hint_seed: int = 1,
) -> Trace: ...
def policy_names() -> list[str]: ...
def is_offline(policy: str) -> bool: ...

Capacity = Union[int, float, str]

def simulate(
    trace: Union[Trace, str],
    policies: Union[str, Iterable[str]] = ...,
    capacities: Union[Capacity, Iterable[Capacity]] = ...,
    *,
    seed: int = 1,
    jobs: int = 0,
    dram: float = 0.0,
    dram_policy: str = "lru",
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    xi_ms: float = 200.0,
    slo_ms: float = 200.0,
) -> list[dict[str, Any]]: ...

def generate_trace(
    kind: str, params: str = "", seed: int = 1, hints: list[str] = ..., hint_seed: int = 1
) -> Trace: ...
def serve(
    trace: Union[Trace, str],
    policies: Union[str, Iterable[str]] = ...,
    capacities: Union[Capacity, Iterable[Capacity]] = ...,
    *,
    routers: Union[str, Iterable[str]] = ...,
    workers: Union[int, Iterable[int]] = ...,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    cost_params: str = "",
    tp: int = 1,
    rate: float = 0.0,
    time_scale: float = 1.0,
    clients: int = 0,
    think_time_s: float = 0.0,
    max_batch_tokens: int = 8192,
    max_running: int = 256,
    cache_outputs: bool = True,
    slo_ms: float = 200.0,
    seed: int = 1,
    jobs: int = 0,
    allocation: str = "chunked",
    prefill_workers: int = 0,
    decode_workers: int = 0,
    decode_router: str = "least_loaded",
    kv_link_gb_per_s: float = 50.0,
    kv_link_latency_us: float = 10.0,
    decode_cache: bool = True,
    kv_transfer: str = "after-prefill",
    tiers: Optional[dict[str, Union[str, bool, int]]] = None,
    stepped: bool = False,
) -> list[dict[str, Any]]: ...
def route_tune(
    trace: Union[Trace, str],
    router: str,
    *,
    policy: str = "lru",
    workers: int = 4,
    capacity: Capacity = "0.1",
    objective: str = "ttft-p50",
    budget: int = 24,
    search: str = "grid",
    split: float = 0.5,
    space: str = "",
    json_path: Optional[str] = None,
    resume: bool = False,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    cost_params: str = "",
    tp: int = 1,
    rate: float = 0.0,
    time_scale: float = 1.0,
    max_batch_tokens: int = 8192,
    max_running: int = 256,
    cache_outputs: bool = True,
    slo_ms: float = 200.0,
    seed: int = 1,
    jobs: int = 0,
    allocation: str = "chunked",
) -> dict[str, Any]: ...
def size(
    trace: Union[Trace, str],
    *,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    tp: int = 1,
    max_tp: int = 8,
    workers: Union[str, int, Iterable[int]] = ...,
    router: str = "cache_aware",
    policy: str = "lru",
    target_hit: Optional[Union[float, str]] = None,
    target_token_hit: Optional[Union[float, str]] = None,
    slo_ttft_p50_ms: float = 0.0,
    slo_ttft_p90_ms: float = 0.0,
    slo_ttft_p99_ms: float = 0.0,
    gpu_memory_utilization: float = 0.9,
    reserve_gb: float = 2.0,
    tolerance: float = 0.02,
    rate: float = 0.0,
    kv_dtype: str = "auto",
    cost_params: str = "",
    max_batch_tokens: int = 8192,
    max_running: int = 256,
    cache_outputs: bool = True,
    seed: int = 1,
    jobs: int = 0,
    allocation: str = "chunked",
    prefill_workers: int = 0,
    decode_workers: int = 0,
    decode_router: str = "least_loaded",
    kv_link_gb_per_s: float = 50.0,
    kv_link_latency_us: float = 10.0,
    decode_cache: bool = True,
    kv_transfer: str = "after-prefill",
) -> list[dict[str, Any]]: ...
def mrc(
    trace: Union[Trace, str],
    policies: Union[str, Iterable[str]] = ...,
    *,
    points: int = 40,
    min: Capacity = "1%",
    max: Capacity = "100%",
    linear: bool = False,
    target_hit: Optional[Union[float, str]] = None,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    cost_params: str = "",
    seed: int = 1,
    jobs: int = 0,
) -> list[dict[str, Any]]: ...
def leaderboard(
    traces: Union[str, Iterable[str]],
    capacities: Union[Capacity, Iterable[Capacity]] = ...,
    policies: Union[str, Iterable[str]] = "online",
    *,
    seeds: Union[str, Iterable[str]] = "wa,tlru,rlt,laru:predictor=reuse,fpb:predictor=reuse,lpc",
    format: str = "auto",
    sessions: str = "auto",
    block_tokens: int = 0,
    max_requests: int = 0,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    seed: int = 1,
    min_margin: float = 0.0,
    jobs: int = 0,
    json_path: str = "",
    resume: bool = False,
) -> dict[str, Any]: ...
def lpc_decay(
    trace: Union[Trace, str],
    *,
    scales: Union[float, Iterable[float]] = ...,
    capacities: str = "2%,5%,10%,20%",
    lpc_params: str = "",
    seed: int = 1,
    jobs: int = 0,
) -> dict[str, Any]: ...
def import_trace(
    input: str,
    map: str = "",
    out: str | None = None,
    *,
    preset: str = "",
    chat_template: str = "chatml",
    format: str = "auto",
    time_unit: str = "s",
    block_tokens: int = 16,
    tokenizer: str = "auto",
    skip_bad_lines: bool = False,
    assume: Optional[str] = None,
) -> dict[str, Any]: ...
def doctor(
    trace: str | None = None,
    *,
    input: str | None = None,
    map: str = "",
    preset: str = "",
    chat_template: str = "chatml",
    format: str = "auto",
    time_unit: str = "s",
    block_tokens: int = 0,
    tokenizer: str = "auto",
    skip_bad_lines: bool = False,
    sessions: str = "auto",
    capacity: str = "",
    policy: str = "lru",
    workers: int = 4,
    routing: bool = True,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    seed: int = 1,
    jobs: int = 0,
) -> dict[str, Any]: ...
def recommend(
    trace: str | None = None,
    *,
    results: str | None = None,
    capacity: str | int | float = "",
    policy: str | None = None,
    among: str | Sequence[str] = "online",
    format: str = "auto",
    sessions: str = "auto",
    block_tokens: int = 0,
    model: str = "llama-3.1-8b",
    gpu: str = "a100-80gb",
    kv_dtype: str = "auto",
    seed: int = 1,
    jobs: int = 0,
) -> dict[str, Any]: ...
def policies() -> list[dict[str, Any]]: ...
def routers() -> list[dict[str, Any]]: ...

class Cache:
    """A prefix cache of KV blocks run by a kvpolicy policy, as an engine calls it."""

    def __init__(
        self, policy: str = "lru", capacity_blocks: int = 1024, block_tokens: int = 16, seed: int = 1
    ) -> None: ...
    def block_keys(self, tokens: Sequence[int]) -> list[int]: ...
    def match(
        self, tokens: Optional[Sequence[int]] = None, *, keys: Optional[Sequence[int]] = None
    ) -> int: ...
    def lookup(
        self,
        tokens: Optional[Sequence[int]] = None,
        *,
        keys: Optional[Sequence[int]] = None,
        time: Optional[float] = None,
        session: Optional[int] = None,
        turn: int = 1,
        category: int = 0,
        prompt_tokens: int = 0,
        output_tokens: int = 0,
        continuation: Optional[float] = None,
        priority: int = 0,
    ) -> int: ...
    def insert(
        self,
        tokens: Optional[Sequence[int]] = None,
        *,
        keys: Optional[Sequence[int]] = None,
        time: Optional[float] = None,
        session: Optional[int] = None,
        turn: int = 1,
        category: int = 0,
        prompt_tokens: int = 0,
        output_tokens: int = 0,
        continuation: Optional[float] = None,
        priority: int = 0,
    ) -> tuple[int, int, int]: ...
    def insert_many(self, requests: Iterable[Sequence[int]]) -> list[int]: ...
    def pin(
        self, tokens: Optional[Sequence[int]] = None, *, keys: Optional[Sequence[int]] = None
    ) -> None: ...
    def unpin(
        self, tokens: Optional[Sequence[int]] = None, *, keys: Optional[Sequence[int]] = None
    ) -> None: ...
    def evict(
        self, num_blocks: int, *, exclude: Iterable[int] = ..., all_or_nothing: bool = False
    ) -> list[int]: ...
    def remove(
        self, tokens: Optional[Sequence[int]] = None, *, keys: Optional[Sequence[int]] = None
    ) -> int: ...
    def clear(self) -> None: ...
    def stats(self) -> dict[str, Any]: ...
    def __len__(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def block_tokens(self) -> int: ...
    @property
    def policy(self) -> str: ...

class EvictionPolicy:
    """A kvpolicy policy deciding evictions for a radix cache that lives elsewhere."""

    def __init__(
        self,
        policy: str = "lru",
        capacity_blocks: int = 1024,
        block_tokens: int = 16,
        seed: int = 1,
        *,
        flat: bool = False,
    ) -> None: ...
    def request(
        self,
        *,
        time: Optional[float] = None,
        session: Optional[int] = None,
        turn: int = 1,
        category: int = 0,
        prompt_tokens: int = 0,
        output_tokens: int = 0,
        continuation: Optional[float] = None,
        priority: int = 0,
        blocks: Sequence[int] = ...,
    ) -> AbstractContextManager[EvictionPolicy]: ...
    def begin_request(
        self,
        *,
        time: Optional[float] = None,
        session: Optional[int] = None,
        turn: int = 1,
        category: int = 0,
        prompt_tokens: int = 0,
        output_tokens: int = 0,
        continuation: Optional[float] = None,
        priority: int = 0,
        blocks: Sequence[int] = ...,
    ) -> None: ...
    def end_request(self) -> None: ...
    def on_insert(
        self, node: int, parent: Optional[int] = None, *, make_room: bool = False
    ) -> Inserted: ...
    def on_insert_chain(
        self, nodes: Sequence[int], parent: Optional[int] = None, *, make_room: bool = False
    ) -> int: ...
    def on_hit(self, node: int) -> None: ...
    def on_lock(self, node: int) -> None: ...
    def on_unlock(self, node: int) -> None: ...
    def on_hits(self, nodes: Sequence[int], *, ignore_missing: bool = False) -> int: ...
    def on_locks(self, nodes: Sequence[int], *, ignore_missing: bool = False) -> int: ...
    def on_unlocks(self, nodes: Sequence[int], *, ignore_missing: bool = False) -> int: ...
    def on_remove(self, node: int) -> list[int]: ...
    def on_removes(self, nodes: Sequence[int], *, ignore_missing: bool = False) -> int: ...
    def evict(
        self, num_blocks: int, *, exclude: Iterable[int] = ..., all_or_nothing: bool = False
    ) -> list[int]: ...
    def evictable(self, *, exclude: Iterable[int] = ...) -> int: ...
    def victims(self, num_blocks: int, *, exclude: Iterable[int] = ...) -> list[int]: ...
    def commit(self, nodes: Iterable[int]) -> int: ...
    def cancel(self, nodes: Iterable[int]) -> int: ...
    def clear(self) -> None: ...
    def stats(self) -> dict[str, Any]: ...
    def __contains__(self, node: int) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def in_request(self) -> bool: ...
    @property
    def capacity(self) -> int: ...
    @property
    def flat(self) -> bool: ...
    @property
    def policy(self) -> str: ...

__all__: list[str]
