"""Prices from a maintained price library (issue 31): rows keyed by the library's model, and the
model names harnesses write resolved to them.

Until this revision `ah.model_pricing` held hand-typed rows matched by a LIKE pattern on the model
name. From here its rows are loaded from the genai-prices package's data (`agent_history.usage.prices`,
`agent_history.db.prices`) at `db upgrade` and whenever the installed version changes, plus our own
rows only for models the library lacks. What changes:

- ``model_pattern`` becomes ``price_key``: ``<provider id>/<model id>`` of the library
  (``anthropic/claude-sonnet-4-5``, ``openrouter/anthropic/claude-sonnet-4.5``); ``provider``,
  ``model_id`` and ``model_name`` say which, ``origin`` is ``library`` or ``ours``; ``source``
  names the library and its version (``genai-prices 0.2.3``) or, for our rows, the page read.
- ``effective_from`` may be ``-infinity``: a library price with no start date holds from the
  beginning (genai-prices: "if no conditional price matches, the first one is used").
- Rates become plain ``numeric`` (the library prices some models at more than four decimals).
- ``ah.model_price_ref``: each model name seen (as written: ``openai/gpt-5.4``,
  ``claude-sonnet-4-6@default``) → the price key the library's matching gives it, or NULL and
  the reason it has no price (a local model, a name no price list knows). ``ah.price_for`` reads
  it; names are added by the post-pass and re-resolved when the price data changes.

The hand-typed rows are deleted here; the loader refills the table after the upgrade.

Revision ID: 0017_price_library
Revises: 0016_search_ready
Create Date: 2026-12-03
"""

from alembic import op

revision = "0017_price_library"
down_revision = "0016_search_ready"
branch_labels = None
depends_on = None

_RATES = (
    "input_per_mtok",
    "output_per_mtok",
    "cache_read_per_mtok",
    "cache_write_5m_per_mtok",
    "cache_write_1h_per_mtok",
    "long_input_per_mtok",
    "long_output_per_mtok",
    "long_cache_read_per_mtok",
    "long_cache_write_5m_per_mtok",
    "long_cache_write_1h_per_mtok",
)

_LONG_CHECK = """
    ADD CONSTRAINT model_pricing_long_context_check CHECK (
        (long_context_threshold IS NULL
         AND num_nonnulls(long_input_per_mtok, long_output_per_mtok, long_cache_read_per_mtok,
                          long_cache_write_5m_per_mtok, long_cache_write_1h_per_mtok, long_context_source) = 0)
        OR (long_context_threshold > 0 AND long_input_per_mtok IS NOT NULL AND long_output_per_mtok IS NOT NULL
            AND long_context_source IS NOT NULL))"""

UPGRADE = (
    r"""
DELETE FROM ah.model_pricing;
DELETE FROM ah.meta WHERE key = 'prices';
ALTER TABLE ah.model_pricing RENAME COLUMN model_pattern TO price_key;
ALTER TABLE ah.model_pricing
    DROP CONSTRAINT IF EXISTS model_pricing_long_context_check,
    ADD COLUMN provider   text NOT NULL,
    ADD COLUMN model_id   text NOT NULL,
    ADD COLUMN model_name text,
    ADD COLUMN origin     text NOT NULL CHECK (origin IN ('library', 'ours')),
"""
    + ",\n".join(f"    ALTER COLUMN {c} TYPE numeric" for c in _RATES)
    + ","
    + _LONG_CHECK
    + r""";
COMMENT ON COLUMN ah.model_pricing.price_key IS '<provider id>/<model id> of the price library (or of our own row)';

CREATE TABLE ah.model_price_ref (
    model       text PRIMARY KEY,   -- as written on model_call.model / session.model
    price_key   text,               -- ah.model_pricing.price_key; NULL = no price
    matched_as  text,               -- what matched: '<provider id>:<name given to the library>'
    reason      text,               -- why there is no price (NULL when priced)
    resolved_by text NOT NULL,      -- the price data key (library version + rules) it was resolved with
    CONSTRAINT model_price_ref_reason_check CHECK ((price_key IS NULL) = (reason IS NOT NULL))
);
"""
)

DOWNGRADE = (
    r"""
DROP TABLE IF EXISTS ah.model_price_ref;
DELETE FROM ah.model_pricing;
DELETE FROM ah.meta WHERE key = 'prices';
ALTER TABLE ah.model_pricing
    DROP CONSTRAINT IF EXISTS model_pricing_long_context_check,
    DROP COLUMN provider,
    DROP COLUMN model_id,
    DROP COLUMN model_name,
    DROP COLUMN origin,
"""
    + ",\n".join(f"    ALTER COLUMN {c} TYPE numeric(12, 4)" for c in _RATES)
    + ","
    + _LONG_CHECK
    + r""";
ALTER TABLE ah.model_pricing RENAME COLUMN price_key TO model_pattern;
"""
)


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
