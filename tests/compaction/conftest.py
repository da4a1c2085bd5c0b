import pytest

from chatbound.compaction import InMemoryEventStore, SessionService, SQLiteEventStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        return InMemoryEventStore()
    return SQLiteEventStore(tmp_path / "sessions.db")


@pytest.fixture
def service(store):
    """A service whose estimator counts characters, so token figures are exact."""
    return SessionService(store, estimator=len)
