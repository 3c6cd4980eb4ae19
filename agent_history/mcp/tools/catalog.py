"""`schema` and `sql`: describe the catalogue, then query it directly.

- `schema()` — every table and view of schema ``ah`` with its columns (``name type``, ``NOT NULL``
  marked ``!``), estimated rows and comment, and the functions (name, arguments, result). With
  ``table`` it describes that one relation in full (column comments, indexes).
- `sql(statement)` — `mcp.sqltool.run_sql` on the guarded read-only connection (one statement,
  extended protocol, ≤ 200 rows, cells ≤ 2,000 characters, 30 s timeout).
"""

from __future__ import annotations

from typing import Any

import psycopg

from agent_history.mcp.scope import Scope
from agent_history.mcp.sqltool import MAX_CELL_CHARS, MAX_ROWS, run_sql
from agent_history.mcp.tools import ToolEnv, ToolSpec
from agent_history.read import schema

HINTS = (
    "Every event table (message, tool_call, model_call, subagent_spawn, compaction, file_touch, git_event, "
    "turn) has session_id -> session.id, source_id -> source_file.id, byte_offset and line_number.",
    "session: natural key (agent, session_uid, agent_id); agent_id = '' is the main thread, else a sub-agent; "
    "root_session_id / parent_session_id link sub-agents to the session that spawned them.",
    "message.message_class: human_prompt, assistant_text, subagent_brief, subagent_report, compaction_summary, …; "
    "NULL token counts and costs mean unknown, not zero.",
    "Order events physically (source_id, byte_offset), not by timestamp.",
    "Cost of one call: ah.call_cost_usd(coalesce(mc.model, s.model), coalesce(mc.ts, s.started_at), "
    "mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output) — list price in USD, "
    "NULL when the model has no price (ah.model_price_ref.reason says why) or the usage is unknown. "
    "Exclude mc.is_api_error calls.",
    "Cost by project / branch / model / agent: join model_call mc to session s (and its root "
    "r = coalesce(s.root_session_id, s.id)) and GROUP BY r.cwd, s.git_branch, coalesce(mc.model, s.model) or "
    "mc.agent, summing ah.call_cost_usd(…) as above; the host a call ran on is not recorded yet.",
)


def schema_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`schema` tool: ``{"tables": [{name, kind, rows_estimate, comment?, columns}], "functions", "hints"}``."""
    table = args.get("table")
    rows = schema.relations(conn, table)
    if table and not rows:
        raise LookupError(f"no table or view ah.{table}")
    tables = []
    for name, kind, estimate, comment, columns in rows:
        entry: dict[str, Any] = {"name": f"ah.{name}", "kind": kind, "rows_estimate": estimate, "columns": columns}
        if comment:
            entry["comment"] = comment
        tables.append(entry)
    out: dict[str, Any] = {"tables": tables}
    if table:
        tables[0]["columns"] = [
            {k: v for k, v in {"name": c[0], "type": c[1], "not_null": c[2] or None, "comment": c[3]}.items() if v}
            for c in schema.columns(conn, table)
        ]
        tables[0]["indexes"] = [r[1] for r in schema.indexes(conn, table)]
    else:
        out["functions"] = [
            {
                k: v
                for k, v in {"name": f"ah.{r[0]}", "args": r[1], "returns": r[2], "comment": r[3]}.items()
                if v is not None
            }
            for r in schema.functions(conn)
        ]
        out["hints"] = list(HINTS)
        out["legend"] = "columns are 'name type', '!' marks NOT NULL; pass table=NAME for comments and indexes"
    return out


def sql_handler(conn: psycopg.Connection, scope: Scope, args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """`sql` tool: see `mcp.sqltool.run_sql` for the shape."""
    return run_sql(conn, args["statement"])


SCHEMA = ToolSpec(
    name="schema",
    title="Catalogue schema",
    description=(
        "Tables, views, columns and functions of the agent-history catalogue (schema `ah`), with row "
        "estimates and join hints — read this before writing `sql`. Pass `table` for one table's column "
        "comments and indexes."
    ),
    properties={"table": {"type": "string", "description": "One table or view name, without the ah. prefix."}},
    handler=schema_handler,
    scoped=False,
    max_chars=60_000,
)

SQL = ToolSpec(
    name="sql",
    title="Run one read-only SQL query",
    description=(
        f"Run exactly one read-only SQL statement against the catalogue (PostgreSQL, schema `ah`; call "
        f"`schema` first). Read-only transaction, 30 s timeout; at most {MAX_ROWS} rows are returned (a note "
        f"says when there were more) and each cell is cut to {MAX_CELL_CHARS:,} characters. A second "
        "statement, a write or a timeout comes back as an error."
    ),
    properties={"statement": {"type": "string", "minLength": 1, "description": "One SQL statement (no parameters)."}},
    required=("statement",),
    handler=sql_handler,
    scoped=False,
    max_chars=200_000,
)

TOOLS = (SCHEMA, SQL)
