"""`agent-history parse`: parse transcripts without a database and show what they hold."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from agent_history.cli.app import app
from agent_history.cli.output import console, err_console, fail, print_json
from agent_history.ingest.parse_files import parse_paths
from agent_history.parsers import AGENTS
from agent_history.parsers.report import TOKEN_BUCKETS


def _fmt_counts(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])) or "-"


@app.command("parse")
def parse_cmd(
    paths: list[Path] = typer.Argument(..., help="Files or directories (*.jsonl found recursively)."),
    agent: str = typer.Option(None, "--agent", help=" | ".join(AGENTS) + " (default: detect)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
    per_file: bool = typer.Option(True, "--per-file/--totals-only", help="Show a row per file."),
) -> None:
    """Parse transcript files (no database) and report sessions, messages, calls, tokens, issues."""
    if agent is not None and agent not in AGENTS:
        fail(f"--agent must be one of {', '.join(AGENTS)}", 2)
    reports, totals = _parse_with_progress(paths, agent)
    if not reports:
        fail("no files found", 2)
    if json:
        print_json(
            {
                "files": [{"path": r.path, "agent": r.agent, "error": r.error, **(r.summary or {})} for r in reports],
                "totals": totals,
            }
        )
    else:
        if per_file:
            table = Table("file", "agent", "sessions", "msgs", "prompts", "calls", "tokens", "tools", "errs", "issues")
            for r in reports:
                if r.summary is None:
                    table.add_row(r.path, r.agent or "?", f"[red]{r.error}[/]")
                    continue
                s = r.summary
                table.add_row(
                    _short(r.path),
                    r.agent,
                    str(s["sessions"]),
                    str(s["messages"]),
                    str(s["human_prompts"]),
                    str(s["model_calls"]),
                    _token_total(s["tokens"]),
                    str(s["tool_calls"]),
                    str(sum(s["tool_errors_by_class"].values())),
                    str(sum(s["issues_by_kind"].values())),
                )
            console.print(table)
        for name, t in sorted(totals.items(), key=lambda kv: kv[0] == "all"):  # "all" last
            if name == "all" and len(totals) == 2:
                continue
            console.print(
                f"\n[bold]{name}[/]: {t['files']} files, {t.get('sessions', 0)} sessions "
                f"({t.get('subagent_sessions', 0)} sub-agent), {t.get('messages', 0)} messages, "
                f"{t.get('human_prompts', 0)} human prompts, {t.get('model_calls', 0)} model calls "
                f"(+{t.get('api_error_notices', 0)} error notices)"
            )
            tok = t.get("tokens", {})
            console.print(
                "  tokens: "
                + ", ".join(f"{b} {tok[b]:,}" if tok.get(b) is not None else f"{b} -" for b in TOKEN_BUCKETS)
            )
            console.print(f"  messages by class: {_fmt_counts(t.get('messages_by_class', {}))}")
            console.print(
                f"  tool calls {t.get('tool_calls', 0)}; errors by class: {_fmt_counts(t.get('tool_errors_by_class', {}))}"
            )
            console.print(
                f"  spawns {t.get('spawns', 0)}, compactions {t.get('compactions', 0)}, "
                f"file touches {t.get('file_touches', 0)}, git events {t.get('git_events', 0)}"
            )
            console.print(f"  parse issues: {_fmt_counts(t.get('issues_by_kind', {}))}")
            console.print(f"  unknown record types: {_fmt_counts(t.get('unknown_record_types', {}))}")
    errors = [r for r in reports if r.error]
    for r in errors:
        err_console.print(f"error: {r.path}: {r.error}", highlight=False)
    if errors:
        raise typer.Exit(1)


def _parse_with_progress(paths: list[Path], agent: str | None):
    """`parse_paths`, with a transient progress bar on stderr when stderr is a terminal (nothing
    otherwise: piped output and logs stay clean)."""
    if not err_console.is_terminal:
        return parse_paths(paths, agent)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("parsing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("files", total=None)
        return parse_paths(paths, agent, lambda done, total: bar.update(task, completed=done, total=total))


def _token_total(tokens: dict) -> str:
    """Sum of the disjoint buckets (reasoning is inside output); '-' when no call reports any."""
    known = [v for k, v in tokens.items() if k != "reasoning" and v is not None]
    return f"{sum(known):,}" if known else "-"


def _short(path: str, width: int = 60) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]
