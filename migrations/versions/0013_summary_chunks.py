"""Session summaries chunked for embeddings (issue 15, last part).

Revision ID: 0013_summary_chunks
Revises: 0012_curation
Create Date: 2026-12-01

Twins of ``ah.chunk_source`` / ``ah.chunk`` (migration ``0003_embeddings``, whose docstring is
the storage contract) for the journal summaries of ``ah.session_summary``:

- ``ah.summary_chunk_source`` — one row per summary the embedder has examined, with the sha256
  of the text it chunked (title, objective, narrative, outcomes joined by blank lines,
  `embed.summaries.SUMMARY_TEXT_SQL`): a summary journal-sync changed is chunked again.
- ``ah.summary_chunk`` — one row per embedded piece, its span in that text and the sha256 of
  the exact embedding input; vectors live in the shared cache ``ah.embedding`` keyed by
  (model, input_sha256), so an unchanged summary is never re-embedded.

Both cascade from ``ah.session_summary``: a conversation journal-sync prunes takes its chunks
along. Separate tables (not a third source column on ``ah.chunk``) keep message vector search,
`similar` centroids and the message chunk counts exactly as they were. Unlike ``ah.chunk``
these are not emptied by `rebuild`: summaries are not derived from transcripts and keep their
ids across a rebuild.
"""

from alembic import op

revision = "0013_summary_chunks"
down_revision = "0012_curation"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.summary_chunk_source (
    summary_id     bigint PRIMARY KEY REFERENCES ah.session_summary (id) ON DELETE CASCADE,
    kind           text NOT NULL DEFAULT 'summary',
    source_sha256  bytea NOT NULL,             -- sha256 of the text that was chunked
    chunks         integer NOT NULL,           -- 0: examined, nothing worth embedding
    chunked_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ah.summary_chunk (
    id             bigserial PRIMARY KEY,
    summary_id     bigint NOT NULL REFERENCES ah.session_summary (id) ON DELETE CASCADE,
    kind           text NOT NULL DEFAULT 'summary',
    seq            integer NOT NULL,           -- 0, 1, … within the summary
    char_start     integer NOT NULL,           -- span in the summary text (characters)
    char_end       integer NOT NULL,
    input_sha256   bytea NOT NULL,             -- sha256 of the exact embedding input
    input_chars    integer NOT NULL,
    redactions     integer NOT NULL DEFAULT 0,
    CONSTRAINT summary_chunk_span CHECK (0 <= char_start AND char_start < char_end),
    UNIQUE (summary_id, seq)
);
CREATE INDEX summary_chunk_input_idx ON ah.summary_chunk (input_sha256);
"""

DOWNGRADE = r"""
DROP TABLE IF EXISTS ah.summary_chunk;
DROP TABLE IF EXISTS ah.summary_chunk_source;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
