"""The policies the engines ship (slru, priority, hpt, wlfu, arc, tlru_tokens) through the
binding: each is an online policy of the registry, runs the seam calls, and `priority` reads the
request priority given as a keyword (higher kept longer; none: lru)."""
import pytest

import kvpolicy

NEW = ["slru", "priority", "hpt", "wlfu", "arc", "tlru_tokens"]


def test_registered_and_online():
    for name in NEW:
        assert name in kvpolicy.policy_names()
        assert not kvpolicy.is_offline(name)


@pytest.mark.parametrize("name", NEW)
def test_seam_calls(name):
    p = kvpolicy.EvictionPolicy(name, capacity_blocks=4)
    assert p.on_insert_chain([1, 2, 3]) == 3
    p.on_hit(1)
    assert p.on_remove(3) == [3]
    assert p.on_insert(10, make_room=True) and p.on_insert(11, make_room=True)
    victims = p.evict(2)
    assert len(victims) == 2 and len(p) == 2


def request(p, node, priority):
    with p.request(priority=priority):
        p.on_insert(node, make_room=True)


def test_priority_keeps_high_priority_requests():
    p = kvpolicy.EvictionPolicy("priority", capacity_blocks=2, flat=True)
    request(p, 1, 5)
    request(p, 2, 0)
    request(p, 3, 0)  # evicts 2, the lowest priority, though 1 is older
    assert 1 in p and 2 not in p and 3 in p


def test_priority_without_priorities_is_lru():
    for name in ("priority", "lru"):
        p = kvpolicy.EvictionPolicy(name, capacity_blocks=2, flat=True)
        for node in (1, 2):
            request(p, node, 0)
        p.on_hit(1)
        request(p, 3, 0)
        assert 2 not in p and 1 in p, name
