"""Persistent state: SQLAlchemy 2 models, the database handle, Alembic migrations."""

from store.database import Database, resolve_database_url

__all__ = ["Database", "resolve_database_url"]
