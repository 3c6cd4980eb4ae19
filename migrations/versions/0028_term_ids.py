"""The term dictionary (issue 27 item 4; docs/performance.md, decisions 11 and 13): a tool call's
vector becomes an array of term ids and one byte of term frequency per term.

Decision 11 measured the form on the shared corpus ×10 (16,051 tool calls): the vector column
19.27 → 7.83 MB, the same scored ids, scores (9 decimals) and top 20 on all 58 eval queries, and
scoring −29 % server CPU. What changes:

- ``ah.search_term.id int4``: one id per tool-call lexeme (``ah.search_term_id_seq``, taken only
  for a lexeme not yet in the dictionary; message terms keep NULL), unique. A tool-call
  term's row is never deleted when its df falls to 0 (a vector may still hold the id while the
  statement that lowers the df runs; the row costs ≈ 42 B): the lexeme keeps its id when it comes
  back. Message terms are deleted at df 0 as before (their vectors hold lexemes, not ids).
- ``ah.tool_call.terms int4[]``: the ids of the vector's lexemes, ascending; ``ah.tool_call.tf
  bytea``: one byte per term, ``tf − 1`` (a positional vector keeps at most 256 positions of a
  lexeme, so tf is 1–256). Filled here from the stored ``tsv`` (its term-frequency form,
  migration 0025: tf = ``coalesce(positions[1], 1)``), then ``tsv``, its GIN index, its row
  triggers and ``ah.bm25_tf_terms`` are dropped, and the table is rewritten (``CLUSTER`` on the
  primary key) so the dropped column's bytes and the replaced rows are freed now.
- ``ah.term_vector(corpus, v)``: ``(terms, tf)`` of a positional vector, the
  lexemes it lacks added to the dictionary with df 0 first. The row trigger
  ``tool_call_keep_terms`` calls it for a row written without terms and for an update that
  changes the text; the loader's merge maps a batch set-based instead (`db.tables.merges`).
- The term statistics of tool calls are kept by id (``ah.term_stats_on_*``, the same statement
  triggers' names): df ± 1 per document holding the id, ``doc_count``/``total_len`` from
  ``cardinality(terms)`` — the number of distinct lexemes, as ``length(tsv)`` was.
- The GIN index ``tool_call_terms_idx``: ``gin__int_ops`` of the ``intarray`` extension (trusted;
  the embedded server and ParadeDB images ship it), installed into schema ``ah`` where it is
  available and not yet installed. Without it (a shared server whose packages lack it, or a role
  that may not create it) the index is ``array_ops`` and search ORs ``@>`` clauses instead of a
  ``query_int`` (agent_history.search.fts). ``ah.meta`` ``term_index`` says which: the schema of
  the extension, or ``array``.

``ah.bm25_id_terms`` (the scoring over this form) lives with the other query-side functions in
``sql/40_search.sql``. Downgrade recomputes ``tsv`` from the text (``ah.tool_call_tsv``), which
is what every stored vector was.

Revision ID: 0028_term_ids
Revises: 0027_ingest
Create Date: 2026-12-03
"""

from alembic import op

revision = "0028_term_ids"
down_revision = "0027_ingest"
branch_labels = None
depends_on = None

UPGRADE = r"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'intarray')
       AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'intarray') THEN
        BEGIN
            CREATE EXTENSION intarray SCHEMA ah;
        EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_file THEN
            NULL;  -- array_ops below
        END;
    END IF;
    INSERT INTO ah.meta (key, value)
    VALUES ('term_index', coalesce((SELECT n.nspname FROM pg_extension AS e
                                    JOIN pg_namespace AS n ON n.oid = e.extnamespace
                                    WHERE e.extname = 'intarray'), 'array'))
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();
END
$$;

CREATE SEQUENCE ah.search_term_id_seq AS int4;
ALTER TABLE ah.search_term ADD COLUMN id int4;
ALTER SEQUENCE ah.search_term_id_seq OWNED BY ah.search_term.id;

-- A TRUNCATE of a corpus (a full `rebuild`) empties its dictionary; once no row holds an id the
-- ids start again at 1, so a rebuilt catalogue equals a cold load's, ids included (where the
-- truncating role may set the sequence: the owner; a writer role only inserts).
CREATE OR REPLACE FUNCTION ah.search_stats_on_truncate() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM ah.search_term WHERE corpus = TG_ARGV[0];
    UPDATE ah.search_corpus SET doc_count = 0, total_len = 0 WHERE corpus = TG_ARGV[0];
    IF NOT EXISTS (SELECT 1 FROM ah.search_term WHERE id IS NOT NULL)
       AND has_sequence_privilege('ah.search_term_id_seq', 'UPDATE') THEN
        PERFORM setval('ah.search_term_id_seq', 1, false);
    END IF;
    RETURN NULL;
END
$$;

-- One byte of term frequency: tf − 1, tf clipped to 1..256 (a positional vector keeps ≤ 256).
-- Not STRICT: the planner inlines a SQL function only when it can prove the body strict too, and
-- greatest/least are not (a NULL tf gives byte 0); called as a function, 1.49 M calls cost ≈ 9 s
-- of a ×10 cold load's server time (docs/performance.md decision 13), inlined nothing.
CREATE FUNCTION ah.tf_byte(tf integer) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.set_byte('\x00'::bytea, 0, least(greatest(tf, 1), 256) - 1);

-- (terms, tf) of the positional vector v (tf = the number of positions; none counts 1), the
-- lexemes missing from corpus' dictionary added with df 0 and the next ids first (sorted: two
-- writers lock dictionary rows in the same order).
CREATE FUNCTION ah.term_vector(p_corpus text, v tsvector, OUT terms int4[], OUT tf bytea)
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    INSERT INTO ah.search_term (corpus, lexeme, df, id)
    SELECT p_corpus, x.lexeme, 0, nextval('ah.search_term_id_seq')
    FROM (SELECT u.lexeme FROM unnest(v) AS u
          WHERE NOT EXISTS (SELECT 1 FROM ah.search_term AS t WHERE t.corpus = p_corpus AND t.lexeme = u.lexeme)
          ORDER BY u.lexeme) AS x
    ON CONFLICT (corpus, lexeme) DO NOTHING;
    SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}'),
           coalesce(string_agg(ah.tf_byte(coalesce(nullif(cardinality(u.positions), 0), 1)),
                               ''::bytea ORDER BY s.id), ''::bytea)
      INTO terms, tf
      FROM unnest(v) AS u
      JOIN ah.search_term AS s ON s.corpus = p_corpus AND s.lexeme = u.lexeme;
END
$$;

ALTER TABLE ah.tool_call ADD COLUMN terms int4[], ADD COLUMN tf bytea;

ALTER TABLE ah.tool_call DISABLE TRIGGER USER;
WITH m AS (
    SELECT d.id,
           array_agg(s.id ORDER BY s.id) AS terms,
           string_agg(ah.tf_byte(coalesce(u.positions[1], 1)), ''::bytea ORDER BY s.id) AS tf
    FROM ah.tool_call AS d
    CROSS JOIN LATERAL unnest(d.tsv) AS u
    JOIN ah.search_term AS s ON s.corpus = 'tool_call' AND s.lexeme = u.lexeme
    GROUP BY d.id
)
UPDATE ah.tool_call AS d SET terms = coalesce(m.terms, '{}'), tf = coalesce(m.tf, ''::bytea)
FROM ah.tool_call AS x LEFT JOIN m ON m.id = x.id
WHERE x.id = d.id;
ALTER TABLE ah.tool_call ENABLE TRIGGER USER;

DROP TRIGGER IF EXISTS tool_call_keep_tsv ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_keep_tsv_upd ON ah.tool_call;
DROP FUNCTION IF EXISTS ah.tool_call_keep_tsv();
DROP INDEX IF EXISTS ah.tool_call_tsv_idx;
ALTER TABLE ah.tool_call DROP COLUMN tsv;
DROP FUNCTION IF EXISTS ah.bm25_tf_terms(tsvector, text[], double precision[], double precision,
                                         double precision, double precision);

-- What a row written without terms, or an update changing the text, stores.
CREATE FUNCTION ah.tool_call_keep_terms() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'INSERT' OR (NEW.name, NEW.input, NEW.output) IS DISTINCT FROM (OLD.name, OLD.input, OLD.output) THEN
        SELECT v.terms, v.tf INTO NEW.terms, NEW.tf
          FROM ah.term_vector('tool_call', ah.search_tsv(ah.tool_call_doc(NEW.name, NEW.input, NEW.output))) AS v;
    ELSE
        NEW.terms := OLD.terms;
        NEW.tf := OLD.tf;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER tool_call_keep_terms BEFORE INSERT ON ah.tool_call
    FOR EACH ROW WHEN (NEW.terms IS NULL) EXECUTE FUNCTION ah.tool_call_keep_terms();
CREATE TRIGGER tool_call_keep_terms_upd BEFORE UPDATE ON ah.tool_call
    FOR EACH ROW EXECUTE FUNCTION ah.tool_call_keep_terms();

-- Term statistics by id (statement triggers; TG_ARGV[0] names the corpus): `ids` (ascending)
-- gain `n` documents each (negative: lose), the corpus `docs` documents and `len` entries. A
-- tool-call term's row stays at df 0 (see the docstring).
CREATE FUNCTION ah.term_stats_apply(p_corpus text, ids int4[], n bigint[], docs bigint, len bigint) RETURNS void
    LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    UPDATE ah.search_term AS s SET df = s.df + d.n
    FROM unnest(ids, n) AS d(id, n)
    WHERE s.id = d.id AND d.n <> 0;
    INSERT INTO ah.search_corpus AS c (corpus, doc_count, total_len)
    VALUES (p_corpus, coalesce(docs, 0), coalesce(len, 0))
    ON CONFLICT (corpus) DO UPDATE
       SET doc_count = c.doc_count + EXCLUDED.doc_count,
           total_len = c.total_len + EXCLUDED.total_len
     WHERE EXCLUDED.doc_count <> 0 OR EXCLUDED.total_len <> 0;
END
$$;

CREATE FUNCTION ah.term_stats_on_insert() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM ah.term_stats_apply(TG_ARGV[0], d.ids, d.n, c.docs, c.len)
    FROM (SELECT array_agg(z.t ORDER BY z.t) AS ids, array_agg(z.n ORDER BY z.t) AS n
          FROM (SELECT u.t, count(*) AS n FROM new_rows AS r CROSS JOIN LATERAL unnest(r.terms) AS u(t)
                GROUP BY u.t) AS z) AS d,
         (SELECT count(*) FILTER (WHERE cardinality(r.terms) > 0) AS docs,
                 sum(cardinality(r.terms)) AS len FROM new_rows AS r) AS c;
    RETURN NULL;
END
$$;

CREATE FUNCTION ah.term_stats_on_delete() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM ah.term_stats_apply(TG_ARGV[0], d.ids, d.n, -c.docs, -c.len)
    FROM (SELECT array_agg(z.t ORDER BY z.t) AS ids, array_agg(-z.n ORDER BY z.t) AS n
          FROM (SELECT u.t, count(*) AS n FROM old_rows AS r CROSS JOIN LATERAL unnest(r.terms) AS u(t)
                GROUP BY u.t) AS z) AS d,
         (SELECT count(*) FILTER (WHERE cardinality(r.terms) > 0) AS docs,
                 sum(cardinality(r.terms)) AS len FROM old_rows AS r) AS c;
    RETURN NULL;
END
$$;

CREATE FUNCTION ah.term_stats_on_update() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM ah.term_stats_apply(TG_ARGV[0], d.ids, d.n, c.docs, c.len)
    FROM (SELECT array_agg(z.t ORDER BY z.t) AS ids, array_agg(z.n ORDER BY z.t) AS n
          FROM (SELECT u.t, sum(x.sign) AS n
                FROM old_rows AS o JOIN new_rows AS nw ON nw.id = o.id
                CROSS JOIN LATERAL (VALUES (nw.terms, 1), (o.terms, -1)) AS x(terms, sign)
                CROSS JOIN LATERAL unnest(x.terms) AS u(t)
                WHERE o.terms IS DISTINCT FROM nw.terms
                GROUP BY u.t) AS z) AS d,
         (SELECT sum((cardinality(nw.terms) > 0)::int - (cardinality(o.terms) > 0)::int) AS docs,
                 sum(cardinality(nw.terms) - cardinality(o.terms)) AS len
          FROM old_rows AS o JOIN new_rows AS nw ON nw.id = o.id
          WHERE o.terms IS DISTINCT FROM nw.terms) AS c;
    RETURN NULL;
END
$$;

DROP TRIGGER tool_call_search_stats_ins ON ah.tool_call;
DROP TRIGGER tool_call_search_stats_upd ON ah.tool_call;
DROP TRIGGER tool_call_search_stats_del ON ah.tool_call;
CREATE TRIGGER tool_call_search_stats_ins AFTER INSERT ON ah.tool_call
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.term_stats_on_insert('tool_call');
CREATE TRIGGER tool_call_search_stats_upd AFTER UPDATE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.term_stats_on_update('tool_call');
CREATE TRIGGER tool_call_search_stats_del AFTER DELETE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.term_stats_on_delete('tool_call');
"""

FILL_DICTIONARY = r"""
INSERT INTO ah.search_term (corpus, lexeme, df)
SELECT DISTINCT 'tool_call', u.lexeme, 0 FROM ah.tool_call AS d CROSS JOIN LATERAL unnest(d.tsv) AS u
ORDER BY 2
ON CONFLICT (corpus, lexeme) DO NOTHING;
UPDATE ah.search_term AS s SET id = r.n
FROM (SELECT t.lexeme, row_number() OVER (ORDER BY t.lexeme) AS n FROM ah.search_term AS t
      WHERE t.corpus = 'tool_call') AS r
WHERE s.corpus = 'tool_call' AND s.lexeme = r.lexeme;
SELECT setval('ah.search_term_id_seq', greatest(max(id), 1), max(id) IS NOT NULL) FROM ah.search_term;
ALTER TABLE ah.search_term ADD CONSTRAINT search_term_id_key UNIQUE (id);
"""
"""Every stored tool-call lexeme gets an id, in lexeme order — even one an unfinished bulk pass
has not counted yet (its statistics are recomputed at its end): a counted one keeps its row.
Message terms keep a NULL id (their vectors hold lexemes)."""

GIN = r"""
DO $$
DECLARE
    s text := (SELECT value FROM ah.meta WHERE key = 'term_index');
BEGIN
    IF s = 'array' THEN
        CREATE INDEX tool_call_terms_idx ON ah.tool_call USING gin (terms array_ops);
    ELSE
        EXECUTE 'CREATE INDEX tool_call_terms_idx ON ah.tool_call USING gin (terms '
                || quote_ident(s) || '.gin__int_ops)';
    END IF;
END
$$;
"""

DOWNGRADE = r"""
CREATE OR REPLACE FUNCTION ah.search_stats_on_truncate() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM ah.search_term WHERE corpus = TG_ARGV[0];
    UPDATE ah.search_corpus SET doc_count = 0, total_len = 0 WHERE corpus = TG_ARGV[0];
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS tool_call_keep_terms ON ah.tool_call;
DROP TRIGGER IF EXISTS tool_call_keep_terms_upd ON ah.tool_call;
DROP FUNCTION IF EXISTS ah.tool_call_keep_terms();
ALTER TABLE ah.tool_call ADD COLUMN tsv tsvector;
ALTER TABLE ah.tool_call DISABLE TRIGGER USER;
UPDATE ah.tool_call SET tsv = ah.tool_call_tsv(name, input, output);
ALTER TABLE ah.tool_call ENABLE TRIGGER USER;
DROP INDEX IF EXISTS ah.tool_call_terms_idx;
ALTER TABLE ah.tool_call DROP COLUMN terms, DROP COLUMN tf;

DROP TRIGGER tool_call_search_stats_ins ON ah.tool_call;
DROP TRIGGER tool_call_search_stats_upd ON ah.tool_call;
DROP TRIGGER tool_call_search_stats_del ON ah.tool_call;
CREATE TRIGGER tool_call_search_stats_ins AFTER INSERT ON ah.tool_call
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_insert('tool_call');
CREATE TRIGGER tool_call_search_stats_upd AFTER UPDATE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_update('tool_call');
CREATE TRIGGER tool_call_search_stats_del AFTER DELETE ON ah.tool_call
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ah.search_stats_on_delete('tool_call');
DROP FUNCTION IF EXISTS ah.term_stats_on_insert();
DROP FUNCTION IF EXISTS ah.term_stats_on_update();
DROP FUNCTION IF EXISTS ah.term_stats_on_delete();
DROP FUNCTION IF EXISTS ah.term_stats_apply(text, int4[], bigint[], bigint, bigint);
DROP FUNCTION IF EXISTS ah.term_vector(text, tsvector);
DROP FUNCTION IF EXISTS ah.tf_byte(integer);

-- The term statistics as 0027 kept them: no df-0 rows, no ids.
DELETE FROM ah.search_term WHERE corpus = 'tool_call' AND df <= 0;
ALTER TABLE ah.search_term DROP COLUMN id;
DROP SEQUENCE IF EXISTS ah.search_term_id_seq;

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
CREATE TRIGGER tool_call_keep_tsv BEFORE INSERT ON ah.tool_call
    FOR EACH ROW WHEN (NEW.tsv IS NULL) EXECUTE FUNCTION ah.tool_call_keep_tsv();
CREATE TRIGGER tool_call_keep_tsv_upd BEFORE UPDATE ON ah.tool_call
    FOR EACH ROW EXECUTE FUNCTION ah.tool_call_keep_tsv();
CREATE INDEX tool_call_tsv_idx ON ah.tool_call USING gin (tsv);

-- ah.bm25_tf_terms as sql/40_search.sql held it at 0027.
CREATE OR REPLACE FUNCTION ah.bm25_tf_terms(
    tsv tsvector,
    lexemes text[],
    weights double precision[],
    avglen double precision,
    k1 double precision DEFAULT 1.2,
    b double precision DEFAULT 0.75
) RETURNS TABLE (lexeme text, tf integer, score double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT q.lx, f.tf,
           q.w * f.tf * (bm25_tf_terms.k1 + 1)
           / (f.tf + bm25_tf_terms.k1 * (1 - bm25_tf_terms.b + bm25_tf_terms.b * length(bm25_tf_terms.tsv)
                                         / greatest(bm25_tf_terms.avglen, 1.0)))
    FROM unnest(bm25_tf_terms.lexemes, bm25_tf_terms.weights) AS q(lx, w)
    LEFT JOIN unnest(ts_filter(setweight(bm25_tf_terms.tsv, 'A', bm25_tf_terms.lexemes), '{a}')) AS u
        ON u.lexeme = q.lx
    CROSS JOIN LATERAL (SELECT coalesce(u.positions[1], 1) AS tf) AS f
    WHERE u.lexeme IS NOT NULL OR bm25_tf_terms.tsv @@ ah.tsquery_literal(q.lx)::tsquery
$$;

DELETE FROM ah.meta WHERE key = 'term_index';
"""
"""The extension stays (other objects may use it; it holds no data)."""

BULK_MARK = "bulk_pass"
"""``ah.meta`` key of an unfinished bulk pass (`agent_history.db.bulk_mark.BULK_PASS_KEY`; a
migration imports nothing of the package): its saved index definitions and disabled triggers
follow the column."""
OLD_INDEX, NEW_INDEX = "tool_call_tsv_idx", "tool_call_terms_idx"
STATS_TRIGGERS = ("tool_call_search_stats_ins", "tool_call_search_stats_upd", "tool_call_search_stats_del")


def _bulk_mark(bind) -> dict | None:
    """The unfinished bulk pass's mark (JSON), or None."""
    import json

    row = bind.exec_driver_sql("SELECT value FROM ah.meta WHERE key = %(k)s", {"k": BULK_MARK}).fetchone()
    return None if row is None else json.loads(row[0] or "{}")


def upgrade() -> None:
    import json

    bind = op.get_bind()
    mark = _bulk_mark(bind)
    head, tail = UPGRADE.split("ALTER TABLE ah.tool_call ADD COLUMN terms", 1)
    bind.exec_driver_sql(head)
    bind.exec_driver_sql(FILL_DICTIONARY)
    bind.exec_driver_sql("ALTER TABLE ah.tool_call ADD COLUMN terms" + tail)
    indexes = dict((mark or {}).get("indexes") or {})
    if OLD_INDEX in indexes:  # dropped by the pass: its end builds the new one
        bind.exec_driver_sql(GIN.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS"))
        definition = bind.exec_driver_sql(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'ah' AND indexname = %(n)s", {"n": NEW_INDEX}
        ).fetchone()[0]
        bind.exec_driver_sql(f"DROP INDEX ah.{NEW_INDEX}")
        del indexes[OLD_INDEX]
        indexes[NEW_INDEX] = definition
        bind.exec_driver_sql(
            "UPDATE ah.meta SET value = %(v)s WHERE key = %(k)s",
            {"v": json.dumps({**mark, "indexes": indexes}), "k": BULK_MARK},
        )
    else:
        bind.exec_driver_sql(GIN)
    if mark is not None:  # the pass's statistics triggers stay off until its end
        for trigger in STATS_TRIGGERS:
            bind.exec_driver_sql(f"ALTER TABLE ah.tool_call DISABLE TRIGGER {trigger}")
    # the replaced rows and the dropped column's bytes freed now (a rewrite nulls dropped columns)
    bind.exec_driver_sql("CLUSTER ah.tool_call USING tool_call_pkey")


def downgrade() -> None:
    bind = op.get_bind()
    mark = _bulk_mark(bind)
    bind.exec_driver_sql(DOWNGRADE)
    if mark is not None:
        import json

        indexes = dict(mark.get("indexes") or {})
        if indexes.pop(NEW_INDEX, None) is not None:
            indexes[OLD_INDEX] = "CREATE INDEX tool_call_tsv_idx ON ah.tool_call USING gin (tsv)"
            bind.exec_driver_sql(f"DROP INDEX ah.{OLD_INDEX}")
            bind.exec_driver_sql(
                "UPDATE ah.meta SET value = %(v)s WHERE key = %(k)s",
                {"v": json.dumps({**mark, "indexes": indexes}), "k": BULK_MARK},
            )
        for trigger in STATS_TRIGGERS:
            bind.exec_driver_sql(f"ALTER TABLE ah.tool_call DISABLE TRIGGER {trigger}")
