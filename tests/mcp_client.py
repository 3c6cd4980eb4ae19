"""Test helpers for the MCP server: run `python -m agent_history mcp` over stdio with the SDK client.

`call_tools(env, calls)` starts one server process with `env`, initialises a `ClientSession`,
lists the tools, makes each call in order and returns ``(tools, results)``; `Result.data` is the
parsed JSON of a successful call, `Result.text` the raw text (the error message on failure).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    """One tool call's outcome."""

    is_error: bool
    text: str

    @property
    def data(self) -> Any:
        assert not self.is_error, f"tool call failed: {self.text}"
        return json.loads(self.text)


def server_env(dsn: str, reader_dsn: str, tmp: Path, **extra: str) -> dict[str, str]:
    """Environment for a server against a test database, with no real home or config touched."""
    env = {
        k: v for k, v in os.environ.items() if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
    }
    (tmp / "home").mkdir(parents=True, exist_ok=True)
    (tmp / "config.toml").touch()  # an AGENT_HISTORY_CONFIG naming a missing file is an error
    env.update(
        AGENT_HISTORY_DSN=dsn,
        AGENT_HISTORY_READER_DSN=reader_dsn,
        AGENT_HISTORY_CONFIG=str(tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
        HOME=str(tmp / "home"),
    )
    env.update(extra)
    return env


async def _run(
    env: dict[str, str], calls: list[tuple[str, dict]], command: str, args: list[str]
) -> tuple[list, list[Result]]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=REPO)
    # The server's stderr goes to fd 2, which pytest captures and shows for a failing test.
    async with stdio_client(params, errlog=sys.__stderr__) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            results = []
            for name, arguments in calls:
                res = await session.call_tool(name, arguments)
                text = "".join(c.text for c in res.content if getattr(c, "type", None) == "text")
                results.append(Result(bool(res.is_error), text))
    return tools, results


def call_tools(
    env: dict[str, str],
    calls: list[tuple[str, dict]],
    *,
    command: str = sys.executable,
    args: list[str] | None = None,
) -> tuple[list, list[Result]]:
    """Start a server (default ``python -m agent_history mcp``), list its tools, make `calls`;
    ``(tools, results)``."""
    return anyio.run(_run, env, calls, command, args if args is not None else ["-m", "agent_history", "mcp"])


def call(env: dict[str, str], name: str, arguments: dict | None = None) -> Result:
    """One tool call on a fresh server."""
    return call_tools(env, [(name, arguments or {})])[1][0]
