"""The shape ../shared/engines/smoke/lmcache_smoke.py calls: KvpolicyEvictionPolicy(spec,
capacity_chunks, chunk_tokens), re-exported from kvpolicy.integrations.lmcache (the smoke patches
LMCache's factory itself; install() is the user's way, docs/engines/lmcache.md)."""
from kvpolicy.integrations.lmcache import KvpolicyEvictionPolicy, install, uninstall  # noqa: F401
