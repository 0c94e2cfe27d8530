"""Shared fixtures: a fresh database per test, on SQLite and on PostgreSQL.

PostgreSQL tests use PAPERCLUB_TEST_POSTGRES_URL (default: the local server's `test`
database). Each test gets a database of its own, created from that server and dropped
afterwards, so runs never see each other's rows. Where no server answers the tests are
skipped with the reason, unless PAPERCLUB_REQUIRE_POSTGRES=1 (CI), where that is an error;
so are the browser tests without chromium, unless PAPERCLUB_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from bot.app import build_services
from bot.corpus.library import Library
from store import Database

PG_URL = os.environ.get("PAPERCLUB_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REQUIRE_PG = os.environ.get("PAPERCLUB_REQUIRE_POSTGRES") == "1"
# The browser tests (tests/memory/*browser*) need Debian's chromium (and chromium-driver):
# skipped with the reason where missing, unless PAPERCLUB_REQUIRE_BROWSER=1 (CI, whose
# .ci/run installs them), where that is an error.
REQUIRE_BROWSER = os.environ.get("PAPERCLUB_REQUIRE_BROWSER") == "1"
SEEDS = Path(str(resources.files("bot") / "demo_corpus"))
REPO = Path(__file__).resolve().parents[1]  # the checkout: README, Procfile, Dockerfile
DATA = REPO / "tests" / "data"  # recorded and hand-made inputs shared by the tests
# The embedding model the tests load (beside the checkout, as in CI: ../shared/models);
# a test never fetches one.
MINILM = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2"
SEED_FILES = {
    "openreview": SEEDS / "iclr2021-openreview.md",
    "poster-session": SEEDS / "iclr2023-poster-session.txt",
    "trending": SEEDS / "trending-papers.txt",
    "topic-abstracts": SEEDS / "iclr2022-topics.txt",
    "blog-review": SEEDS / "iclr2022-blog-review.txt",
}
SEED_COUNTS = {"openreview": 860, "poster-session": 135, "trending": 58, "topic-abstracts": 17, "blog-review": 21}


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than there are cores. Many tests wait (on a served
    process, a fake platform, a 30 s database outage, a page that drips) rather than
    compute, and the extra worker computes meanwhile."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config, items):
    """Tests marked `waits` first: collected last (tests/test_outage.py), a 30-second
    outage ran alone at the end of the run while the other workers had finished."""
    items.sort(key=lambda item: item.get_closest_marker("waits") is None)  # stable: the rest keep their order


def pytest_configure(config):
    """With workers (pytest-xdist), compile the search's loops here, once, before they
    start: numba caches them beside the code, and a fresh checkout has no cache yet, so
    every worker, and every `paperclub` process a test starts meanwhile, would spend
    ~20 s of CPU compiling the same loops at once."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    from bot.search.builtin import loops

    loops.warm()


@pytest.fixture(scope="session", autouse=True)
def private_index_cache(tmp_path_factory):
    """PostgreSQL databases keep their search index under $XDG_CACHE_HOME; every test
    database is new, so point that at this run's temporary directory (inherited by the
    subprocesses tests start) instead of filling the user's cache."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(scope="session")
def postgres_admin():
    """An AUTOCOMMIT engine on the server's maintenance database, or a skip/failure."""
    engine = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text("select 1"))
    except OperationalError as problem:
        engine.dispose()
        reason = f"no PostgreSQL answers at {make_url(PG_URL).render_as_string(hide_password=True)}: {problem.orig}"
        if REQUIRE_PG:
            pytest.fail(f"PAPERCLUB_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    yield engine
    engine.dispose()


def require_programs(*paths: str, required: bool | None = None) -> None:
    """Skip the test where a program it runs is missing (fail when `required`, by default
    PAPERCLUB_REQUIRE_BROWSER=1), naming what to install."""
    missing = [path for path in paths if not Path(path).exists()]
    if not missing:
        return
    reason = (f"{' and '.join(missing)} not installed (Debian: apt-get install chromium chromium-driver; "
              ".ci/run installs them)")
    if REQUIRE_BROWSER if required is None else required:
        pytest.fail(f"PAPERCLUB_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@contextmanager
def scratch_postgres(admin, template: str | None = None) -> Iterator[str]:
    """The URL of a new PostgreSQL database, dropped when the block ends: empty, or a copy
    of `template` (a database nobody is connected to)."""
    name = f"paperclub_test_{uuid.uuid4().hex[:12]}"
    copy = f' TEMPLATE "{template}"' if template else ""
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    try:
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_url(postgres_admin) -> Iterator[str]:
    with scratch_postgres(postgres_admin) as url:
        yield url


@pytest.fixture(scope="session")
def migrated_postgres(postgres_admin) -> Iterator[str]:
    """The name of a PostgreSQL database at the schema's head, built once per worker."""
    with scratch_postgres(postgres_admin) as url:
        database = Database(url)
        database.upgrade()
        database.dispose()  # a template has no one connected
        yield make_url(url).database


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request, tmp_path) -> Iterator[str]:
    """An empty database; on PostgreSQL, for a test that also takes `db` (which upgrades
    it), a copy of the migrated one instead: the same schema without running every
    migration again (`db`'s upgrade finds it at head)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'paperclub.db'}"
        return
    admin = request.getfixturevalue("postgres_admin")
    template = request.getfixturevalue("migrated_postgres") if "db" in request.fixturenames else None
    with scratch_postgres(admin, template=template) as url:
        yield url


@pytest.fixture
def db(database_url) -> Iterator[Database]:
    database = Database(database_url)
    database.upgrade()
    yield database
    database.dispose()


@pytest.fixture
def sqlite_db(tmp_path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'paperclub.db'}")
    database.upgrade()
    yield database
    database.dispose()


def import_seeds(library: Library) -> None:
    for fmt, path in SEED_FILES.items():
        library.import_file(path, collection=fmt)


@pytest.fixture(scope="session")
def seeded_sqlite(tmp_path_factory) -> str:
    """A SQLite file with the five seeds, built once per run (read-only tests share it)."""
    path = tmp_path_factory.mktemp("seeded") / "paperclub.db"
    database = Database(f"sqlite:///{path}")
    database.upgrade()
    import_seeds(Library(database))
    database.dispose()
    return f"sqlite:///{path}"


@pytest.fixture
def seeded_copy(seeded_sqlite, tmp_path) -> str:
    """A private, writable copy of the seeded SQLite database (cheaper than importing)."""
    source = Path(make_url(seeded_sqlite).database)
    target = tmp_path / "copy.db"
    shutil.copyfile(source, target)
    return f"sqlite:///{target}"


@pytest.fixture(scope="session")
def seeded_postgres(postgres_admin) -> Iterator[str]:
    """The name of a PostgreSQL database with the seeds imported, built once per worker:
    each test's seeded database is a copy of it (CREATE DATABASE ... TEMPLATE), not a
    migration and an import of its own (a second each)."""
    with scratch_postgres(postgres_admin) as url:
        database = Database(url)
        database.upgrade()
        import_seeds(Library(database))
        database.dispose()  # a template has no one connected
        yield make_url(url).database


@pytest.fixture
def seeded_db_url(request, seeded_sqlite, tmp_path) -> Iterator[str]:
    """A writable seeded database: the SQLite copy, or a copy of the seeded PostgreSQL one."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield request.getfixturevalue("seeded_copy")
        return
    admin = request.getfixturevalue("postgres_admin")
    with scratch_postgres(admin, template=request.getfixturevalue("seeded_postgres")) as url:
        yield url


@pytest.fixture(scope="session")
def seeded(seeded_sqlite):
    """(library, search service, core) over the seeded corpus (read-only use)."""
    services = build_services(seeded_sqlite)
    yield services.library, services.search, services.core
    services.db.dispose()


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 from ../shared/models, loaded once per test process."""
    from bot.search.embedding import FastEmbedder

    return FastEmbedder(model_dir=MINILM)
