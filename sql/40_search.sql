-- Keyword search on plain PostgreSQL: BM25 ranking over the code-aware tsvectors (docs/design.md §8).
--
-- The documents, their vectors (ah.message.tsv; ah.tool_call.terms/tf, term ids, migration 0028) and the term statistics
-- (ah.search_term, ah.search_corpus) are defined in migration 0002_search. This file holds the
-- query-side functions; agent_history.search.keyword composes them:
--
--   1. ah.search_lexemes(corpus, terms, weights)   query terms → lexemes with df and idf
--   2. candidates via the GIN index (tsv @@ tsquery), built from those lexemes
--   3. ah.bm25_terms(tsv, lexemes, weights·idf, avglen), summed per candidate (candidates only)
--   4. ah.snippet_window(text, needles, width) + ts_headline on the final top-K only
--
-- Ranking is Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
-- Beyond", Foundations and Trends in IR 3(4), 2009):
--
--   score(d, q) = Σ_{t ∈ q ∩ d}  w_t · idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
--   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))        (always > 0, as in Lucene)
--
-- with k1 = 1.2, b = 0.75; w_t is the query-side weight of the term (1 unless the query analysis
-- says otherwise). |d| is length(tsv), the number of distinct lexemes, and avgdl its mean over the
-- corpus — a proxy for token count that costs O(1) to read. The sum runs over the terms a
-- document contains, so matching is OR: a document matching more (and rarer) terms scores higher,
-- and a question never returns nothing because one of its words is absent.
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes.


-- Inverse document frequency (BM25, Lucene's non-negative variant). n = documents in the corpus.
CREATE OR REPLACE FUNCTION ah.bm25_idf(n bigint, df bigint) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ln(1.0 + (greatest(n, df) - df + 0.5) / (df + 0.5));


-- A tsquery literal for one lexeme, quoted so that any character is taken literally
-- (tsquery input syntax: inside '…' a quote is doubled and a backslash escapes).
CREATE OR REPLACE FUNCTION ah.tsquery_literal(lexeme text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN '''' || replace(replace(lexeme, E'\\', E'\\\\'), '''', '''''') || '''';


-- Documents matching any / all of the given lexemes (lexemes are taken as is, not re-parsed).
CREATE OR REPLACE FUNCTION ah.tsquery_any(lexemes text[]) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(string_agg(ah.tsquery_literal(l), ' | '), '')::tsquery FROM unnest(lexemes) AS l);

CREATE OR REPLACE FUNCTION ah.tsquery_all(lexemes text[]) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(string_agg(ah.tsquery_literal(l), ' & '), '')::tsquery FROM unnest(lexemes) AS l);


-- Query terms → lexemes, analysed exactly like the documents (ah.search_tsv: the ah.search
-- configuration over ah.search_text, plus CJK bigrams and symbols; migration 0004), with their
-- document frequency and idf in `p_corpus`
-- ('message' | 'tool_call'). A lexeme produced by several terms keeps the largest weight.
-- Stop words produce no lexeme; lexemes absent from the corpus come back with df = 0.
CREATE OR REPLACE FUNCTION ah.search_lexemes(p_corpus text, terms text[], weights double precision[])
    RETURNS TABLE (lexeme text, weight double precision, df bigint, idf double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    WITH q AS (
        SELECT l.lexeme, max(coalesce(t.weight, 1.0)) AS weight
        FROM unnest(terms, weights) AS t(term, weight)
        CROSS JOIN LATERAL unnest(tsvector_to_array(ah.search_tsv(t.term))) AS l(lexeme)
        GROUP BY l.lexeme
    ), n AS (
        SELECT coalesce((SELECT doc_count FROM ah.search_corpus WHERE corpus = p_corpus), 0) AS docs
    )
    SELECT q.lexeme, q.weight, coalesce(s.df, 0), ah.bm25_idf(n.docs, coalesce(s.df, 0))
    FROM q
    CROSS JOIN n
    LEFT JOIN ah.search_term AS s ON s.corpus = p_corpus AND s.lexeme = q.lexeme
    ORDER BY coalesce(s.df, 0), q.lexeme
$$;


-- Mean document length (distinct lexemes) of a corpus; 1 when empty.
CREATE OR REPLACE FUNCTION ah.search_avglen(p_corpus text) RETURNS double precision
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN coalesce((SELECT total_len::double precision / nullif(doc_count, 0)
                     FROM ah.search_corpus WHERE corpus = p_corpus), 1.0);


-- Per matched query lexeme of one document: its term frequency and BM25 contribution
--   w · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl))
-- `weights` are aligned with `lexemes` and already include idf (query weight × idf); `avglen`
-- comes from ah.search_avglen. setweight marks the query lexemes 'A' (a binary search per
-- lexeme) and ts_filter keeps only those, so the unnest touches the query's terms, not the whole
-- document. tf counts positions (tsvector keeps at most 256 per lexeme; saturation makes that
-- irrelevant). A set-returning SQL function with one SELECT: PostgreSQL inlines it into a
-- LATERAL join, so scoring thousands of candidates costs no per-call executor start-up.
-- (Parameters are qualified: unnest(tsvector) has its own column named "weights".)
CREATE OR REPLACE FUNCTION ah.bm25_terms(
    tsv tsvector,
    lexemes text[],
    weights double precision[],
    avglen double precision,
    k1 double precision DEFAULT 1.2,
    b double precision DEFAULT 0.75
) RETURNS TABLE (lexeme text, tf integer, score double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT u.lexeme,
           coalesce(cardinality(u.positions), 1),
           q.w * coalesce(cardinality(u.positions), 1) * (bm25_terms.k1 + 1)
           / (coalesce(cardinality(u.positions), 1)
              + bm25_terms.k1 * (1 - bm25_terms.b + bm25_terms.b * length(bm25_terms.tsv)
                                 / greatest(bm25_terms.avglen, 1.0)))
    FROM unnest(ts_filter(setweight(bm25_terms.tsv, 'A', bm25_terms.lexemes), '{a}')) AS u
    JOIN unnest(bm25_terms.lexemes, bm25_terms.weights) AS q(lx, w) ON q.lx = u.lexeme
$$;


-- ah.bm25_terms over a tool call's term-id form (migration 0028_term_ids): `terms` its term ids
-- (ascending), `tf` one byte per term (tf − 1), `ids` the query lexemes' ids (ah.search_term.id)
-- with their `weights`. The same rows and scores as ah.bm25_terms over the positional vector
-- the form was made from: tf is the byte + 1, the document length |d| is cardinality(terms)
-- (its distinct lexemes, as length(tsv)); array_position finds a term (terms are few per
-- document, the query's ids fewer). Inlined into the LATERAL join as ah.bm25_terms is.
CREATE OR REPLACE FUNCTION ah.bm25_id_terms(
    terms int4[],
    tf bytea,
    ids int4[],
    weights double precision[],
    avglen double precision,
    k1 double precision DEFAULT 1.2,
    b double precision DEFAULT 0.75
) RETURNS TABLE (term int4, tf integer, score double precision)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT q.id,
           f.tf,
           q.w * f.tf * (bm25_id_terms.k1 + 1)
           / (f.tf + bm25_id_terms.k1 * (1 - bm25_id_terms.b + bm25_id_terms.b * cardinality(bm25_id_terms.terms)
                                         / greatest(bm25_id_terms.avglen, 1.0)))
    FROM unnest(bm25_id_terms.ids, bm25_id_terms.weights) AS q(id, w)
    CROSS JOIN LATERAL (SELECT array_position(bm25_id_terms.terms, q.id) AS i) AS p
    CROSS JOIN LATERAL (SELECT get_byte(bm25_id_terms.tf, p.i - 1) + 1 AS tf) AS f
    WHERE p.i IS NOT NULL
$$;


-- BM25 score of one document (the sum of ah.bm25_terms), for ad-hoc SQL over a positional vector
-- (ah.message.tsv; a tool call's is its term-id form: sum ah.bm25_id_terms); the search itself
-- sums ah.bm25_terms in a LATERAL join over its candidates.
CREATE OR REPLACE FUNCTION ah.bm25_score(
    tsv tsvector,
    lexemes text[],
    weights double precision[],
    avglen double precision,
    k1 double precision DEFAULT 1.2,
    b double precision DEFAULT 0.75
) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT coalesce(sum(t.score), 0.0) FROM ah.bm25_terms(tsv, lexemes, weights, avglen, k1, b) AS t);


-- How many of `lexemes` occur in a positional `tsv` (coordination level; a tie-breaker and a test
-- aid; a tool call's term-id form: count ah.bm25_id_terms).
CREATE OR REPLACE FUNCTION ah.bm25_matched(tsv tsvector, lexemes text[]) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT count(*)::integer FROM unnest(ts_filter(setweight(tsv, 'A', lexemes), '{a}')));


-- The part of `doc` worth highlighting: about `width` characters around the first occurrence
-- of the first needle (in the given order — callers pass the rarest terms first) found
-- case-insensitively, else accent-insensitively (ah.fold, migration 0004: the stem `francai`
-- is found in `Français`; the position is approximate where folding changes the length, as for
-- `æ` → `ae`); the head of the document when none is found. ts_headline parses its whole input,
-- so it is given this window instead of a document of up to 128 KiB.
CREATE OR REPLACE FUNCTION ah.snippet_window(doc text, needles text[], width integer DEFAULT 1200)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    WITH d AS (SELECT left(coalesce(doc, ''), 131072) AS body),
    low AS (SELECT lower(d.body) AS text FROM d),
    hit AS (
        SELECT p.pos
        FROM low, unnest(needles) WITH ORDINALITY AS n(needle, ord)
        CROSS JOIN LATERAL (
            SELECT coalesce(nullif(strpos(low.text, lower(n.needle)), 0),
                            strpos(ah.fold(low.text), ah.fold(lower(n.needle)))) AS pos
        ) AS p
        WHERE n.needle <> '' AND p.pos > 0
        ORDER BY n.ord
        LIMIT 1
    )
    SELECT substr(d.body, greatest(1, coalesce((SELECT pos FROM hit), 1) - width / 3), width)
    FROM d
$$;


-- A highlighted snippet: ts_headline over the window, matched words wrapped in U+0002 / U+0003
-- (control characters that do not occur in transcripts; the CLI turns them into colour or
-- strips them), whitespace collapsed. A short document is shown whole (HighlightAll); a longer
-- one as up to two fragments of 18–40 words around the matches. When ts_headline marks nothing
-- (the match is a symbol, a CJK bigram or a part of a compound token, which its parser does not
-- see as words, and it would show the window's first words), the snippet is the 300 characters
-- from 100 before the first needle found: the caller marks the needles in it.
CREATE OR REPLACE FUNCTION ah.search_snippet(doc text, needles text[], q tsquery, width integer DEFAULT 1200)
    RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN strpos(h.body, chr(2)) > 0 THEN h.body
                ELSE regexp_replace(ah.snippet_window(doc, needles, 300), '\s+', ' ', 'g') END
    FROM (
        SELECT regexp_replace(
            ts_headline('ah.search'::regconfig, w.body, q,
                        'StartSel=' || chr(2) || ', StopSel=' || chr(3) || CASE
                            WHEN length(w.body) <= 300 THEN ', HighlightAll=true'
                            ELSE ', MaxWords=40, MinWords=18, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "'
                        END),
            '\s+', ' ', 'g') AS body
        FROM (SELECT ah.snippet_window(doc, needles, width) AS body) AS w
    ) AS h
$$;
