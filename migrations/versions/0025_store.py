"""Store ≤ 0.75× raw, first steps (issue 27 item 4): tool-call vectors keep term frequencies,
not positions.

Measured before this revision on the shared corpus cloned 10× (docs/performance.md, "Store",
`just bench-store`): the catalogue was 118.5 MB for 105.0 MB of transcripts (1.13×), and
``ah.tool_call.tsv`` alone 29.1 MB — 1.49 M lexeme entries (11.0 MB of lexeme text, 6 MB of
entry headers) and 4.25 M positions (≈ 12 MB with their counts). Search reads a tool call's
positions for two things only: BM25's term frequency (how many positions a lexeme has) and the
phrase bonus of an unquoted multi-word query (``tsv @@ phraseto_tsquery(…)``). What changes:

- ``ah.tf_vector(v)``: the lexemes of ``v``, each with its term frequency as its one position
  (none when it occurs once): ``'pool':3 'py'`` instead of ``'pool':4,17,90 'py':5``. Same lexemes,
  same ``length()`` (so the term statistics and the BM25 document length are unchanged), and the
  term frequency is ``coalesce(positions[1], 1)`` instead of ``cardinality(positions)``
  (``ah.bm25_tf_terms``, sql/40_search.sql: identical scores). 654 k of the 1.49 M lexemes occur
  more than once; the vector is 20.0 MB instead of 29.1 MB.
- ``ah.tool_call_tsv(name, input, output)`` — what the row trigger stores for a row written
  without a vector — is ``ah.tf_vector(ah.search_tsv(ah.tool_call_doc(…)))``; the loader's merge
  stores ``ah.tool_call_tsv_ready(search_text, symbols)``, the same vector from the ready text.
- Phrases over tool calls cannot be checked on such a vector: search checks them on the
  positional vector recomputed for the candidates that hold every lexeme of the phrase
  (agent_history.search.fts; quoted phrases were already checked on the raw text).
- The stored vectors are rewritten in place (the keep-vector and statistics triggers off for the
  statement: the lexemes, and so the term statistics, do not change).

ParadeDB catalogues: the BM25 index does not read ``tsv``; unchanged. Message vectors keep their
positions: prose is where phrases rank (the implicit phrase bonus checks ``tsv`` directly).

Revision ID: 0025_store
Revises: 0024_hosts
Create Date: 2026-12-02
"""

from alembic import op

revision = "0025_store"
down_revision = "0024_hosts"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION ah.tf_vector(v tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (SELECT coalesce(pg_catalog.string_agg(
                   '''' || pg_catalog.replace(pg_catalog.replace(u.lexeme, E'\\', E'\\\\'), '''', '''''') || ''''
                   || CASE WHEN pg_catalog.cardinality(u.positions) > 1
                           THEN ':' || pg_catalog.cardinality(u.positions) ELSE '' END,
                   ' '), '')::pg_catalog.tsvector
        FROM pg_catalog.unnest(v) AS u);

CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.tf_vector(ah.search_tsv(ah.tool_call_doc(name, input, output)));

CREATE FUNCTION ah.tool_call_tsv_ready(search_text text, symbols text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.tf_vector(ah.search_tsv_ready(search_text, symbols));
"""

REWRITE = r"""
ALTER TABLE ah.tool_call DISABLE TRIGGER tool_call_keep_tsv;
ALTER TABLE ah.tool_call DISABLE TRIGGER tool_call_search_stats_upd;
UPDATE ah.tool_call SET tsv = {value} WHERE tsv IS NOT NULL;
ALTER TABLE ah.tool_call ENABLE TRIGGER tool_call_keep_tsv;
ALTER TABLE ah.tool_call ENABLE TRIGGER tool_call_search_stats_upd;
"""

DOWNGRADE = r"""
CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.search_tsv(ah.tool_call_doc(name, input, output));
"""

DOWNGRADE_DROP = r"""
DROP FUNCTION IF EXISTS ah.tool_call_tsv_ready(text, text);
DROP FUNCTION IF EXISTS ah.tf_vector(tsvector);
"""


def upgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(UPGRADE)
    bind.exec_driver_sql(REWRITE.replace("{value}", "ah.tf_vector(tsv)"))


def downgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(DOWNGRADE)
    bind.exec_driver_sql(REWRITE.replace("{value}", "ah.tool_call_tsv(name, input, output)"))
    bind.exec_driver_sql(DOWNGRADE_DROP)
