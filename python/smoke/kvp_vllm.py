"""The shape the engines' smoke driver (../shared/engines/smoke/vllm_smoke.py) loads as
cache_policy_module_path: getattr(kvp_vllm, "kvp:<spec>") is kvpolicy.integrations.vllm's
CachePolicy subclass for that spec."""
from kvpolicy.integrations.vllm import __getattr__, policy_class  # noqa: F401  (re-exported)
