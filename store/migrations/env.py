"""Alembic environment: runs migrations on the engine the caller handed over.

`store.database.Database.upgrade` puts its engine into `config.attributes`, so the URL
logic lives in one place and migrations never read the environment themselves.
"""

from alembic import context
from sqlalchemy import create_engine

from store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:  # not handed over: Alembic's own command line, with a URL configured
        url = config.get_main_option("sqlalchemy.url")
        if url is None:
            raise SystemExit("no database to migrate: use `paperclub db upgrade`")
        engine = create_engine(url)
    with engine.begin() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("paperclub runs migrations online only: use `paperclub db upgrade`")
run_migrations_online()
