"""Each source's own fields, so that a paper's shown fields no longer depend on import order;
every source's title key, so that a paper is found by any of them; identifiers normalised.

Sources stored before this revision did not keep what they said, only the paper's merged
values; each gets those values as its fields (the best that is known), and importing a
source again replaces them with its own. arXiv ids lose their version and DOIs are lower
cased (bot.corpus.identifiers), as the readers now store them, so that `show` finds them.
The normalisation is a copy frozen as of this revision (below): the migration keeps
doing what it did, whatever the live parser learns later.

Revision ID: 0007_source_fields
Revises: 0006_edges
Create Date: 2026-11-24
"""

import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import sqlalchemy as sa
from alembic import op

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
        changes = [(row, _normalise(row.scheme, row.value)) for row in rows]
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


def _fields(paper: sa.Row[Any], ids: dict[str, str]) -> dict[str, Any]:
    """The paper's values in the form bot.corpus.merge.source_fields stores."""
    fields = {name: getattr(paper, name) for name in _PAPER_FIELDS}
    fields["external_ids"] = dict(sorted(ids.items()))
    return fields


# --- the readers' normalisation, frozen as of revision 0007 ------------------------------
# A copy of bot.corpus.identifiers.normalise and what it calls, as they were when this
# revision was written, so that old rows and that day's imports spell ids alike. Frozen:
# a migration must do forever what it did then, and store imports nothing from bot.
# tests/test_migrations.py checks that it still agrees with the live parser.

_ARXIV, _DOI_SCHEME, _OPENREVIEW = "arxiv", "doi", "openreview"
_NEW_ARXIV = re.compile(r"(\d{2})(\d{2})\.(\d{4,5})(?:v\d+)?", re.ASCII)
_OLD_ARXIV = re.compile(
    r"([a-z]+(?:-[a-z]+)?)(?:\.[a-z-]{2,})?/(\d{2})(\d{2})(\d{3})(?:v\d+)?", re.ASCII | re.I
)
_FIRST_NEW_STYLE = 704  # April 2007
_FIVE_DIGITS_FROM = 1501  # January 2015
_DOI = re.compile(r"10\.\d{4,9}(?:\.\d+)*/\S+", re.ASCII)
_ARXIV_DOI = "10.48550/arxiv."
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{4,}")
_PREFIX = re.compile(r"(arxiv|doi)\s*:\s*(.+)", re.I | re.S)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)
_BARE_LINK = re.compile(r"(?:[a-z0-9-]+\.)*(?:arxiv\.org|doi\.org|openreview\.net)/", re.I)
_ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}
_DOI_HOSTS = {"doi.org", "www.doi.org", "dx.doi.org"}
_OPENREVIEW_HOSTS = {"openreview.net", "www.openreview.net"}
_ARXIV_PAGE = re.compile(r"/(?:abs|pdf|html|ps|format)/(.+?)(?:\.pdf)?/?$", re.I)
_OPENREVIEW_PAGE = re.compile(r"/(?:forum|pdf|attachment)/?$", re.I)


def _normalise(scheme: str, value: str) -> tuple[str, str]:
    """A source's (scheme, value) in stored form; a value that does not read as its
    scheme is kept as given (stripped)."""
    scheme, value = scheme.strip().lower(), value.strip()
    found = _READ_AS.get(scheme, lambda _: None)(value)
    return found or (scheme, value)


def _arxiv_id(text: str) -> str | None:
    text = text.strip()
    if text[:6].lower() == "arxiv:":
        text = text[6:].strip()
    new = _NEW_ARXIV.fullmatch(text)
    if new:
        year_month, number = int(new.group(1) + new.group(2)), new.group(3)
        digits = 5 if year_month >= _FIVE_DIGITS_FROM else 4
        valid = year_month >= _FIRST_NEW_STYLE and _month(new.group(2)) and len(number) == digits
        return f"{new.group(1)}{new.group(2)}.{number}" if valid else None
    old = _OLD_ARXIV.fullmatch(text)
    if old and _month(old.group(3)):
        return f"{old.group(1).lower()}/{old.group(2)}{old.group(3)}{old.group(4)}"
    return None


def _from_link(url: str) -> tuple[str, str] | None:
    if not _URL.match(url):
        url = "https://" + url
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed IPv6 host: no identifier in it
        return None
    host = (parts.hostname or "").lower()
    if host in _ARXIV_HOSTS:
        page = _ARXIV_PAGE.search(unquote(parts.path))
        return _tagged(_ARXIV, _arxiv_id(page.group(1))) if page else None
    if host in _DOI_HOSTS:
        return _from_doi(unquote(parts.path).lstrip("/"))
    if host in _OPENREVIEW_HOSTS and _OPENREVIEW_PAGE.search(parts.path):
        ids = parse_qs(parts.query).get("id", [])
        return (_OPENREVIEW, ids[0]) if ids and _OPENREVIEW_ID.fullmatch(ids[0]) else None
    return None


def _is_link(text: str) -> bool:
    return bool(_URL.match(text) or _BARE_LINK.match(text))


def _from_doi(text: str) -> tuple[str, str] | None:
    text = text.strip()
    if not _DOI.fullmatch(text):
        return None
    value = text.lower()
    if value.startswith(_ARXIV_DOI):  # arXiv's DataCite DOI names the arXiv paper
        return _tagged(_ARXIV, _arxiv_id(value[len(_ARXIV_DOI) :]))
    return _DOI_SCHEME, value


def _read_arxiv(value: str) -> tuple[str, str] | None:
    found = _from_link(value) if _is_link(value) else _tagged(_ARXIV, _arxiv_id(value))
    return found if found and found[0] == _ARXIV else None


def _read_doi(value: str) -> tuple[str, str] | None:
    if _is_link(value):
        return _from_link(value)
    prefixed = _PREFIX.fullmatch(value)
    if prefixed and prefixed.group(1).lower() == _DOI_SCHEME:
        value = prefixed.group(2)
    return _from_doi(value)


def _read_openreview(value: str) -> tuple[str, str] | None:
    if _is_link(value):
        found = _from_link(value)
        return found if found and found[0] == _OPENREVIEW else None
    return (_OPENREVIEW, value) if _OPENREVIEW_ID.fullmatch(value) else None


_READ_AS = {_ARXIV: _read_arxiv, _DOI_SCHEME: _read_doi, _OPENREVIEW: _read_openreview}


def _tagged(scheme: str, value: str | None) -> tuple[str, str] | None:
    return (scheme, value) if value else None


def _month(text: str) -> bool:
    return 1 <= int(text) <= 12
