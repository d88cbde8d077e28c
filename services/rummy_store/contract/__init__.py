"""The event-store contract: every implementation of ``rummy_store.EventStore`` passes it.

A pytest suite shipped with the package, so that a third-party store can run it (needs
``pytest``, ``pytest-asyncio`` and ``pytest-timeout``, the ``dev`` extra). In a test module
of your own, import the tests and provide two fixtures::

    import pytest
    from rummy_store.contract import *  # noqa: F403 - the contract's tests

    @pytest.fixture
    def store_factory():
        # a function returning stores on ONE backend: each call like another server
        # process on the same data (a new client), or the same store
        return lambda: MyEventStore(...)

    @pytest.fixture
    def store(store_factory):
        return store_factory()

    @pytest.fixture
    def limited_store():
        # a store with an idle expiry and a request window of 0.4 s each (the limits tests)
        return MyEventStore(..., idle_ttl=0.4, request_ttl=0.4)

This project runs it against the in-memory store and the real Redis
(``tests/contract/test_event_store.py``, fixtures in ``tests/contract/conftest.py``).
"""

from rummy_store.contract._helpers import pytestmark  # noqa: F401 - applies to the tests
from rummy_store.contract.appends import *  # noqa: F403
from rummy_store.contract.creators import *  # noqa: F403
from rummy_store.contract.lifecycle import *  # noqa: F403
from rummy_store.contract.requests import *  # noqa: F403
from rummy_store.contract.results import *  # noqa: F403
from rummy_store.contract.schedule import *  # noqa: F403
from rummy_store.contract.snapshots import *  # noqa: F403
from rummy_store.contract.streams import *  # noqa: F403
