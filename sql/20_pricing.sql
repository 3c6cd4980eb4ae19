-- List prices and per-call cost (docs/design.md §1 job 3 "Account", §5 "NULL means unknown", §15).
--
-- ah.model_pricing holds the price rows: one per (price_key, effective_from), USD per million
-- tokens for each disjoint token bucket of ah.model_call. The rows are data loaded from the
-- genai-prices package (agent_history.usage.prices, agent_history.db.prices: at `db upgrade` and
-- whenever the installed version changes), plus our own rows only for models it lacks, each with
-- its source page. ah.model_price_ref maps each model name as a harness wrote it to its price_key
-- (by the library's matching, agent_history.usage.model_names), or to none with the reason.
-- Three functions apply them:
--
--   ah.price_for(model, at)       the row that prices `model` on day `at`
--   ah.priced_cost_usd(price, input_uncached, cache_read, cache_write_5m, cache_write_1h, output)
--                                 the cost formula: token counts × a price row, NULL when unknown
--   ah.call_cost_usd(model, at, input_uncached, cache_read, cache_write_5m, cache_write_1h, output)
--                                 one call's list-price cost in USD (the two above combined)
--
-- Rules of the rows (agent_history/usage/prices.py states where each comes from in genai-prices):
-- - A model's rows are its price history: the row in effect on a UTC day is the one with the
--   latest effective_from on or before it; a day before every row uses the earliest
--   (genai-prices: "if no conditional price matches, the first one is used"). effective_from
--   '-infinity' = a price with no start date.
-- - Each bucket's rate is the one the library charges it at: its own price, else its nearest
--   priced ancestor's (a cache read with no cache-read price at the input rate).
-- - Long context / tiers: a row may carry a second rate card, long_*, that prices a WHOLE call
--   once its input (uncached + cache read + cache writes) exceeds long_context_threshold tokens —
--   not only the part above it (genai-prices' TieredPrices; Anthropic's and Gemini's rule).
--
-- Idempotent: re-applied by agent_history.db.migrate whenever this file's hash changes. Session
-- costs are stored by the rollup; loading changed prices marks the affected sessions dirty.


-- The price row for `model` (as written: ah.model_price_ref resolves it) on day `at` (NULL `at` =
-- today); no row when the name has no price. Order: the latest row in effect on `at`; when `at`
-- precedes every row of the model, its earliest row.
CREATE OR REPLACE FUNCTION ah.price_for(model text, at date)
RETURNS ah.model_pricing
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT p.*
    FROM ah.model_price_ref AS r
    JOIN ah.model_pricing AS p ON p.price_key = r.price_key
    WHERE r.model = price_for.model
    ORDER BY (p.effective_from <= coalesce(price_for.at, current_date)) DESC,
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
