"""Keyword search on plain PostgreSQL: code-aware tsvectors, GIN indexes, term statistics (docs/design.md §8).

Revision ID: 0002_search
Revises: 0001_core
Create Date: 2026-11-30

What this adds, and why:

- ``ah.search`` — a text search configuration copied from ``english`` (Snowball stemming, English
  stop words). The parser keeps ``/src/db/pool.py`` (file), ``pool.py`` (host), ``kebab-case``
  (hyphenated word + parts), ``camelCase`` (one word) and ``sha256`` (numword) whole.
- ``ah.code_aware_text(text)`` — IMMUTABLE: the original text, then a line of identifier parts
  for every *compound* token (one with a camelCase / ACRONYMWord / letter-digit boundary or an
  inner ``_ . / :``), so both the whole token and its parts are searchable:
  ``snake_case`` → ``snakecase`` (joined form; the parser itself splits on ``_``) + ``snake case``;
  ``useEffect`` → ``use Effect``; ``HTTPServer`` → ``HTTP Server``; ``sha256`` → ``sha 256``;
  ``src/db/pool.py`` → ``pool.py`` (basename) + ``src db pool py``. Single-character parts are
  dropped, and hex ids (git shas, uuids, versions, addresses) are never split. Parts of
  ``snake_case`` words are counted twice (parser + parts line): a small, uniform tf distortion
  that BM25's tf saturation absorbs. Changing this function changes stored vectors: do it only in
  a new revision that rewrites the columns.
- Stored generated ``tsv`` columns (GIN-indexed):
  ``message.tsv`` over the first 131,072 characters of ``text``;
  ``tool_call.tsv`` over ``name`` + the first 32,768 characters of ``input`` + the first 65,536
  characters of ``output``. The caps bound ingest cost and keep every vector below
  PostgreSQL's 1 MB tsvector limit (a failing generated column would fail a loader batch); text
  beyond them is not keyword-searchable.
- Term statistics for BM25 (IDF and average length), per corpus (``message`` | ``tool_call``):
  ``ah.search_term(corpus, lexeme, df)`` and ``ah.search_corpus(corpus, doc_count, total_len)``
  where a document's length is ``length(tsv)`` (distinct lexemes, O(1) to read) and only
  documents with a non-empty vector are counted. They are maintained set-based by STATEMENT-level
  AFTER triggers with transition tables, one per event (PostgreSQL allows transition tables only
  on single-event triggers). ``INSERT … ON CONFLICT DO UPDATE`` (the loader's merge) fires the
  INSERT trigger with the inserted rows and the UPDATE trigger with the updated rows; the UPDATE
  trigger counts only rows whose vector changed. TRUNCATE resets the corpus.
"""

from alembic import op

revision = "0002_search"
down_revision = "0001_core"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE TEXT SEARCH CONFIGURATION ah.search (COPY = pg_catalog.english);

-- See the module docstring. Pattern notes:
--   compound token: a run of [A-Za-z0-9_./:-] containing a camel/acronym/letter-digit boundary
--                   or an inner _ . / : between alphanumerics;
--   hex ids:        only hex digits (with at least one digit), optionally dotted/colon/dash groups.
CREATE FUNCTION ah.code_aware_text(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (
    SELECT CASE WHEN c.compound IS NULL THEN t ELSE
        t || E'\n' || pg_catalog.concat_ws(' ',
            -- joined forms of snake_case identifiers: the whole token as one lexeme
            (SELECT pg_catalog.string_agg(pg_catalog.replace(m[1], '_', ''), ' ')
               FROM pg_catalog.regexp_matches(c.compound, '[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+', 'g') AS m),
            -- basenames of paths (pool.py of src/db/pool.py)
            c.base,
            -- parts: split camelCase, ACRONYMWord, letter/digit boundaries and separators;
            -- drop single characters
            pg_catalog.regexp_replace(
              pg_catalog.regexp_replace(
                pg_catalog.regexp_replace(
                  pg_catalog.regexp_replace(
                    pg_catalog.regexp_replace(c.compound, '([a-z])([A-Z])', '\1 \2', 'g'),
                    '([A-Z])([A-Z][a-z])', '\1 \2', 'g'),
                  '([A-Za-z])([0-9])|([0-9])([A-Za-z])', '\1\3 \2\4', 'g'),
                '[^A-Za-z0-9]+', ' ', 'g'),
              '(^| )[A-Za-z0-9](?= |$)', ' ', 'g'))
    END
    FROM (
        SELECT pg_catalog.string_agg(m[1], ' ') AS compound,
               pg_catalog.string_agg(pg_catalog.substring(m[1], '[^/]+$'), ' ')
                   FILTER (WHERE m[1] ~ '/[^/]*[._-][^/]*$') AS base
        FROM pg_catalog.regexp_matches(
            t,
            '[A-Za-z0-9_./:-]*(?:[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Za-z0-9][_./:][A-Za-z0-9])[A-Za-z0-9_./:-]*',
            'g') AS m
        WHERE m[1] !~ '^[0-9a-fA-F]*[0-9][0-9a-fA-F]*([.:-][0-9a-fA-F]+)*$'
    ) AS c
);

-- The documents: one vector per message and per tool call (caps: see the module docstring).
CREATE FUNCTION ah.message_tsv(t text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, ah.code_aware_text(pg_catalog.left(coalesce(t, ''), 131072)));

CREATE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, ah.code_aware_text(
    coalesce(name, '') || E'\n' || pg_catalog.left(coalesce(input, ''), 32768)
    || E'\n' || pg_catalog.left(coalesce(output, ''), 65536)));

ALTER TABLE ah.message ADD COLUMN tsv tsvector GENERATED ALWAYS AS (ah.message_tsv(text)) STORED;
ALTER TABLE ah.tool_call ADD COLUMN tsv tsvector GENERATED ALWAYS AS (ah.tool_call_tsv(name, input, output)) STORED;

-- Term statistics (BM25 IDF and average document length).
CREATE TABLE ah.search_corpus (
    corpus     text PRIMARY KEY,            -- message | tool_call
    doc_count  bigint NOT NULL DEFAULT 0,   -- documents with a non-empty vector
    total_len  bigint NOT NULL DEFAULT 0    -- Σ length(tsv) over them (distinct lexemes)
);
CREATE TABLE ah.search_term (
    corpus  text NOT NULL,
    lexeme  text NOT NULL,
    df      bigint NOT NULL,                -- documents containing the lexeme
    PRIMARY KEY (corpus, lexeme)
);

-- Add the lexemes of `added` and subtract those of `removed` (+1/-1 per document), then drop
-- terms whose document frequency reached zero. Lexemes are upserted in sorted order so two
-- writers lock term rows in the same order.
CREATE FUNCTION ah.search_stats_apply(p_corpus text, added tsvector[], removed tsvector[]) RETURNS void
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    gone text[];
BEGIN
    WITH delta AS (
        SELECT l.lexeme, sum(d.sign) AS df
        FROM (
            SELECT v, 1 AS sign FROM unnest(added) AS v
            UNION ALL
            SELECT v, -1 FROM unnest(removed) AS v
        ) AS d
        CROSS JOIN LATERAL unnest(tsvector_to_array(d.v)) AS l(lexeme)
        GROUP BY l.lexeme
        HAVING sum(d.sign) <> 0
        ORDER BY l.lexeme
    ), up AS (
        INSERT INTO ah.search_term AS s (corpus, lexeme, df)
        SELECT p_corpus, delta.lexeme, delta.df FROM delta
        ON CONFLICT (corpus, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df
        RETURNING s.lexeme, s.df
    )
    SELECT array_agg(up.lexeme) FILTER (WHERE up.df <= 0) INTO gone FROM up;

    -- A separate statement: a row updated by a data-modifying CTE cannot be deleted reliably
    -- by the same statement.
    IF gone IS NOT NULL THEN
        DELETE FROM ah.search_term WHERE corpus = p_corpus AND lexeme = ANY (gone) AND df <= 0;
    END IF;

    INSERT INTO ah.search_corpus AS c (corpus, doc_count, total_len)
    SELECT p_corpus,
           coalesce((SELECT count(*) FROM unnest(added) AS v WHERE length(v) > 0), 0)
             - coalesce((SELECT count(*) FROM unnest(removed) AS v WHERE length(v) > 0), 0),
           coalesce((SELECT sum(length(v)) FROM unnest(added) AS v), 0)
             - coalesce((SELECT sum(length(v)) FROM unnest(removed) AS v), 0)
    ON CONFLICT (corpus) DO UPDATE
       SET doc_count = c.doc_count + EXCLUDED.doc_count,
           total_len = c.total_len + EXCLUDED.total_len
     WHERE EXCLUDED.doc_count <> 0 OR EXCLUDED.total_len <> 0;
END
$$;

-- Statement-level trigger bodies; TG_ARGV[0] names the corpus. Transition tables are named
-- new_rows / old_rows by the CREATE TRIGGER statements below.
CREATE FUNCTION ah.search_stats_on_insert() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM ah.search_stats_apply(TG_ARGV[0], (SELECT coalesce(array_agg(tsv), '{}') FROM new_rows), '{}');
    RETURN NULL;
END
$$;

CREATE FUNCTION ah.search_stats_on_update() RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    added   tsvector[];
    removed tsvector[];
BEGIN
    SELECT coalesce(array_agg(n.tsv), '{}'), coalesce(array_agg(o.tsv), '{}')
      INTO added, removed
      FROM old_rows AS o
      JOIN new_rows AS n ON n.id = o.id
     WHERE o.tsv IS DISTINCT FROM n.tsv;
    IF cardinality(added) > 0 THEN
        PERFORM ah.search_stats_apply(TG_ARGV[0], added, removed);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION ah.search_stats_on_delete() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM ah.search_stats_apply(TG_ARGV[0], '{}', (SELECT coalesce(array_agg(tsv), '{}') FROM old_rows));
    RETURN NULL;
END
$$;

CREATE FUNCTION ah.search_stats_on_truncate() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM ah.search_term WHERE corpus = TG_ARGV[0];
    UPDATE ah.search_corpus SET doc_count = 0, total_len = 0 WHERE corpus = TG_ARGV[0];
    RETURN NULL;
END
$$;

-- Statistics of rows that exist before this revision (empty on a fresh catalogue).
INSERT INTO ah.search_corpus (corpus, doc_count, total_len)
SELECT 'message', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.message
UNION ALL
SELECT 'tool_call', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.tool_call;

INSERT INTO ah.search_term (corpus, lexeme, df)
SELECT 'message', l.lexeme, count(*) FROM ah.message AS m, unnest(tsvector_to_array(m.tsv)) AS l(lexeme) GROUP BY l.lexeme
UNION ALL
SELECT 'tool_call', l.lexeme, count(*) FROM ah.tool_call AS t, unnest(tsvector_to_array(t.tsv)) AS l(lexeme) GROUP BY l.lexeme;

CREATE TRIGGER message_search_stats_ins AFTER INSERT ON ah.message
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_insert('message');
CREATE TRIGGER message_search_stats_upd AFTER UPDATE ON ah.message
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_update('message');
CREATE TRIGGER message_search_stats_del AFTER DELETE ON ah.message
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_delete('message');
CREATE TRIGGER message_search_stats_trunc AFTER TRUNCATE ON ah.message
    FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_truncate('message');

CREATE TRIGGER tool_call_search_stats_ins AFTER INSERT ON ah.tool_call
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_insert('tool_call');
CREATE TRIGGER tool_call_search_stats_upd AFTER UPDATE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_update('tool_call');
CREATE TRIGGER tool_call_search_stats_del AFTER DELETE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_delete('tool_call');
CREATE TRIGGER tool_call_search_stats_trunc AFTER TRUNCATE ON ah.tool_call
    FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_truncate('tool_call');

-- Candidate generation (GIN) and the newest-first cap for very common terms (primary key).
CREATE INDEX message_tsv_idx ON ah.message USING gin (tsv);
CREATE INDEX tool_call_tsv_idx ON ah.tool_call USING gin (tsv);
"""

DOWNGRADE = r"""
-- Functions of the re-applied sql/*.sql files may depend on these tables and columns (a SQL-
-- standard function body records its dependencies): drop with CASCADE and forget every file's
-- hash, so the next upgrade re-applies them all (they are idempotent by contract).
DROP TRIGGER IF EXISTS message_search_stats_ins ON ah.message;
DROP TRIGGER IF EXISTS message_search_stats_upd ON ah.message;
DROP TRIGGER IF EXISTS message_search_stats_del ON ah.message;
DROP TRIGGER IF EXISTS message_search_stats_trunc ON ah.message;
DROP TRIGGER IF EXISTS tool_call_search_stats_ins ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_search_stats_upd ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_search_stats_del ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_search_stats_trunc ON ah.tool_call;
ALTER TABLE ah.message DROP COLUMN IF EXISTS tsv CASCADE;
ALTER TABLE ah.tool_call DROP COLUMN IF EXISTS tsv CASCADE;
DROP TABLE IF EXISTS ah.search_term CASCADE;
DROP TABLE IF EXISTS ah.search_corpus CASCADE;
DROP FUNCTION IF EXISTS ah.search_stats_on_insert();
DROP FUNCTION IF EXISTS ah.search_stats_on_update();
DROP FUNCTION IF EXISTS ah.search_stats_on_delete();
DROP FUNCTION IF EXISTS ah.search_stats_on_truncate();
DROP FUNCTION IF EXISTS ah.search_stats_apply(text, tsvector[], tsvector[]);
DROP FUNCTION IF EXISTS ah.message_tsv(text) CASCADE;
DROP FUNCTION IF EXISTS ah.tool_call_tsv(text, text, text) CASCADE;
DROP FUNCTION IF EXISTS ah.code_aware_text(text) CASCADE;
DROP TEXT SEARCH CONFIGURATION IF EXISTS ah.search CASCADE;
DELETE FROM ah.meta WHERE left(key, 4) = 'sql:';
"""


def upgrade() -> None:
    # exec_driver_sql: the regular expressions contain ``(?:_`` which SQLAlchemy's text() would
    # take for a bind parameter.
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)
