"""`agent-history connect AGENT [--print]` and `disconnect AGENT`: register the MCP server with an agent."""

from __future__ import annotations

import typer

from agent_history.cli.app import app
from agent_history.cli.output import console, err_console, fail, print_json, print_warning, write_document
from agent_history.connect import AGENTS, ConnectError, ConnectResult, connect, disconnect, plan
from agent_history.connect.hook import HOOKS
from agent_history.connect.targets import SERVER_NAME

_AGENT_HELP = (
    "One of: " + ", ".join(AGENTS) + " (with --hook: " + ", ".join(HOOKS) + "); a harness name or its product "
    "name works as well (claude or claude-code, vscode or copilot-vscode …)."
)


def _report(result: ConnectResult, verb: str) -> None:
    for warning in result.warnings:
        print_warning(warning)
    c, n = result.config, result.note
    backup = f" (backup: {c.backup})" if c.backup else ""
    if c.action == "absent":
        console.print(
            f"{result.agent}: not connected (no {SERVER_NAME!r} MCP server entry in {c.path})",
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print(f"{result.agent}: MCP server entry {c.action}: {c.path}{backup}", highlight=False, soft_wrap=True)
    for line in result.changes:
        console.print(f"  changed {line}", highlight=False, soft_wrap=True)
    for line in result.kept:
        console.print(f"  kept {line}", highlight=False, soft_wrap=True)
    nbackup = f" (backup: {n.backup})" if n.backup else ""
    if n.action != "absent" or c.action != "absent":
        console.print(f"{result.agent}: usage note {n.action}: {n.path}{nbackup}", highlight=False, soft_wrap=True)
    if verb == "connect" and c.action != "unchanged":
        console.print(f"restart {result.agent} (or reload its MCP servers) to pick it up", highlight=False)


@app.command("connect")
def connect_cmd(
    agent: str = typer.Argument(..., help=_AGENT_HELP),
    print_only: bool = typer.Option(False, "--print", help="Print the config snippet; write nothing."),
    force: bool = typer.Option(
        False, "--force", help="Replace an existing agent-history entry exactly (default: keep its env and extra keys)."
    ),
    json: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
    hook: bool = typer.Option(
        False, "--hook", help="Install the after-turn hook instead (index each turn's transcript when it ends)."
    ),
    statusline: bool = typer.Option(
        False, "--statusline", help="Install `agent-history statusline` as the status line instead (claude)."
    ),
) -> None:
    """Add the read-only MCP server (and a usage note) to an agent's user configuration."""
    if statusline and print_only:
        _statusline_print(agent, json)
        return
    if statusline:
        _statusline_change("connect", agent, json)
        return
    if hook and print_only:
        _hook_print(agent, json)
        return
    if hook:
        _hook_change("connect", agent, json)
        return
    try:
        result = plan(agent, force=force) if print_only else connect(agent, force=force)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        print_json(result.as_dict())
    elif print_only:
        for warning in result.warnings:
            print_warning(warning)
        err_console.print(f"# add to {result.config.path}:", highlight=False)
        write_document(result.snippet)
    else:
        _report(result, "connect")


@app.command("disconnect")
def disconnect_cmd(
    agent: str = typer.Argument(..., help=_AGENT_HELP),
    json: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
    hook: bool = typer.Option(False, "--hook", help="Remove the after-turn hook instead."),
    statusline: bool = typer.Option(False, "--statusline", help="Remove our status line instead."),
) -> None:
    """Remove the MCP server entry and the usage note that `connect` installed."""
    if statusline:
        _statusline_change("disconnect", agent, json)
        return
    if hook:
        _hook_change("disconnect", agent, json)
        return
    try:
        result = disconnect(agent)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        print_json(result.as_dict())
    else:
        _report(result, "disconnect")


def _hook_change(verb: str, agent: str, json: bool) -> None:
    from agent_history.connect import hook

    try:
        change = hook.install(agent) if verb == "connect" else hook.uninstall(agent)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        print_json({"agent": agent, "hook": change.as_dict()})
        return
    backup = f" (backup: {change.backup})" if change.backup else ""
    what = "not installed" if change.action == "absent" else change.action
    console.print(f"{agent}: after-turn hook {what}: {change.path}{backup}", highlight=False, soft_wrap=True)


def _hook_print(agent: str, json: bool) -> None:
    """`connect AGENT --hook --print`: the agent's hook config as it would be with the hook, on
    stdout; writes nothing."""
    from agent_history.connect import hook

    try:
        path, old, new = hook.planned_install(agent)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        print_json({"agent": agent, "path": str(path), "unchanged": old == new, "text": new})
        return
    err_console.print(f"# {path} with the after-turn hook{' (already there)' if old == new else ''}:", highlight=False)
    write_document(new)


def _statusline_print(agent: str, json: bool) -> None:
    """`connect claude --statusline --print`: the ``statusLine`` snippet on stdout; writes nothing."""
    from agent_history.connect import statusline

    try:
        path, text = statusline.snippet(agent)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        import json as _json

        print_json({"agent": agent, "path": str(path), "snippet": _json.loads(text)})
        return
    err_console.print(f"# add to {path}:", highlight=False)
    write_document(text)


def _statusline_change(verb: str, agent: str, json: bool) -> None:
    from agent_history.connect import statusline

    try:
        change = statusline.install(agent) if verb == "connect" else statusline.uninstall(agent)
    except ConnectError as exc:
        fail(str(exc), 2)
    if json:
        print_json({"agent": agent, "statusline": change.as_dict()})
        return
    backup = f" (backup: {change.backup})" if change.backup else ""
    what = "not installed" if change.action == "absent" else change.action
    console.print(f"{agent}: status line {what}: {change.path}{backup}", highlight=False, soft_wrap=True)


@app.command("hook")
def hook_cmd(
    agent: str = typer.Argument(
        ...,
        help="The harness calling: " + ", ".join(f"{name} ({spec.event} hook)" for name, spec in HOOKS.items()) + ".",
    ),
    payload: str = typer.Argument(None, help="The payload (Codex passes it as an argument; Claude Code on stdin)."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the indexing child (debugging)."),
) -> None:
    """Run by a harness after each turn (installed by `connect AGENT --hook`): index that turn's
    transcript in a detached child; always exits 0, errors go to hook.log in the data dir."""
    from agent_history.connect.hook import run_hook

    raise typer.Exit(run_hook([agent, *([payload] if payload else []), *(["--wait"] if wait else [])]))
