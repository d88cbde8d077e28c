"""The shape of the event-store ports (``rummy_store.base``): small protocols by duty, each
member declared, and ``EventStore`` exactly their union; one factory for every store URL."""

from __future__ import annotations

import inspect

import pytest
from rummy_store import base
from rummy_store.factory import SCHEMES, UnknownStoreURL, open_store, store_scheme
from rummy_store.memory import MemoryEventStore
from rummy_store.redis_store import RedisEventStore

DUTIES = {
    base.EventLog: {"append", "read", "version", "exists"},
    base.RequestLog: {"get_request", "put_if_absent"},
    base.Subscriptions: {"subscribe", "subscriber_count", "append_feed"},
    base.DueSchedule: {"schedule", "unschedule", "claim_due", "due"},
    base.GameIndex: {"put_meta", "get_meta", "list_games", "set_active"},
    base.SnapshotLog: {"put_snapshot", "get_snapshot"},
    base.Lifecycle: {"idle_ttl", "ping", "now", "check_access", "close"},
}


def _members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


@pytest.mark.parametrize("protocol", list(DUTIES), ids=lambda p: p.__name__)
def test_each_port_is_small_and_declares_its_members(protocol: type) -> None:
    assert _members(protocol) == DUTIES[protocol]
    assert len(DUTIES[protocol]) <= 6


def test_event_store_is_the_union_of_the_ports() -> None:
    assert _members(base.EventStore) == set()  # nothing of its own
    assert set(base.EventStore.__mro__[1:8]) == set(DUTIES)
    union = set().union(*DUTIES.values())
    assert len(union) == 24
    for backend in (MemoryEventStore, RedisEventStore):
        missing = {name for name in union if not hasattr(backend, name)}
        assert missing == set(), backend


@pytest.mark.parametrize("backend", [MemoryEventStore, RedisEventStore])
def test_every_member_of_a_backend_has_the_ports_signature(backend: type) -> None:
    for protocol, names in DUTIES.items():
        for name in names:
            declared = inspect.getattr_static(protocol, name)
            implemented = inspect.getattr_static(backend, name)
            if isinstance(declared, property):
                assert isinstance(implemented, property), (backend, name)
                continue
            assert list(inspect.signature(declared).parameters) == \
                list(inspect.signature(implemented).parameters), (backend, name)


@pytest.mark.parametrize(("url", "scheme"), [
    (None, "memory"), ("", "memory"), ("memory", "memory"), ("memory://", "memory"),
    ("redis://h:1/0", "redis"), ("REDISS://h:1/0", "rediss"), ("unix:///tmp/r.sock", "unix"),
    ("redis+cluster://a:1,b:2", "redis+cluster"), ("rediss+cluster://a:1", "rediss+cluster"),
])
def test_the_factory_takes_every_scheme(url: str | None, scheme: str) -> None:
    assert store_scheme(url) == scheme and scheme in SCHEMES


@pytest.mark.parametrize("url", ["http://h/", "mongodb://u:secret@h/", "redis-cluster://h:1",
                                 "localhost:6379"])
def test_an_unknown_url_has_one_error_text(url: str) -> None:
    with pytest.raises(UnknownStoreURL) as info:
        open_store(url)
    assert str(info.value).startswith("unknown event store url scheme ")
    assert "redis+cluster://" in str(info.value) and "secret" not in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.asyncio
async def test_the_factory_builds_each_backend() -> None:
    memory = open_store("memory://", idle_ttl=3)
    assert isinstance(memory, MemoryEventStore) and memory.idle_ttl == 3
    single = open_store("redis://127.0.0.1:1/0", prefix="p", idle_ttl=2)
    cluster = open_store("redis+cluster://127.0.0.1:1,127.0.0.1:2", prefix="p")
    try:
        assert isinstance(single, RedisEventStore) and not single.is_cluster
        assert single.prefix == "p" and single.idle_ttl == 2
        assert isinstance(cluster, RedisEventStore) and cluster.is_cluster
        kwargs = cluster.client.get_connection_kwargs()
        assert kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == 5.0
    finally:
        await single.close()
        await cluster.close()
