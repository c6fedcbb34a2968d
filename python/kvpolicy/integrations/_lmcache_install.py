"""install() for kvpolicy.integrations.lmcache: LMCache's eviction-policy factory patched so that
`eviction_policy: "kvp:<spec>"` builds a KvpolicyEvictionPolicy (docs/engines/lmcache.md).

LMCache selects its MP-mode policy with a closed if/elif, CreateEvictionPolicy(eviction_config)
in lmcache.v1.distributed.eviction_policy, which the eviction controllers import by name. With
no registry to join, install() replaces that name wherever an LMCache module bound it; names
other than kvp:... still reach LMCache's own factory. This is a patch until LMCache has a
registry.
"""

import importlib
import sys
import threading

PREFIX = "kvp:"

_FACTORY_MODULE = "lmcache.v1.distributed.eviction_policy"
# Modules that bind CreateEvictionPolicy by name (the eviction controllers): imported before
# patching so that the binding they hold is replaced too.
_USERS = ("lmcache.v1.distributed.eviction_policy.factory",
          "lmcache.v1.distributed.storage_controllers.eviction_controller")

_lock = threading.Lock()
_state = {"original": None, "patched": {}, "options": {}}


def parse_name(name):
    """("spec", capacity_chunks or None) of an eviction policy name "kvp:<spec>[@<chunks>]",
    or None for a name that is not kvpolicy's. ConfigError for "kvp:" without a spec or a bad
    capacity."""
    import kvpolicy

    if not isinstance(name, str) or not name.startswith(PREFIX):
        return None
    spec, _, capacity = name[len(PREFIX):].partition("@")
    if not spec:
        raise kvpolicy.ConfigError(f"eviction_policy {name!r}: give a kvpolicy spec after "
                                   f"{PREFIX!r}, e.g. \"kvp:s3fifo\"")
    if not capacity:
        return spec, None
    if not capacity.isdigit() or int(capacity) < 1:
        raise kvpolicy.ConfigError(f"eviction_policy {name!r}: the capacity after '@' must "
                                   "be a positive number of chunks")
    return spec, int(capacity)


def _make_policy(name, config):
    from .lmcache import KvpolicyEvictionPolicy

    spec, capacity = parse_name(name)
    options = dict(_state["options"])
    if capacity is not None:
        options["capacity_chunks"] = capacity
    return KvpolicyEvictionPolicy(spec, **options)


def _factory(eviction_config):
    """CreateEvictionPolicy as installed: kvpolicy for kvp:<spec> (and for the LMCache names
    install(replace=...) gave a spec), LMCache's own factory for every other name."""
    name = getattr(eviction_config, "eviction_policy", None)
    replaced = _state["options_replace"].get(name) if isinstance(name, str) else None
    if replaced is not None:
        name = PREFIX + replaced
    if isinstance(name, str) and name.startswith(PREFIX):
        return _make_policy(name, eviction_config)
    return _state["original"](eviction_config)


_factory.__kvpolicy__ = True  # how install() and uninstall() recognise the patch


def install(capacity_chunks=4096, chunk_tokens=256, *, seed=1, isolation=False, replace=None):
    """Patches LMCache's CreateEvictionPolicy so that eviction_policy "kvp:<spec>" (or
    "kvp:<spec>@<chunks>" for a tier of another size) builds a KvpolicyEvictionPolicy of
    capacity_chunks chunks of chunk_tokens tokens; other names stay LMCache's. Call it once in
    the process before LMCache builds its controllers. Idempotent: a second call only updates
    the options. replace={"LRU": "s3fifo"} also routes LMCache's own names to kvpolicy specs,
    for launchers whose command line accepts only LMCache's names. Returns the number of module
    bindings patched now. ImportError without LMCache."""
    import kvpolicy

    if isinstance(capacity_chunks, bool) or not isinstance(capacity_chunks, int) \
            or capacity_chunks < 1:
        raise kvpolicy.ConfigError(f"install: capacity_chunks must be a positive int, got "
                                   f"{capacity_chunks!r}")
    replace = dict(replace or {})
    for lmcache_name, spec in replace.items():
        if not isinstance(spec, str) or not spec:
            raise kvpolicy.ConfigError(f"install: replace[{lmcache_name!r}] must be a kvpolicy "
                                       f"spec, got {spec!r}")
    with _lock:
        package = importlib.import_module(_FACTORY_MODULE)
        for name in _USERS:
            try:
                importlib.import_module(name)
            except ImportError:
                pass  # this LMCache version has no such module
        if _state["original"] is None:
            current = getattr(package, "CreateEvictionPolicy")
            if getattr(current, "__kvpolicy__", False):
                raise kvpolicy.Error("install: CreateEvictionPolicy is already a kvpolicy "
                                     "patch of another copy of kvpolicy")
            _state["original"] = current
        _state["options"] = dict(capacity_chunks=capacity_chunks, chunk_tokens=int(chunk_tokens),
                                 seed=int(seed), isolation=bool(isolation))
        _state["options_replace"] = replace
        patched = 0
        for name, module in list(sys.modules.items()):
            if not name.startswith("lmcache.") or module is None:
                continue
            if getattr(module, "CreateEvictionPolicy", None) is _state["original"]:
                module.CreateEvictionPolicy = _factory
                _state["patched"][name] = module
                patched += 1
        return patched


def uninstall():
    """Puts LMCache's own CreateEvictionPolicy back wherever install() replaced it (controllers
    built meanwhile keep their policies). Returns the number of bindings restored."""
    with _lock:
        restored = 0
        for module in _state["patched"].values():
            if getattr(module, "CreateEvictionPolicy", None) is _factory:
                module.CreateEvictionPolicy = _state["original"]
                restored += 1
        _state["patched"] = {}
        _state["original"] = None
        return restored


def installed():
    """Whether install() is in effect."""
    return _state["original"] is not None


_state["options_replace"] = {}
