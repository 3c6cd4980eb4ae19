"""Long-context prices (issue 19 follow-up): a price row may carry a second rate card that applies
to a whole call once its input exceeds a threshold.

Anthropic's pricing page ("Long context pricing", https://docs.anthropic.com/en/docs/about-claude/pricing):
with the 1M-token context window, a Claude Sonnet 4 / 4.5 request of more than 200K input tokens
(input + cache reads + cache writes) is charged at the long-context rates for all its tokens.
The rows themselves are data in sql/20_pricing.sql; this revision only adds the columns:

    long_context_threshold     input tokens (uncached + cache read + cache writes) above which the
                               long_* rates price the whole call; NULL = no long-context tier
    long_*_per_mtok            USD per million tokens of each bucket in that tier
    long_context_source        the page (and retrieval day) the tier was read on, as `source`

A row either has no tier (all NULL) or a threshold with input and output rates and a source; cache
rates may be NULL where the row has no base cache price either.

Revision ID: 0014_long_context
Revises: 0013_summary_chunks
Create Date: 2026-12-01
"""

from alembic import op

revision = "0014_long_context"
down_revision = "0013_summary_chunks"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE ah.model_pricing
    ADD COLUMN long_context_threshold       bigint,
    ADD COLUMN long_input_per_mtok          numeric(12, 4),
    ADD COLUMN long_output_per_mtok         numeric(12, 4),
    ADD COLUMN long_cache_read_per_mtok     numeric(12, 4),
    ADD COLUMN long_cache_write_5m_per_mtok numeric(12, 4),
    ADD COLUMN long_cache_write_1h_per_mtok numeric(12, 4),
    ADD COLUMN long_context_source          text,
    ADD CONSTRAINT model_pricing_long_context_check CHECK (
        (long_context_threshold IS NULL
         AND num_nonnulls(long_input_per_mtok, long_output_per_mtok, long_cache_read_per_mtok,
                          long_cache_write_5m_per_mtok, long_cache_write_1h_per_mtok, long_context_source) = 0)
        OR (long_context_threshold > 0 AND long_input_per_mtok IS NOT NULL AND long_output_per_mtok IS NOT NULL
            AND long_context_source IS NOT NULL));

-- Sessions whose stored cost_usd may now change (a call with more than 200K input tokens, the only
-- threshold sql/20_pricing.sql seeds): re-rolled up by the next index pass.
INSERT INTO ah.dirty_session (session_id)
SELECT DISTINCT session_id FROM ah.model_call
WHERE coalesce(input_uncached, 0) + coalesce(cache_read, 0) + coalesce(cache_write_5m, 0)
      + coalesce(cache_write_1h, 0) > 200000
ON CONFLICT DO NOTHING;
"""

DOWNGRADE = r"""
ALTER TABLE ah.model_pricing
    DROP CONSTRAINT IF EXISTS model_pricing_long_context_check,
    DROP COLUMN IF EXISTS long_context_threshold,
    DROP COLUMN IF EXISTS long_input_per_mtok,
    DROP COLUMN IF EXISTS long_output_per_mtok,
    DROP COLUMN IF EXISTS long_cache_read_per_mtok,
    DROP COLUMN IF EXISTS long_cache_write_5m_per_mtok,
    DROP COLUMN IF EXISTS long_cache_write_1h_per_mtok,
    DROP COLUMN IF EXISTS long_context_source;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
