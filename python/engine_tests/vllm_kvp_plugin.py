"""A pytest plugin that runs vLLM's own offload-tier tests with kvpolicy's adapter in place of
vLLM's LRU: the registry name "lru" resolves to kvpolicy.integrations.vllm's
"kvp:<KVPOLICY_VLLM_LRU>" (default kvp:lru), and "arc" to "kvp:<KVPOLICY_VLLM_ARC>" when that
variable names a kvpolicy spec. The test files run unmodified:
`pytest -p vllm_kvp_plugin tests/v1/kv_offload/cpu` (test_vllm.py does this).

At the end it prints how many manager policies the adapter built, so a run that silently kept
vLLM's own LRU is caught.
"""
import os

_built = []


def pytest_configure(config):
    import kvpolicy.integrations.vllm as adapter
    from vllm.v1.kv_offload.cpu.policies.factory import CachePolicyFactory

    def loader(spec):
        def load():
            cls = adapter.policy_class(spec)
            if not getattr(cls, "_counted", False):
                init = cls.__init__

                def counted(self, *args, **kwargs):
                    _built.append(spec)
                    init(self, *args, **kwargs)

                cls.__init__ = counted
                cls._counted = True
            return cls
        return load

    CachePolicyFactory._registry["lru"] = loader(os.environ.get("KVPOLICY_VLLM_LRU", "lru"))
    arc = os.environ.get("KVPOLICY_VLLM_ARC")
    if arc:
        CachePolicyFactory._registry["arc"] = loader(arc)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"kvpolicy adapter policies built: {len(_built)}")
