"""The shape the engines' SGLang smoke driver calls (smoke/sglang_smoke.py):
KvpolicyRadixCache(params, spec=..., capacity_pages=...), from kvpolicy.integrations.sglang."""
from kvpolicy.integrations.sglang import KvpolicyRadixCache  # noqa: F401  (re-exported)
