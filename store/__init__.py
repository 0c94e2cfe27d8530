"""Persistent state: the shared Base and tables, the database handle, Alembic migrations."""

from store.database import Database, open_database, resolve_database_url

__all__ = ["Database", "open_database", "resolve_database_url"]
