"""`agent-history parse`: parse transcripts without a database and show what they hold."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.output import console, count, err_console, fail, path_arguments, print_event, print_json
from agent_history.cli.tables import Record, compact_table, flow, print_table_or_records
from agent_history.ingest.parse_files import parse_paths
from agent_history.parsers import AGENTS
from agent_history.parsers.report import TOKEN_BUCKETS


def _counts(d: dict) -> list[str]:
    """``name count`` items, largest count first (``-`` when there are none)."""
    return [f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])] or ["-"]


def _json_path(path: str) -> str:
    """`path` as JSON can hold it: a name that is not valid UTF-8 (its bytes are lone surrogates
    in Python) with those bytes written ``\\udcff``, as `index` names it when it skips one."""
    return path.encode("utf-8", "backslashreplace").decode()


def _totals_line(label: Text | str, items: list[str]) -> None:
    """`label` then `items` separated by commas, wrapped between items (indented)."""
    flow(console, [label, *(f"{i}," for i in items[:-1]), *items[-1:]], sep=" ", indent="    ")


@app.command("parse")
def parse_cmd(
    path_args: list[str] = typer.Argument(
        ..., metavar="PATHS", help="Files or directories (*.jsonl found recursively)."
    ),
    agent: str = typer.Option(None, "--agent", help=" | ".join(AGENTS) + " (default: detect)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
    per_file: bool = typer.Option(True, "--per-file/--totals-only", help="Show a row per file."),
) -> None:
    """Parse transcript files (no database) and report sessions, messages, calls, tokens, issues."""
    if agent is not None and agent not in AGENTS:
        fail(f"--agent must be one of {', '.join(AGENTS)}", 2)
    reports, totals = _parse_with_progress(path_arguments(path_args, "PATHS"), agent)
    if not reports:
        fail("no files found", 2)
    if json:
        print_json(
            {
                "files": [
                    {"path": _json_path(r.path), "agent": r.agent, "error": r.error, **(r.summary or {})}
                    for r in reports
                ],
                "totals": totals,
            }
        )
    else:
        if per_file:
            _print_files(reports)
        for name, t in sorted(totals.items(), key=lambda kv: kv[0] == "all"):  # "all" last
            if name == "all" and len(totals) == 2:
                continue
            tok = t.get("tokens", {})
            console.print()
            _totals_line(Text(name, style="bold") + ":", [
                count(t["files"], "file"), f"{count(t.get('sessions', 0), 'session')} ({t.get('subagent_sessions', 0)} sub-agent)",
                count(t.get("messages", 0), "message"), count(t.get("human_prompts", 0), "human prompt"),
                _calls_text(t),
            ])  # fmt: skip
            _totals_line(
                "  tokens:", [f"{b} {tok[b]:,}" if tok.get(b) is not None else f"{b} -" for b in TOKEN_BUCKETS]
            )
            _totals_line("  messages by class:", _counts(t.get("messages_by_class", {})))
            _totals_line(f"  tool calls {t.get('tool_calls', 0)}; errors by class:",
                         _counts(t.get("tool_errors_by_class", {})))  # fmt: skip
            _totals_line("  spawns", [f"{t.get('spawns', 0)}", f"compactions {t.get('compactions', 0)}",
                                      f"file touches {t.get('file_touches', 0)}", f"git events {t.get('git_events', 0)}"])  # fmt: skip
            _totals_line("  parse issues:", _counts(t.get("issues_by_kind", {})))
            _totals_line("  unknown record types:", _counts(t.get("unknown_record_types", {})))
    errors = [r for r in reports if r.error]
    for r in errors:
        print_event(f"error: {r.path}: {r.error}")
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


def _or_dash(n: int | None) -> str:
    return "-" if n is None else str(n)


def _calls_text(t: dict) -> str:
    """The model-call figure of a totals line: unknown (not 0) where replies record no usage."""
    notices = count(t.get("api_error_notices", 0), "error notice")
    replies = t.get("replies_without_usage") or 0
    if t.get("model_calls") is None and replies:
        return f"model calls unknown ({count(replies, 'reply', 'replies')} with no usage recorded)"
    unrecorded = f"; {count(replies, 'reply', 'replies')} with no usage recorded" if replies else ""
    return f"{count(t.get('model_calls') or 0, 'model call')} (+{notices}{unrecorded})"


def _token_total(tokens: dict) -> str:
    """Sum of the disjoint buckets (reasoning is inside output); '-' when no call reports any."""
    known = [v for k, v in tokens.items() if k != "reasoning" and v is not None]
    return f"{sum(known):,}" if known else "-"


FILE_HEADERS = ("agent", "sessions", "msgs", "prompts", "calls", "tokens", "tools", "errs", "issues")


def _print_files(reports) -> None:
    """A row per file: a table with the path first when it fits the console; else records —
    the figures on one line, the path whole on the next (shortened in the middle only if it is
    longer than a line), a file that failed with its error."""
    records = []
    for r in reports:
        s = r.summary
        if s is None:
            figures = (r.agent or "?", *("-",) * (len(FILE_HEADERS) - 1))
            records.append(Record(figures, lines=(f"error: {r.error}",), paths=(r.path,), styles=("red",)))
            continue
        fields = (
            r.agent, str(s["sessions"]), str(s["messages"]), str(s["human_prompts"]), _or_dash(s["model_calls"]),
            _token_total(s["tokens"]), str(s["tool_calls"]), str(sum(s["tool_errors_by_class"].values())),
            str(sum(s["issues_by_kind"].values())),
        )  # fmt: skip
        records.append(Record(fields, paths=(r.path,)))
    table = compact_table("file", *FILE_HEADERS)
    for rec in records:
        error = rec.lines[0] if rec.lines else None
        table.add_row(rec.paths[0], *((rec.fields[0], Text(error, style="red")) if error else rec.fields))
    for column in table.columns:
        column.no_wrap = True
    print_table_or_records(console, table, FILE_HEADERS, records)
