"""The calls the engines' seams need (docs/api.md, "What an engine's seam needs"), from Python:
removal the cache decided, eviction with protected keys and all or nothing, two-phase eviction,
chain inserts, duplicate reports, untracked touches, flat tiers and a reset. The C++ contract
suite (tests/cache/policy_tree_owner_test.cc) runs them over every online policy; here each call
is checked through the binding, on LRU and S3-FIFO."""
import pytest

import kvpolicy

POLICIES = ["lru", "s3fifo"]


@pytest.mark.parametrize("name", POLICIES)
def test_remove_is_not_an_eviction(name):
    p = kvpolicy.EvictionPolicy(name, capacity_blocks=8)
    assert p.on_insert_chain([1, 2, 3, 4]) == 4
    p.on_lock(4)
    assert p.on_remove(3) == [4, 3]  # descendants first; the lock goes with it
    assert 3 not in p and 4 not in p and len(p) == 2
    s = p.stats()
    assert (s["removed"], s["evictions"], s["pinned"]) == (2, 0, 0)
    with pytest.raises(kvpolicy.Error, match="not cached"):
        p.on_remove(3)
    assert p.on_removes([3, 2, 99], ignore_missing=True) == 1
    assert p.evict(8) == [1]


@pytest.mark.parametrize("name", POLICIES)
def test_duplicates_are_reported_and_not_hits(name):
    p = kvpolicy.EvictionPolicy(name, capacity_blocks=2)
    assert p.on_insert(1) is kvpolicy.Inserted.ADDED
    assert p.on_insert(1) is kvpolicy.Inserted.CACHED
    assert p.on_insert(2) and not p.on_insert(3)  # REFUSED is falsy
    assert p.on_insert(3, make_room=True) is kvpolicy.Inserted.ADDED
    s = p.stats()
    assert (s["hits"], s["duplicates"], s["refused"]) == (0, 1, 1)


@pytest.mark.parametrize("name", POLICIES)
def test_flat_all_or_nothing_with_protected_keys(name):
    p = kvpolicy.EvictionPolicy(name, capacity_blocks=6, flat=True)
    assert p.flat
    assert p.on_insert_chain([10, 11, 12, 13], parent=999) == 4  # parents ignored when flat
    p.on_locks([10, 77], ignore_missing=True)
    assert p.evictable(exclude={11, 12}) == 1
    assert p.evict(2, exclude={11, 12}, all_or_nothing=True) == []
    assert len(p) == 4 and p.stats()["evictions"] == 0
    assert p.evict(1, exclude={11, 12}, all_or_nothing=True) == [13]
    assert p.evict(5, exclude=iter([11])) == [12]  # any iterable of keys


@pytest.mark.parametrize("name", POLICIES)
def test_two_phase_eviction(name):
    p = kvpolicy.EvictionPolicy(name, capacity_blocks=8, flat=True)
    twin = kvpolicy.EvictionPolicy(name, capacity_blocks=8, flat=True)
    for q in (p, twin):
        for k in range(1, 7):
            q.on_insert(k)
        q.on_hits([2, 4, 99], ignore_missing=True)
    named = p.victims(3, exclude=[1])
    assert named == twin.evict(3, exclude=[1])
    assert all(k not in p for k in named) and p.stats()["pending"] == 3
    assert p.commit(named[:2]) == 2
    assert p.cancel(named[2:]) == 1 and named[2] in p
    assert p.stats()["pending"] == 0 and len(p) == 4


def test_hits_on_untracked_keys():
    p = kvpolicy.EvictionPolicy("lru", capacity_blocks=4)
    p.on_insert(1)
    assert p.on_hits([5, 1, 6], ignore_missing=True) == 1
    with pytest.raises(kvpolicy.Error, match="not cached"):
        p.on_hits([5, 1])
    assert p.on_unlocks([5], ignore_missing=True) == 0


def test_clear_and_cache_calls():
    p = kvpolicy.EvictionPolicy("s3fifo", capacity_blocks=4)
    p.on_insert_chain([1, 2, 3])
    p.clear()
    assert len(p) == 0 and 1 not in p
    c = kvpolicy.Cache("lru", capacity_blocks=8, block_tokens=1)
    c.insert(keys=[1, 2, 3])
    c.insert(keys=[1, 4])
    assert c.remove(keys=[2, 50]) == 2  # 2 and 3 after it
    assert c.evict(4, exclude={4}, all_or_nothing=True) == []
    assert c.evict(1, exclude={4}) == []  # 1 is 4's parent: spared
    assert c.evict(2) == [4, 1]
    c.insert(keys=[7])
    c.clear()
    assert len(c) == 0
