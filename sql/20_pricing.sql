-- List prices and per-call cost (docs/design.md §1 job 3 "Account", §5 "NULL means unknown").
--
-- ah.model_pricing is a price table declared as data: one row per (LIKE pattern on
-- model_call.model, effective_from), USD per million tokens for each disjoint token bucket of
-- ah.model_call. Three functions apply it:
--
--   ah.price_for(model, at)       the row that prices `model` on day `at`
--   ah.priced_cost_usd(price, input_uncached, cache_read, cache_write_5m, cache_write_1h, output)
--                                 the cost formula: token counts × a price row, NULL when unknown
--   ah.call_cost_usd(model, at, input_uncached, cache_read, cache_write_5m, cache_write_1h, output)
--                                 one call's list-price cost in USD (the two above combined)
--
-- Rules for rows:
-- - Only prices read on the provider's own public price page are seeded; `source` names that
--   page and the day it was read. A model whose price could not be confirmed there has no row
--   (its calls cost NULL, never 0).
-- - Patterns are matched against lower(model). The most specific (longest) matching pattern
--   wins, so a dated snapshot pattern may override its family. Patterns must not match a
--   sibling with a different price: 'claude-opus-4%' would also match claude-opus-4-5, hence
--   the exact 'claude-opus-4' / 'claude-opus-4-0%' / 'claude-opus-4-20250514%' rows.
-- - effective_from of a model's first row is the earliest day the price is confirmed for: the
--   snapshot date in the model id, else the release date stated by the provider, else the day
--   the price page was read. A price change is a new row with a later effective_from.
--   Calls dated before a pattern's first row (test fixtures, clock skew) use that first row.
-- - Anthropic: cache write 5m = 1.25 x input, 1h = 2 x input, cache read = 0.1 x input (as the
--   page lists them). OpenAI: cache_read = "cached input"; OpenAI has no cache-write price, so
--   those columns are NULL. Not seeded for want of a provider page read here (their calls cost
--   NULL and `agent-history pricing` names them): gpt-5.1-codex, gpt-4o, gpt-4o-mini, o3-mini,
--   Gemini models, claude-3-sonnet. Not modelled: batch/priority tiers, regional cloud endpoints.
-- - Long context (migration 0014_long_context): a row may carry a second rate card, long_*, that
--   prices a WHOLE call once its input (uncached + cache read + cache writes) exceeds
--   long_context_threshold tokens — not only the part above it. Seeded from the tiers block below,
--   with the page it was read on in long_context_source.
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes. The
-- upsert never deletes: to retract a seeded row, add an explicit DELETE for it here. Session
-- costs are stored by the rollup, so a price change shows once those sessions are refreshed.

INSERT INTO ah.model_pricing AS p (
    model_pattern, effective_from,
    input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_5m_per_mtok, cache_write_1h_per_mtok,
    source,
    long_context_threshold, long_input_per_mtok, long_output_per_mtok, long_cache_read_per_mtok,
    long_cache_write_5m_per_mtok, long_cache_write_1h_per_mtok, long_context_source
)
SELECT b.model_pattern, b.effective_from::date, b.input, b.output, b.cache_read, b.cache_write_5m, b.cache_write_1h,
       b.source, t.threshold, t.input, t.output, t.cache_read, t.cache_write_5m, t.cache_write_1h, t.source
FROM (VALUES
    -- Anthropic ---------------------------------------------------------------------------------
    ('claude-opus-4-8%',          '2026-11-29',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-7%',          '2026-11-29',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-6%',          '2026-11-29',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-5%',          '2025-11-01',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-1%',          '2025-08-05', 15.00, 75.00, 1.50, 18.75, 30.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4',             '2025-05-14', 15.00, 75.00, 1.50, 18.75, 30.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-0%',          '2025-05-14', 15.00, 75.00, 1.50, 18.75, 30.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-opus-4-20250514%',   '2025-05-14', 15.00, 75.00, 1.50, 18.75, 30.00,
     'https://platform.claude.com/docs/en/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-sonnet-4-6%',        '2026-02-17',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-sonnet-4-5%',        '2025-09-29',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-sonnet-4',           '2025-05-14',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-sonnet-4-0%',        '2025-05-14',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-sonnet-4-20250514%', '2025-05-14',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    -- the same base prices from the day Sonnet 4's 1M-token context window (and its long-context
    -- tier, below) became available: https://www.anthropic.com/news/1m-context (2025-08-12)
    ('claude-sonnet-4',           '2025-08-12',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://docs.anthropic.com/en/docs/about-claude/pricing (retrieved 2026-12-01)'),
    ('claude-sonnet-4-0%',        '2025-08-12',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://docs.anthropic.com/en/docs/about-claude/pricing (retrieved 2026-12-01)'),
    ('claude-sonnet-4-20250514%', '2025-08-12',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://docs.anthropic.com/en/docs/about-claude/pricing (retrieved 2026-12-01)'),
    ('claude-haiku-4-5%',         '2025-10-01',  1.00,  5.00, 0.10,  1.25,  2.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-3-7-sonnet%',        '2025-02-19',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://docs.anthropic.com/en/docs/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-3-5-sonnet%',        '2024-06-20',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://docs.anthropic.com/en/docs/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-3-5-haiku%',         '2024-10-22',  0.80,  4.00, 0.08,  1.00,  1.60,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-3-opus%',            '2024-02-29', 15.00, 75.00, 1.50, 18.75, 30.00,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    ('claude-3-haiku%',           '2024-03-07',  0.25,  1.25, 0.03,  0.30,  0.50,
     'https://platform.claude.com/docs/zh-CN/about-claude/pricing (retrieved 2026-11-29)'),
    -- OpenAI: exact ids only — 'gpt-5%' would also match gpt-5.1-codex, gpt-5-codex-mini, … -----
    ('gpt-5-codex',               '2026-11-29',  1.25, 10.00, 0.125, NULL, NULL,
     'https://developers.openai.com/api/docs/models/gpt-5-codex (retrieved 2026-11-29)'),
    ('gpt-5-mini',                '2025-08-07',  0.25,  2.00, 0.025, NULL, NULL,
     'https://developers.openai.com/ko-KR/api/docs/models/gpt-5-mini (retrieved 2026-11-29)'),
    ('gpt-5-mini-2025-08-07',     '2025-08-07',  0.25,  2.00, 0.025, NULL, NULL,
     'https://developers.openai.com/ko-KR/api/docs/models/gpt-5-mini (retrieved 2026-11-29)'),
    -- GitHub Copilot's usage-based price table (GitHub's own docs data file) for the OpenAI models
    -- Copilot and Codex transcripts in ../shared/corpus/samples name; no cache-write price --------
    ('gpt-5.3-codex',             '2026-12-01',  1.75, 14.00, 0.175, NULL, NULL,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('gpt-5.2-codex',             '2026-12-01',  1.75, 14.00, 0.175, NULL, NULL,
     'https://raw.githubusercontent.com/github/docs/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('gpt-5.2',                   '2026-12-01',  1.75, 14.00, 0.175, NULL, NULL,
     'https://raw.githubusercontent.com/github/docs/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('gpt-4.1',                   '2026-12-01',  2.00,  8.00, 0.50,  NULL, NULL,
     'https://raw.githubusercontent.com/github/docs/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    -- Copilot spells Anthropic models with a dot (claude-sonnet-4.5); same list prices as above,
    -- 1h cache write = 2 x input as on Anthropic's page -------------------------------------------
    ('claude-sonnet-4.5%',        '2025-09-29',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('claude-sonnet-4.6%',        '2026-02-17',  3.00, 15.00, 0.30,  3.75,  6.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('claude-haiku-4.5%',         '2025-10-01',  1.00,  5.00, 0.10,  1.25,  2.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('claude-opus-4.5%',          '2025-11-01',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('claude-opus-4.6%',          '2026-11-29',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)'),
    ('claude-opus-4.7%',          '2026-11-29',  5.00, 25.00, 0.50,  6.25, 10.00,
     'https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (retrieved 2026-12-01)')
) AS b (model_pattern, effective_from, input, output, cache_read, cache_write_5m, cache_write_1h, source)
-- Long-context tiers (columns of migration 0014_long_context) of the rows above. Anthropic's page,
-- section "Long context pricing" (https://docs.anthropic.com/en/docs/about-claude/pricing, read
-- 2026-12-01): for Claude Sonnet 4 and Sonnet 4.5 with the 1M-token context window, a request of
-- more than 200K input tokens is charged "Input: $6 / MTok, Output: $22.50 / MTok" for all its
-- tokens (≤ 200K input tokens: $3 / $15); the prompt-caching multipliers stack on that input
-- price: cache read 0.1 x = 0.60, 5m write 1.25 x = 7.50, 1h write 2 x = 12.00. Not seeded:
-- Sonnet 4.6 / Opus 4.6 (the page prices their 1M window at the standard rates) and Copilot's
-- dotted claude-sonnet-4.5 (Copilot's own table has no long-context tier).
LEFT JOIN (VALUES
    --  pattern                     effective_from   threshold input output  cr    cw5m   cw1h
    ('claude-sonnet-4',           DATE '2025-08-12', 200000, 6.00, 22.50, 0.60, 7.50, 12.00),
    ('claude-sonnet-4-0%',        DATE '2025-08-12', 200000, 6.00, 22.50, 0.60, 7.50, 12.00),
    ('claude-sonnet-4-20250514%', DATE '2025-08-12', 200000, 6.00, 22.50, 0.60, 7.50, 12.00),
    ('claude-sonnet-4-5%',        DATE '2025-09-29', 200000, 6.00, 22.50, 0.60, 7.50, 12.00)
) AS t0 (model_pattern, effective_from, threshold, input, output, cache_read, cache_write_5m, cache_write_1h)
    ON t0.model_pattern = b.model_pattern AND t0.effective_from = b.effective_from::date
CROSS JOIN LATERAL (
    SELECT t0.threshold::bigint AS threshold, t0.input, t0.output, t0.cache_read, t0.cache_write_5m, t0.cache_write_1h,
           CASE WHEN t0.threshold IS NOT NULL
                THEN 'https://docs.anthropic.com/en/docs/about-claude/pricing#long-context-pricing (retrieved 2026-12-01)'
           END AS source
) AS t
ON CONFLICT (model_pattern, effective_from) DO UPDATE SET
    input_per_mtok          = EXCLUDED.input_per_mtok,
    output_per_mtok         = EXCLUDED.output_per_mtok,
    cache_read_per_mtok     = EXCLUDED.cache_read_per_mtok,
    cache_write_5m_per_mtok = EXCLUDED.cache_write_5m_per_mtok,
    cache_write_1h_per_mtok = EXCLUDED.cache_write_1h_per_mtok,
    source                  = EXCLUDED.source,
    long_context_threshold       = EXCLUDED.long_context_threshold,
    long_input_per_mtok          = EXCLUDED.long_input_per_mtok,
    long_output_per_mtok         = EXCLUDED.long_output_per_mtok,
    long_cache_read_per_mtok     = EXCLUDED.long_cache_read_per_mtok,
    long_cache_write_5m_per_mtok = EXCLUDED.long_cache_write_5m_per_mtok,
    long_cache_write_1h_per_mtok = EXCLUDED.long_cache_write_1h_per_mtok,
    long_context_source          = EXCLUDED.long_context_source
-- re-applying an unchanged row must not rewrite it
WHERE (p.input_per_mtok, p.output_per_mtok, p.cache_read_per_mtok,
       p.cache_write_5m_per_mtok, p.cache_write_1h_per_mtok, p.source,
       p.long_context_threshold, p.long_input_per_mtok, p.long_output_per_mtok, p.long_cache_read_per_mtok,
       p.long_cache_write_5m_per_mtok, p.long_cache_write_1h_per_mtok, p.long_context_source)
      IS DISTINCT FROM
      (EXCLUDED.input_per_mtok, EXCLUDED.output_per_mtok, EXCLUDED.cache_read_per_mtok,
       EXCLUDED.cache_write_5m_per_mtok, EXCLUDED.cache_write_1h_per_mtok, EXCLUDED.source,
       EXCLUDED.long_context_threshold, EXCLUDED.long_input_per_mtok, EXCLUDED.long_output_per_mtok,
       EXCLUDED.long_cache_read_per_mtok, EXCLUDED.long_cache_write_5m_per_mtok, EXCLUDED.long_cache_write_1h_per_mtok,
       EXCLUDED.long_context_source);




-- The price row for `model` on day `at` (NULL `at` = today); no row when nothing matches.
-- Order: longest matching pattern (most specific), then the latest row in effect on `at`;
-- when `at` precedes every row of that pattern, its earliest row.
CREATE OR REPLACE FUNCTION ah.price_for(model text, at date)
RETURNS ah.model_pricing
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT p.*
    FROM ah.model_pricing AS p
    WHERE lower(price_for.model) LIKE p.model_pattern
    ORDER BY length(p.model_pattern) DESC,
             p.model_pattern,
             (p.effective_from <= coalesce(price_for.at, current_date)) DESC,
             CASE WHEN p.effective_from <= coalesce(price_for.at, current_date) THEN p.effective_from END DESC NULLS LAST,
             p.effective_from
    LIMIT 1
$$;


-- A call's list-price cost in USD at price row `price` (exact numeric, not rounded).
-- NULL when `price` is NULL (no price known), when every token count is NULL (usage unknown), or
-- when a bucket holds tokens but the row has no price for it (e.g. a cache write on a model
-- without a cache-write price). Otherwise NULL counts are 0. When the row has a long-context tier
-- and the call's input (input_uncached + cache_read + cache_write_5m + cache_write_1h) exceeds
-- its threshold, the long_* rates price every bucket of the call (Anthropic's rule: the whole
-- request, not the part above 200K). The decision is per call: sum costs, never tokens. The one
-- place the cost formula lives: ah.call_cost_usd and the rollup (which looks up each (model, day)
-- price once) use it. A $$ body, so the columns it reads carry no dependency that would block
-- migration 0013's downgrade.
CREATE OR REPLACE FUNCTION ah.priced_cost_usd(
    price ah.model_pricing,
    input_uncached bigint, cache_read bigint, cache_write_5m bigint, cache_write_1h bigint, output bigint
)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN num_nonnulls(input_uncached, cache_read, cache_write_5m, cache_write_1h, output) = 0 THEN NULL
        WHEN coalesce(input_uncached, 0) + coalesce(cache_read, 0) + coalesce(cache_write_5m, 0)
             + coalesce(cache_write_1h, 0) > (price).long_context_threshold
        THEN (  coalesce(input_uncached, 0) * (price).long_input_per_mtok
              + coalesce(output, 0)         * (price).long_output_per_mtok
              + CASE WHEN coalesce(cache_read, 0)     = 0 THEN 0 ELSE cache_read     * (price).long_cache_read_per_mtok END
              + CASE WHEN coalesce(cache_write_5m, 0) = 0 THEN 0 ELSE cache_write_5m * (price).long_cache_write_5m_per_mtok END
              + CASE WHEN coalesce(cache_write_1h, 0) = 0 THEN 0 ELSE cache_write_1h * (price).long_cache_write_1h_per_mtok END
             ) / 1000000
        ELSE (  coalesce(input_uncached, 0) * (price).input_per_mtok
              + coalesce(output, 0)         * (price).output_per_mtok
              -- a bucket with no tokens costs 0 even where its price is NULL
              + CASE WHEN coalesce(cache_read, 0)     = 0 THEN 0 ELSE cache_read     * (price).cache_read_per_mtok END
              + CASE WHEN coalesce(cache_write_5m, 0) = 0 THEN 0 ELSE cache_write_5m * (price).cache_write_5m_per_mtok END
              + CASE WHEN coalesce(cache_write_1h, 0) = 0 THEN 0 ELSE cache_write_1h * (price).cache_write_1h_per_mtok END
             ) / 1000000
    END
$$;


-- One model call's list-price cost in USD: ah.priced_cost_usd at ah.price_for(model, UTC day of
-- `at`); NULL when the model has no price or the usage is unknown (see above).
-- Example (field case E11, Sonnet 4.5): in 5, cw5m 1000, cw1h 2000, cr 20000, out 400 → 0.027765.
CREATE OR REPLACE FUNCTION ah.call_cost_usd(
    model text, at timestamptz,
    input_uncached bigint, cache_read bigint, cache_write_5m bigint, cache_write_1h bigint, output bigint
)
RETURNS numeric
LANGUAGE sql STABLE PARALLEL SAFE
RETURN ah.priced_cost_usd(ah.price_for(model, (at AT TIME ZONE 'UTC')::date),
                          input_uncached, cache_read, cache_write_5m, cache_write_1h, output);


-- A cost as the catalogue stores it (session.cost_usd, loops.cost_usd: numeric(14, 6), below
-- 10^8 USD): rounded to 6 decimals, or NULL (unknown) when it does not fit. Token counts are
-- bounded per call (agent_history.model.limits), not per session: a sum over absurd but in-range
-- counts must read as unknown, not fail the post-pass and with it every pass (issue 25).
CREATE OR REPLACE FUNCTION ah.stored_usd(cost numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN abs(round(cost, 6)) < 1e8 THEN round(cost, 6) END;
