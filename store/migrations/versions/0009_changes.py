"""Which papers changed since a revision, and which database this is.

- `papers.changed_revision`: the corpus revision of the import that last added or
  changed the paper (indexed), so a segmented search index asks for the papers changed
  since the revision it was built at instead of reading every paper again. Papers stored
  before this revision get 0: an index built at any revision has seen them.
- `corpus_state.identity`: a random id (uuid4 hex) that tells one database from a
  recreated one, whose revisions count from 0 again. The existing row gets one here.

The columns are added and dropped in place, not by batch mode's table copy: on SQLite,
dropping `papers` to copy it back would cascade to its sources and ids.

Revision ID: 0009_changes
Revises: 0008_conversation
Create Date: 2026-11-24
"""

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0009_changes"
down_revision = "0008_conversation"
branch_labels = None
depends_on = None

corpus_state = sa.table("corpus_state", sa.column("id", sa.Integer), sa.column("identity", sa.String))


def upgrade() -> None:
    op.add_column("papers", sa.Column("changed_revision", sa.Integer, nullable=False, server_default="0"))
    op.create_index("ix_papers_changed_revision", "papers", ["changed_revision"])
    op.add_column("corpus_state", sa.Column("identity", sa.String(32)))
    # The one row migration 0001 made (if it is still there).
    op.execute(corpus_state.update().where(corpus_state.c.id == 1).values(identity=uuid.uuid4().hex))


def downgrade() -> None:
    op.drop_column("corpus_state", "identity")
    op.drop_index("ix_papers_changed_revision", "papers")
    op.drop_column("papers", "changed_revision")
