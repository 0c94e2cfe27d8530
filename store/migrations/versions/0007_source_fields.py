"""Each source's own fields, so that a paper's shown fields no longer depend on import order;
every source's title key, so that a paper is found by any of them; identifiers normalised.

Sources stored before this revision did not keep what they said, only the paper's merged
values; each gets those values as its fields (the best that is known), and importing a
source again replaces them with its own. arXiv ids lose their version and DOIs are lower
cased (bot.corpus.identifiers), as the readers now store them, so that `show` finds them.

Revision ID: 0007_source_fields
Revises: 0006_edges
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

# The readers' own normalisation, so that old rows and new imports spell ids alike.
from bot.corpus.identifiers import normalise

revision = "0007_source_fields"
down_revision = "0006_edges"
branch_labels = None
depends_on = None

CHUNK = 500
_NORMALISED = ("arxiv", "doi", "openreview")
_PAPER_FIELDS = (
    "title", "title_derived", "authors", "abstract", "url", "track", "presentation", "award",
    "venue", "year", "tags", "notes",
)

papers = sa.table(
    "papers",
    sa.column("id", sa.Integer),
    sa.column("title_key", sa.String),
    sa.column("title", sa.Text),
    sa.column("title_derived", sa.Boolean),
    sa.column("authors", sa.JSON),
    sa.column("abstract", sa.Text),
    sa.column("url", sa.Text),
    sa.column("track", sa.String),
    sa.column("presentation", sa.String),
    sa.column("award", sa.String),
    sa.column("venue", sa.String),
    sa.column("year", sa.Integer),
    sa.column("tags", sa.JSON),
    sa.column("notes", sa.JSON),
)
external_ids = sa.table(
    "paper_external_ids",
    sa.column("id", sa.Integer),
    sa.column("paper_id", sa.Integer),
    sa.column("scheme", sa.String),
    sa.column("value", sa.String),
)
sources = sa.table(
    "paper_sources",
    sa.column("paper_id", sa.Integer),
    sa.column("title_key", sa.String),
    sa.column("fields", sa.JSON),
)


def upgrade() -> None:
    with op.batch_alter_table("paper_sources") as batch:
        batch.add_column(sa.Column("title_key", sa.String(512)))
        batch.add_column(sa.Column("fields", sa.JSON))
    connection = op.get_bind()
    _normalise_ids(connection)
    _fill_sources(connection)
    with op.batch_alter_table("paper_sources") as batch:
        batch.alter_column("title_key", existing_type=sa.String(512), nullable=False)
        batch.alter_column("fields", existing_type=sa.JSON, nullable=False)
    op.create_index("ix_paper_sources_title_key", "paper_sources", ["title_key"])


def downgrade() -> None:
    op.drop_index("ix_paper_sources_title_key", "paper_sources")
    with op.batch_alter_table("paper_sources") as batch:
        batch.drop_column("fields")
        batch.drop_column("title_key")


def _normalise_ids(connection: sa.Connection) -> None:
    """Each arXiv id, DOI and OpenReview id in its normalised spelling, a chunk at a time."""
    last = 0
    while True:
        rows = connection.execute(
            sa.select(external_ids.c.id, external_ids.c.paper_id, external_ids.c.scheme, external_ids.c.value)
            .where(external_ids.c.scheme.in_(_NORMALISED), external_ids.c.id > last)
            .order_by(external_ids.c.id)
            .limit(CHUNK)
        ).all()
        if not rows:
            return
        changes = [(row, normalise(row.scheme, row.value)) for row in rows]
        changes = [(row, pair) for row, pair in changes if pair != (row.scheme, row.value)]
        taken = _holders(connection, [pair for _, pair in changes])
        for row, pair in changes:
            owner = taken.get(pair)
            if owner is None:  # the row takes its normalised spelling
                update = sa.update(external_ids).where(external_ids.c.id == row.id)
                connection.execute(update.values(scheme=pair[0], value=pair[1]))
                taken[pair] = row.paper_id
            elif owner == row.paper_id:  # the paper holds it already, spelt the new way
                connection.execute(sa.delete(external_ids).where(external_ids.c.id == row.id))
            # else another paper holds the normalised id: this row keeps its old spelling
        last = rows[-1].id


def _holders(connection: sa.Connection, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    if not pairs:
        return {}
    pair = sa.tuple_(external_ids.c.scheme, external_ids.c.value)
    query = sa.select(external_ids.c.scheme, external_ids.c.value, external_ids.c.paper_id).where(pair.in_(pairs))
    return {(scheme, value): paper_id for scheme, value, paper_id in connection.execute(query)}


def _fill_sources(connection: sa.Connection) -> None:
    """Every source gets its paper's values as its fields, a chunk of papers at a time."""
    fill = (
        sa.update(sources)
        .where(sources.c.paper_id == sa.bindparam("pid"))
        .values(title_key=sa.bindparam("key"), fields=sa.bindparam("values", type_=sa.JSON))
    )
    last = 0
    while True:
        chunk = connection.execute(
            sa.select(papers).where(papers.c.id > last).order_by(papers.c.id).limit(CHUNK)
        ).all()
        if not chunk:
            return
        ids = _ids_of(connection, [paper.id for paper in chunk])
        rows = [
            {"pid": paper.id, "key": paper.title_key, "values": _fields(paper, ids.get(paper.id, {}))}
            for paper in chunk
        ]
        connection.execute(fill, rows)
        last = chunk[-1].id


def _ids_of(connection: sa.Connection, paper_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each paper's ids, the first row per scheme (what the paper showed before)."""
    held = sa.select(external_ids.c.paper_id, external_ids.c.scheme, external_ids.c.value).where(
        external_ids.c.paper_id.in_(paper_ids)
    )
    ids: dict[int, dict[str, str]] = {}
    for paper_id, scheme, value in connection.execute(held.order_by(external_ids.c.id)):
        ids.setdefault(paper_id, {}).setdefault(scheme, value)
    return ids


def _fields(paper: sa.Row, ids: dict[str, str]) -> dict:
    """The paper's values in the form bot.corpus.merge.source_fields stores."""
    fields = {name: getattr(paper, name) for name in _PAPER_FIELDS}
    fields["external_ids"] = dict(sorted(ids.items()))
    return fields
