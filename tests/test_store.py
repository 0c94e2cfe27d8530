"""The database layer: URLs, migrations, and that the models describe the migrated schema."""

from __future__ import annotations

import json

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select, text

from bot.app import FEATURES, schema
from store import Database, resolve_database_url
from store.database import SchemaOutOfDate, json_text, migrations_head, schema_head
from store.models import Paper, PaperSource


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
    """Every table of the shared Base, the shared services' and each listed feature's
    (bot.app.schema), is what the migrations make: a feature's model without its
    migration, or a migration without its model, shows here."""
    with db.engine.connect() as connection:
        diffs = compare_metadata(MigrationContext.configure(connection), schema())
    assert diffs == []
    assert db.current_revision() == db.head_revision()


def test_every_table_belongs_to_the_shared_layers_or_a_listed_feature():
    """A table is defined in store.models, bot.services.models or a feature's folder: the
    schema is gathered from the features, not from a list."""
    from store.models import Base

    owners = {("store",), ("bot", "services")} | {("bot", name) for name in FEATURES}
    ours = [m for m in Base.registry.mappers if m.class_.__module__.split(".")[0] in ("bot", "store")]
    for mapper in ours:  # (a test's toy feature keeps its table in tests/)
        module = tuple(mapper.class_.__module__.split(".")[: 1 if mapper.class_.__module__.startswith("store") else 2])
        assert module in owners, f"{mapper.class_.__name__} ({mapper.class_.__module__}) is nobody's table"
    assert set(schema().tables) == {m.local_table.name for m in ours}


def test_the_schema_head_is_the_newest_migration(db):
    """open_database skips Alembic for a database at the newest migration, read from the
    migrations' files: it must be the head Alembic finds."""
    assert db.head_revision() == schema_head()
    assert db._at_head()


def test_the_head_is_the_migration_nothing_revises(tmp_path):
    migration = 'revision = "{0}"\ndown_revision = {1}\n'
    (tmp_path / "a.py").write_text(migration.format("0001_a", "None"))
    (tmp_path / "c.py").write_text(migration.format("0003_c", '"0002_b"'))
    (tmp_path / "b.py").write_text(migration.format("0002_b", "'0001_a'"))
    assert migrations_head(tmp_path) == "0003_c"
    (tmp_path / "d.py").write_text(migration.format("0004_d", '"0002_b"'))  # a second branch
    with pytest.raises(RuntimeError, match="2 heads"):
        migrations_head(tmp_path)


@pytest.mark.parametrize("steps", [1, 3])
def test_a_database_behind_the_head_is_upgraded_not_taken_as_current(tmp_path, steps):
    """A file of an earlier release (the newest migrations undone) is brought to the head
    on first use: every table of the schema is there again, as the models say."""
    database = Database(f"sqlite:///{tmp_path / 'old.db'}")
    database.upgrade()
    command.downgrade(database._alembic_config(), f"-{steps}")
    assert not database._at_head()
    database.ensure_schema()
    assert database._at_head()
    assert set(schema().tables) <= set(inspect(database.engine).get_table_names())
    with database.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), schema()) == []
    database.dispose()


def test_upgrading_past_0015_drops_the_title_key_index(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'old.db'}")
    database.upgrade()
    command.downgrade(database._alembic_config(), "0014_digest")
    assert "ix_papers_title_key" in {i["name"] for i in inspect(database.engine).get_indexes("papers")}
    database.ensure_schema()
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
