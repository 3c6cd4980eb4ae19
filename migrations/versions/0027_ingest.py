"""The server's share of a cold ingest (issue 27; docs/performance.md, decision 8): a cheaper
``ah.tf_vector`` and no row-trigger call for a row that comes with its vector; the same vectors.

``ah.tf_vector(v)`` (migration 0025_store) turns a positional vector into its term-frequency form:
each lexeme of ``v`` with its term frequency as its one position, none when it occurs once. 0025
built it as the text of a tsvector — every lexeme quoted and escaped, ``string_agg``-ed — and
parsed that text back (``::tsvector``). Here ``strip(v)`` (every lexeme, no positions: C, no text)
is concatenated with a literal of the repeated lexemes only, each with its count: ``||`` merges a
lexeme present on both sides into one with the right side's positions, and a left operand without
positions shifts none of them (``tsvector || tsvector`` adds the left's largest position to the
right's). The result is the vector 0025 built, byte for byte (tested on every tool call of the
shared corpus: tests/test_store_vectors.py). Backend CPU over the 16,051 tool-call vectors of a ×10
load (docs/performance.md, decision 8): 0.98 → 0.79 s, of which 0.45 s is the ``unnest`` both
need for the counts.

Nothing stored changes: ``ah.tool_call_tsv`` and ``ah.tool_call_tsv_ready`` call the function by
name, and the vectors already stored are the ones it computes.

The row triggers keeping ``tsv`` (``message_keep_tsv``, ``tool_call_keep_tsv``; migration 0016) run
on an insert only when the row comes without a vector (``WHEN (NEW.tsv IS NULL)``, evaluated by the
server without calling the PL/pgSQL function): the loader's merges send every new row's vector, and
the call — which copies the whole new row, text, input and output, into a PL/pgSQL record and back
— cost ≈ 21 µs a tool call (0.34 s of a ×10 cold load) to return the row unchanged. Updates keep
their trigger as it was (its own name, ``<table>_keep_tsv_upd``): an update that changes the text
recomputes the vector, any other keeps the stored one. Same functions, same contract.

Revision ID: 0027_ingest
Revises: 0026_owner
Create Date: 2026-12-02
"""

from alembic import op

revision = "0027_ingest"
down_revision = "0026_owner"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE OR REPLACE FUNCTION ah.tf_vector(v tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (SELECT pg_catalog.strip(v)
               || coalesce(pg_catalog.string_agg(
                   '''' || pg_catalog.replace(pg_catalog.replace(u.lexeme, E'\\', E'\\\\'), '''', '''''')
                   || ''':' || pg_catalog.cardinality(u.positions), ' ')
                   FILTER (WHERE pg_catalog.cardinality(u.positions) > 1), '')::pg_catalog.tsvector
        FROM pg_catalog.unnest(v) AS u);

DROP TRIGGER message_keep_tsv ON ah.message;
CREATE TRIGGER message_keep_tsv BEFORE INSERT ON ah.message
    FOR EACH ROW WHEN (NEW.tsv IS NULL) EXECUTE FUNCTION ah.message_keep_tsv();
CREATE TRIGGER message_keep_tsv_upd BEFORE UPDATE ON ah.message
    FOR EACH ROW EXECUTE FUNCTION ah.message_keep_tsv();
DROP TRIGGER tool_call_keep_tsv ON ah.tool_call;
CREATE TRIGGER tool_call_keep_tsv BEFORE INSERT ON ah.tool_call
    FOR EACH ROW WHEN (NEW.tsv IS NULL) EXECUTE FUNCTION ah.tool_call_keep_tsv();
CREATE TRIGGER tool_call_keep_tsv_upd BEFORE UPDATE ON ah.tool_call
    FOR EACH ROW EXECUTE FUNCTION ah.tool_call_keep_tsv();
"""

DOWNGRADE = r"""
DROP TRIGGER IF EXISTS message_keep_tsv_upd ON ah.message;
DROP TRIGGER IF EXISTS message_keep_tsv ON ah.message;
CREATE TRIGGER message_keep_tsv BEFORE INSERT OR UPDATE ON ah.message
    FOR EACH ROW EXECUTE FUNCTION ah.message_keep_tsv();
DROP TRIGGER IF EXISTS tool_call_keep_tsv_upd ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_keep_tsv ON ah.tool_call;
CREATE TRIGGER tool_call_keep_tsv BEFORE INSERT OR UPDATE ON ah.tool_call
    FOR EACH ROW EXECUTE FUNCTION ah.tool_call_keep_tsv();

CREATE OR REPLACE FUNCTION ah.tf_vector(v tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (SELECT coalesce(pg_catalog.string_agg(
                   '''' || pg_catalog.replace(pg_catalog.replace(u.lexeme, E'\\', E'\\\\'), '''', '''''') || ''''
                   || CASE WHEN pg_catalog.cardinality(u.positions) > 1
                           THEN ':' || pg_catalog.cardinality(u.positions) ELSE '' END,
                   ' '), '')::pg_catalog.tsvector
        FROM pg_catalog.unnest(v) AS u);
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)
