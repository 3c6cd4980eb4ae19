"""`agent-history mcp`: serve the read-only MCP server over stdio (for agents; see `connect`)."""

from __future__ import annotations

from agent_history.cli.app import app
from agent_history.cli.context import database


@app.command("mcp")
def mcp_cmd() -> None:
    """Serve the read-only MCP server over stdin/stdout (agents start this; `connect` configures them)."""
    from agent_history.mcp.server import run

    run(database().settings)
