"""The database layer: URLs, migrations, and that the models describe the migrated schema."""

from __future__ import annotations

import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from store import Database, resolve_database_url
from sqlalchemy import inspect, select, text

from store.database import SCHEMA_HEAD, SchemaOutOfDate, json_text
from store.models import Base, Paper, PaperSource


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "sqlite:///paperclub.db"),
        ({"DATABASE_URL": "postgres://u:p@h:5432/d"}, "postgresql+psycopg://u:p@h:5432/d"),
        ({"DATABASE_URL": "postgresql://h/d"}, "postgresql+psycopg://h/d"),
        ({"DATABASE_URL": "sqlite:///x.db", "PAPERCLUB_DATABASE_URL": "sqlite:///y.db"}, "sqlite:///y.db"),
        ({"PAPERCLUB_DATABASE_URL": "postgresql+psycopg://h/d"}, "postgresql+psycopg://h/d"),
    ],
)
def test_database_url_resolution(env, expected):
    assert resolve_database_url(env) == expected


def test_migrations_create_exactly_the_models(db):
    with db.engine.connect() as connection:
        diffs = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diffs == []
    assert db.current_revision() == db.head_revision()


def test_the_schema_head_is_the_newest_migration(db):
    """open_database skips Alembic for a database at SCHEMA_HEAD: a migration added
    without moving it would leave every database one step behind, unnoticed."""
    assert db.head_revision() == SCHEMA_HEAD
    assert db._at_head()


def test_a_database_behind_the_head_is_upgraded_not_taken_as_current(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'old.db'}")
    database.upgrade()
    with database.engine.begin() as connection:  # as a file of an earlier release
        connection.execute(text("UPDATE alembic_version SET version_num = '0013_follows'"))
        connection.execute(text("DROP TABLE digests"))
        connection.execute(text("DROP TABLE digest_plans"))
        connection.execute(text("CREATE INDEX ix_papers_title_key ON papers (title_key)"))
    assert not database._at_head()
    database.ensure_schema()
    assert database._at_head() and "digests" in inspect(database.engine).get_table_names()
    # The index no query used is gone: each new paper paid an insert into it.
    assert "ix_papers_title_key" not in {i["name"] for i in inspect(database.engine).get_indexes("papers")}
    database.dispose()


def test_fresh_sqlite_file_is_upgraded_on_first_use(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'new.db'}")
    assert database.current_revision() is None
    database.ensure_schema()
    assert database.current_revision() == database.head_revision()
    database.dispose()


@pytest.mark.postgres
def test_stale_postgres_says_to_run_db_upgrade(postgres_url):
    database = Database(postgres_url)
    with pytest.raises(SchemaOutOfDate, match="paperclub db upgrade"):
        database.ensure_schema()
    database.upgrade()
    database.ensure_schema()
    database.dispose()


def test_password_is_hidden_in_descriptions():
    database = Database("postgresql+psycopg://user:secret@127.0.0.1:1/x")
    assert "secret" not in database.describe()
    database.dispose()


def test_json_columns_are_written_by_orjson_and_read_back_equal(db):
    """A JSON column's text is orjson's (compact, UTF-8 as it is), on both databases."""
    fields = {"title": "Über Graphen\u2028", "authors": ["A. Ñ"], "year": 2021, "ids": {"1": "x"}}
    with db.session() as session:
        paper = Paper(title="Über Graphen", title_key="uber graphen")
        paper.sources.append(
            PaperSource(collection="c", source="s", format="jsonl", title_key="k", fields=fields)
        )
        session.add(paper)
    with db.session() as session:
        assert session.scalars(select(PaperSource.fields)).one() == fields
        stored = session.scalars(text("SELECT CAST(fields AS TEXT) FROM paper_sources")).one()
    assert stored.startswith('{"title":"Über Graphen')


def test_what_orjson_refuses_json_writes():
    """An integer past 64 bits and a lone surrogate: json's text, as before orjson."""
    for value in ({"n": 2**70}, {"t": "\ud800"}, [{"k": 1.5}, 2**64]):
        assert json_text(value) == json.dumps(value)
    assert json_text({1: "a", "b": [1, 2]}) == '{"1":"a","b":[1,2]}'
