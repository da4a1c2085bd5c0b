import shutil
import tempfile
import uuid
import warnings

import pytest
from conftest import unavailable

from chatbound.compaction import InMemoryEventStore, SessionService

from .workers import open_store


@pytest.fixture(scope="session")
def postgres_server():
    """A private PostgreSQL 16 for the run, from pgserver's binaries. One that cannot start fails in CI,
    and is a skip saying why elsewhere (`unavailable`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
            import pgserver
    except ImportError as error:
        unavailable(f"PostgreSQL tests need pgserver and psycopg, the analyzer's test extra: {error}")
    # Directly under /tmp: as root, pgserver runs the server as its own user and opens every
    # parent folder of the data folder to it, which it must not do to pytest's private folders.
    folder = tempfile.mkdtemp(prefix="chatbound-pg-")
    try:
        server = pgserver.get_server(folder, cleanup_mode="delete")
    except Exception as error:  # noqa: BLE001 - any failure to start is shown: a failure in CI, else a skip
        shutil.rmtree(folder, ignore_errors=True)
        unavailable(f"PostgreSQL (pgserver) could not start here: {type(error).__name__}: {error}")
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        # a commit without waiting for its fsync (like SQLiteEventStore's synchronous=NORMAL):
        # a test server needs no power-loss durability, and the fsync made appends 10x slower
        db.execute("ALTER SYSTEM SET synchronous_commit = off")
        db.execute("SELECT pg_reload_conf()")
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def postgres_uri(postgres_server):
    return postgres_server.get_uri()


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    """Where a shared store lives, as plain data that a spawned process can open: a file or a schema."""
    if request.param == "sqlite":
        return ("sqlite", str(tmp_path / "sessions.db"))
    return ("postgres", request.getfixturevalue("postgres_uri"), f"test_{uuid.uuid4().hex[:12]}")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request, tmp_path):
    """Each of the three stores, empty: the contract tests run on all of them."""
    if request.param == "memory":
        yield InMemoryEventStore()
        return
    if request.param == "sqlite":
        yield open_store(("sqlite", str(tmp_path / "sessions.db")))
        return
    opened = open_store(("postgres", request.getfixturevalue("postgres_uri"), f"test_{uuid.uuid4().hex[:12]}"))
    yield opened
    opened.close()


@pytest.fixture
def service(store):
    """A service whose estimator counts characters, so token figures are exact."""
    return SessionService(store, estimator=len)
