"""Search vectors from ready text: the loader computes the search text in Python (issue 27).

Revision ID: 0016_search_ready
Revises: 0015_store
Create Date: 2026-12-02

Measured before this revision (docs/performance.md, `just bench-profile`, shared corpus ×10): of
the server's CPU in a cold load, about half was the search-text analysis of the stored vectors
``ah.message.tsv`` / ``ah.tool_call.tsv``, and half of that the regular-expression preprocessing
(``ah.search_text``: CJK spacing + ``ah.code_aware_text``; ``ah.script_lexemes``) rather than
``to_tsvector`` itself. What changes:

- ``ah.search_tsv_ready(search_text, symbols)`` = ``to_tsvector('ah.search', search_text) ||
  symbols::tsvector``: given ``search_text = ah.search_text(doc)`` and ``symbols =
  ah.script_lexemes(doc)::text`` it *is* ``ah.search_tsv(doc)``. The loader computes both in
  Python (`agent_history.analysis.search_text`, tested identical to the SQL functions) and its
  merge stores ``ah.search_tsv_ready(…)`` of the staged values.
- The ``tsv`` columns stop being generated columns (a generated value cannot be supplied) and are
  kept by a BEFORE INSERT OR UPDATE row trigger with the same contract: a row inserted without a
  vector gets ``ah.message_tsv(text)`` / ``ah.tool_call_tsv(name, input, output)``; an update
  that changes the text recomputes it; any other update keeps the stored vector. So every writer
  other than the loader (and the loader's own merges of re-observed rows) still works row by
  row through the SQL functions. Existing vectors are kept as they are (they are those values).
- The term-statistics triggers (0002) are unchanged: they read ``tsv`` of the written rows.
"""

from alembic import op

revision = "0016_search_ready"
down_revision = "0015_store"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION ah.search_tsv_ready(search_text text, symbols text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, coalesce(search_text, ''))
       || coalesce(symbols, '')::pg_catalog.tsvector;

ALTER TABLE ah.message ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE ah.tool_call ALTER COLUMN tsv DROP EXPRESSION;

CREATE FUNCTION ah.message_keep_tsv() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.tsv IS NULL THEN
            NEW.tsv := ah.message_tsv(NEW.text);
        END IF;
    ELSIF NEW.text IS DISTINCT FROM OLD.text THEN
        NEW.tsv := ah.message_tsv(NEW.text);
    ELSE
        NEW.tsv := OLD.tsv;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION ah.tool_call_keep_tsv() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.tsv IS NULL THEN
            NEW.tsv := ah.tool_call_tsv(NEW.name, NEW.input, NEW.output);
        END IF;
    ELSIF (NEW.name, NEW.input, NEW.output) IS DISTINCT FROM (OLD.name, OLD.input, OLD.output) THEN
        NEW.tsv := ah.tool_call_tsv(NEW.name, NEW.input, NEW.output);
    ELSE
        NEW.tsv := OLD.tsv;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER message_keep_tsv BEFORE INSERT OR UPDATE ON ah.message
    FOR EACH ROW EXECUTE FUNCTION ah.message_keep_tsv();
CREATE TRIGGER tool_call_keep_tsv BEFORE INSERT OR UPDATE ON ah.tool_call
    FOR EACH ROW EXECUTE FUNCTION ah.tool_call_keep_tsv();
"""

DOWNGRADE = r"""
DROP TRIGGER IF EXISTS message_keep_tsv ON ah.message;
DROP TRIGGER IF EXISTS tool_call_keep_tsv ON ah.tool_call;
DROP FUNCTION IF EXISTS ah.message_keep_tsv();
DROP FUNCTION IF EXISTS ah.tool_call_keep_tsv();
DROP FUNCTION IF EXISTS ah.search_tsv_ready(text, text);

-- Back to generated columns (a column cannot be made generated in place): re-added, which
-- recomputes every vector; the GIN indexes go with the old columns and are rebuilt. Functions of
-- sql/*.sql may refer to the columns: dropped with CASCADE and re-applied by the next upgrade.
ALTER TABLE ah.message DROP COLUMN tsv CASCADE;
ALTER TABLE ah.tool_call DROP COLUMN tsv CASCADE;
ALTER TABLE ah.message ADD COLUMN tsv tsvector GENERATED ALWAYS AS (ah.message_tsv(text)) STORED;
ALTER TABLE ah.tool_call ADD COLUMN tsv tsvector GENERATED ALWAYS AS (ah.tool_call_tsv(name, input, output)) STORED;
CREATE INDEX message_tsv_idx ON ah.message USING gin (tsv);
CREATE INDEX tool_call_tsv_idx ON ah.tool_call USING gin (tsv);
DELETE FROM ah.meta WHERE left(key, 4) = 'sql:';
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)
