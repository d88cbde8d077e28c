"""The event-store contract (``rummy_store.contract``, shipped with the package) against
the in-memory store and the real Redis (fixtures in conftest.py; Redis runs are marked
``redis``)."""

from rummy_store.contract import *  # noqa: F403 - the contract's tests and pytestmark
