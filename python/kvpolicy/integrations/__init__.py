"""Adapters that run kvpolicy's policies inside serving engines through the engines' own seams
(docs/engines.md): vLLM's CPU offload tier (kvpolicy.integrations.vllm), SGLang's radix cache
(kvpolicy.integrations.sglang) and LMCache's L1/L2 eviction (kvpolicy.integrations.lmcache).

Each module imports its engine only when used, so `import kvpolicy` never needs an engine.
"""
