"""The event-store contract (``rummy_store.contract``) against a local 3-master Redis
Cluster (fixtures in conftest.py): the same tests the single Redis and the in-memory store
pass."""

from rummy_store.contract import *  # noqa: F403 - the contract's tests and pytestmark
