"""The MCP server: the official `mcp` SDK's low-level server over stdio, tools declared as data.

`build_server(env)` registers `TOOLS` (each a `tools.ToolSpec`: name, description, JSON schema,
handler). Every ``tools/call`` runs in a worker thread through `ToolEnv.call`, which validates the
arguments, opens a fresh guarded read-only connection as the reader role, runs the handler and
closes the connection. Any failure — invalid arguments, the role guard, a SQL error, an
unreachable server — comes back as an error result (``is_error``) whose one line says why
(a value it echoes cut past `echo.ECHO_LIMIT` characters, saying its size: the CLI's rule,
`echo.clip_echoes`); the server itself keeps running.

`run()` resolves the reader DSN lazily (first call; `db.connection.Database.reader_dsn`: env
``AGENT_HISTORY_READER_DSN``, config ``database.reader_dsn``, or the embedded server's
``ah_reader``), so ``tools/list`` answers even when the database is down.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from agent_history import __version__
from agent_history.config import ConfigError, Settings, load_settings
from agent_history.db.connection import Database
from agent_history.db.errors import DatabaseError
from agent_history.echo import clip_echoes
from agent_history.harnesses import products
from agent_history.mcp.guard import GuardRefused
from agent_history.mcp.sqltool import SqlError
from agent_history.mcp.tools import ToolEnv, ToolFailure, ToolSpec
from agent_history.mcp.tools.activity import TOOLS as ACTIVITY_TOOLS
from agent_history.mcp.tools.catalog import TOOLS as CATALOG_TOOLS
from agent_history.mcp.tools.efficiency import TOOLS as EFFICIENCY_TOOLS
from agent_history.mcp.tools.listing import TOOLS as LISTING_TOOLS
from agent_history.mcp.tools.loops import TOOLS as LOOP_TOOLS
from agent_history.mcp.tools.read import TOOLS as READ_TOOLS
from agent_history.mcp.tools.recall import TOOLS as RECALL_TOOLS
from agent_history.mcp.tools.search import TOOLS as SEARCH_TOOLS
from agent_history.mcp.tools.summaries import TOOLS as SUMMARY_TOOLS
from agent_history.mcp.tools.tasks import TOOLS as TASK_TOOLS

log = logging.getLogger("agent_history.mcp")

TOOLS: tuple[ToolSpec, ...] = (
    *SEARCH_TOOLS,
    *RECALL_TOOLS,
    *LISTING_TOOLS,
    *SUMMARY_TOOLS,
    *READ_TOOLS,
    *ACTIVITY_TOOLS,
    *LOOP_TOOLS,
    *TASK_TOOLS,
    *CATALOG_TOOLS,
    *EFFICIENCY_TOOLS,
)
"""Every tool, in the order `tools/list` shows them."""

INSTRUCTIONS = (
    f"Read-only access to the history of past coding-agent sessions ({products()}). Search it "
    "before re-deriving a decision, re-debugging an error or asking the user something they may have "
    "answered before: `search` / `find_sessions` for text, `why` for a commit, `touched` for a file, "
    "`session` to read a transcript, `active_sessions` for what is running now, `infra_actions` for "
    "ssh/scp/rsync against a host, `loops` for long-running agent loops, `task` for a Backlog task, "
    "`schema` + `sql` for anything "
    "else. Cite results by session uid, file and byte offset (the `cite` field)."
)

EXPECTED_FAILURES = (ToolFailure, GuardRefused, SqlError, DatabaseError, ConfigError)
"""Failures whose message says it all (anything else is also logged to stderr with a traceback)."""

READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=READ_ONLY,
    )


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def build_server(env: ToolEnv, tools: tuple[ToolSpec, ...] = TOOLS) -> Server:
    """A low-level `Server` serving `tools` with `env`."""
    by_name = {t.name: t for t in tools}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(t) for t in tools])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            return _text(clip_echoes(f"unknown tool {params.name!r} (tools: {', '.join(by_name)})"), error=True)
        try:
            text = await anyio.to_thread.run_sync(env.call, spec, dict(params.arguments or {}))
        except Exception as exc:  # every failure becomes an error result, never a dead server
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not isinstance(exc, EXPECTED_FAILURES):
                log.exception("tool %s failed", spec.name)
            # a message quoting a 100 kB argument back (``invalid mode for search: 'aaaa…' is not
            # one of …``) says its size instead of filling the agent's context with its own input
            return _text(clip_echoes(message), error=True)
        return _text(text)

    return Server(
        "agent-history",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def default_env(settings: Settings | None = None) -> ToolEnv:
    """A `ToolEnv` from `settings` (default: env + config); the reader DSN is resolved on first use."""
    if settings is None:
        settings = load_settings()
        for warning in settings.warnings:  # `agent-history mcp` has shown them already
            log.warning(warning)
    # The embedded server may have been stopped (`db stop`, idle stop, a crash) since: it is
    # started again on demand, as every other command does.
    reader_dsn = Database(settings).live_reader_dsn()
    return ToolEnv(reader_dsn=reader_dsn, contexts=dict(settings.contexts), embedding=settings.embedding)


async def serve(env: ToolEnv) -> None:
    """Serve `env`'s tools over this process's stdin/stdout until the client disconnects."""
    server = build_server(env)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(settings: Settings | None = None) -> None:
    """Entry point of `agent-history mcp`: serve stdio until EOF (keeping the embedded server
    from idle-stopping meanwhile)."""
    logging.basicConfig(level=logging.WARNING, format="agent-history mcp: %(levelname)s %(message)s")
    if settings is None:
        settings = load_settings()
        for warning in settings.warnings:
            log.warning(warning)
    with Database(settings).keep_alive():
        anyio.run(serve, default_env(settings))
