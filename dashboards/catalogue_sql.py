"""SQL fragments the catalogue dashboard's tabs share (`dashboards.catalogue`,
`dashboards.catalogue_tabs`): the variable filters, event times, token buckets, cost and the shell
command of a tool call."""

from __future__ import annotations

# Filters on a session alias `s` (namespace, agent) and a model-call alias `c` (model).
S = "s.namespace IN ($namespace) AND s.agent IN ($agent)"
MODEL = "coalesce(c.model, 'unknown') IN ($model)"

# Event times, falling back to the session's start when the record carries none.
TOOL_TS = "coalesce(t.started_at, t.ended_at, s.started_at)"
TOUCH_TS = "coalesce(f.ts, s.started_at)"
MSG_TS = "coalesce(m.ts, s.started_at)"

# One row per (call, token bucket): the buckets of ah.model_call, disjoint (docs/design.md §5).
BUCKETS = """CROSS JOIN LATERAL (VALUES ('input_uncached', c.input_uncached), ('cache_read', c.cache_read),
  ('cache_write_5m', c.cache_write_5m), ('cache_write_1h', c.cache_write_1h), ('output', c.output))
  AS b(bucket, tokens)"""

COST = "ah.call_cost_usd(c.model, c.ts, c.input_uncached, c.cache_read, c.cache_write_5m, c.cache_write_1h, c.output)"

# The shell command of a tool call: Claude `{"command": "…"}`, Codex `{"command": [argv…]}` or
# `{"cmd": "…"}` (inputs are stored as JSON text; anything else has no command).
COMMAND = """CASE WHEN t.input IS JSON OBJECT THEN
    CASE jsonb_typeof(t.input::jsonb -> 'command')
      WHEN 'array' THEN t.input::jsonb -> 'command' ->> -1
      ELSE coalesce(t.input::jsonb ->> 'command', t.input::jsonb ->> 'cmd') END END"""

# Loops rows belong to a root session; its namespace and agent filter them.
LOOP_S = "JOIN ah.session s ON s.id = l.root_session_id"

# Ingest rows carry the namespace of their source file.
F = "f.namespace IN ($namespace) AND f.agent IN ($agent)"
