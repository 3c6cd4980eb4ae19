"""Embeddings: chunks of searchable text and a vector cache keyed by (model, sha256 of the input).

Revision ID: 0003_embeddings
Revises: 0002_search
Create Date: 2026-11-30

Design (docs/design.md §8–9):

- ``ah.chunk_source`` — derived (a rebuild empties it): one row per message or tool call the
  embedder has examined, with the sha256 of the text it chunked (``source_sha256``; a changed
  text is chunked again) and how many chunks it gave (0: not worth embedding, not examined
  again). ``message_id`` xor ``tool_call_id``, cascading on delete, so a purged file takes its
  rows along.
- ``ah.chunk`` — derived: one row per piece that is embedded, with its source row, its
  character span in the source text (``char_start``/``char_end``, Python ``str`` indices =
  PostgreSQL character positions − 1) and ``input_sha256``, the sha256 of the exact string sent
  to the model: context header + redacted chunk text.
- ``ah.embedding`` — kept across rebuilds: ``(model, input_sha256) → vector``. A rebuilt
  catalogue produces the same inputs, finds them here and costs nothing. ``model`` is the
  configured model key (``name`` or ``name@dimensions``).
- Dimensions are per model, so ``vector`` has no fixed dimension; ``ah.embedding_model``
  records each model's dimension. Each model gets its own partial expression HNSW index, built
  by the embed worker once the model has vectors (after the bulk load, docs/design.md §7)::

      CREATE INDEX embedding_hnsw_<md5(model)[:12]> ON ah.embedding
        USING hnsw ((vector::vector(384)) vector_cosine_ops) WHERE model = '<model>';

  (``halfvec(N)`` / ``halfvec_cosine_ops`` above 2,000 dimensions: pgvector indexes ``vector``
  up to 2,000 and ``halfvec`` up to 4,000.) A query uses the index when it repeats the
  expression and the predicate: ``WHERE model = '<model>' ORDER BY vector::vector(384) <=> $1``.
  One table rather than a table per model keeps the cache, the joins and the rebuild rule simple.
- ``ah.embedding_failure`` — inputs the endpoint rejected (4xx for that input alone); skipped
  until a rebuild empties the table.
- ``ah.embedding_usage`` — tokens and requests per UTC day and model, kept across rebuilds: the
  per-day token cap reads it.
"""

from alembic import op

revision = "0003_embeddings"
down_revision = "0002_search"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TABLE ah.chunk_source (
    id             bigserial PRIMARY KEY,
    message_id     bigint REFERENCES ah.message (id) ON DELETE CASCADE,
    tool_call_id   bigint REFERENCES ah.tool_call (id) ON DELETE CASCADE,
    kind           text NOT NULL,              -- message | tool_error | tool_output
    source_sha256  bytea NOT NULL,             -- sha256 of the text that was chunked
    chunks         integer NOT NULL,           -- 0: examined, nothing worth embedding
    chunked_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT chunk_source_one_source CHECK (num_nonnulls(message_id, tool_call_id) = 1)
);
CREATE UNIQUE INDEX chunk_source_message_key ON ah.chunk_source (message_id) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX chunk_source_tool_call_key ON ah.chunk_source (tool_call_id) WHERE tool_call_id IS NOT NULL;

CREATE TABLE ah.chunk (
    id             bigserial PRIMARY KEY,
    message_id     bigint REFERENCES ah.message (id) ON DELETE CASCADE,
    tool_call_id   bigint REFERENCES ah.tool_call (id) ON DELETE CASCADE,
    kind           text NOT NULL,              -- message | tool_error | tool_output
    seq            integer NOT NULL,           -- 0, 1, … within the source row
    char_start     integer NOT NULL,           -- span in the source text (characters)
    char_end       integer NOT NULL,
    input_sha256   bytea NOT NULL,             -- sha256 of the exact embedding input
    input_chars    integer NOT NULL,           -- length of that input
    redactions     integer NOT NULL DEFAULT 0, -- secret-shaped spans replaced by [REDACTED]
    CONSTRAINT chunk_one_source CHECK (num_nonnulls(message_id, tool_call_id) = 1),
    CONSTRAINT chunk_span CHECK (0 <= char_start AND char_start < char_end)
);
-- Natural keys; they also back the ON DELETE CASCADE checks and the pending-work anti-joins.
CREATE UNIQUE INDEX chunk_message_key ON ah.chunk (message_id, seq) WHERE message_id IS NOT NULL;
CREATE UNIQUE INDEX chunk_tool_call_key ON ah.chunk (tool_call_id, seq) WHERE tool_call_id IS NOT NULL;
-- Vector search joins embedding → chunk by input hash.
CREATE INDEX chunk_input_idx ON ah.chunk (input_sha256);

CREATE TABLE ah.embedding_model (
    model       text PRIMARY KEY,              -- model key: name or name@dimensions
    provider    text NOT NULL,                 -- openai | local
    dimensions  integer NOT NULL CHECK (dimensions BETWEEN 1 AND 16000),
    index_name  text,                          -- its HNSW index, once built
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ah.embedding (
    model         text NOT NULL,
    input_sha256  bytea NOT NULL,
    vector        vector NOT NULL,             -- dimension: ah.embedding_model.dimensions
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, input_sha256)
);

CREATE TABLE ah.embedding_failure (
    model         text NOT NULL,
    input_sha256  bytea NOT NULL,
    error         text NOT NULL,
    failed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, input_sha256)
);

CREATE TABLE ah.embedding_usage (
    day       date NOT NULL,                   -- UTC
    model     text NOT NULL,
    tokens    bigint NOT NULL DEFAULT 0,       -- reported by the endpoint, else estimated
    inputs    bigint NOT NULL DEFAULT 0,
    requests  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, model)
);
"""

DOWNGRADE = r"""
-- the per-model HNSW indexes go with their table
DROP TABLE IF EXISTS ah.embedding_usage;
DROP TABLE IF EXISTS ah.embedding_failure;
DROP TABLE IF EXISTS ah.embedding;
DROP TABLE IF EXISTS ah.embedding_model;
DROP TABLE IF EXISTS ah.chunk;
DROP TABLE IF EXISTS ah.chunk_source;
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)
