"""`agent-history secrets`: secret-shaped spans in stored messages and tool input/output."""

from __future__ import annotations

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import check_limit, console, count, print_event, print_json
from agent_history.cli.tables import Record, compact_table, fits, print_records


@app.command("secrets")
def secrets_cmd(
    since: str = typer.Option(None, "--since", help="Found in text from: 7d, 12h, 2w, YYYY-MM-DD or an ISO timestamp."),
    agent: list[str] = typer.Option(None, "--agent", "-a", help="Only these agents (repeatable)."),
    detector: list[str] = typer.Option(None, "--detector", help="Only these detector types (repeatable)."),
    limit: int = typer.Option(1000, "--limit", help="Findings to list (by file, then byte offset; 1–1000)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List every secret-shaped span in stored text (detector, session, file, byte offset, redacted
    preview — never the secret). Scans the rows that are new since the last scan first."""
    from agent_history.cli.options import _agents, _when
    from agent_history.embed.redact import DETECTORS
    from agent_history.ingest.secret_scan import scan
    from agent_history.read.secrets import list_secrets, secret_counts

    check_limit(limit)
    agents = _agents(agent)
    lo = _when(since, "--since")
    unknown = [d for d in detector or () if d not in DETECTORS]
    if unknown:
        from agent_history.cli.output import fail

        fail(f"unknown --detector {unknown[0]!r} (known: {', '.join(DETECTORS)})", 2)
    db = database()
    with db.connect(autocommit=True) as conn:
        scanned = scan(conn)
        found = list_secrets(conn, since=lo, agents=agents, detectors=tuple(detector or ()), limit=limit)
        counts = secret_counts(conn, since=lo, agents=agents, detectors=tuple(detector or ()))
    if scanned.messages or scanned.tool_calls:
        # the scan covers every row new since the last one, whatever the filters list below
        print_event(
            f"scanned {count(scanned.messages, 'new message')} and {count(scanned.tool_calls, 'new tool call')} "
            f"of every agent: {count(scanned.findings, 'finding')} in them"
        )
    if json:
        print_json({"counts": counts, "findings": [f.as_dict() for f in found]})
        return
    if not found:
        console.print("no secret-shaped spans found", highlight=False)
        return
    records = [
        Record(
            (f.detector, f"{f.session_uid}" + (f"/{f.agent_id}" if f.agent_id else ""), f"{f.where}.{f.field}",
             str(f.byte_offset if f.byte_offset is not None else "-")),
            lines=(f.preview,),
            paths=(f.path or "-",),
            styles=("magenta",),
        )
        for f in found
    ]  # fmt: skip
    table = compact_table("detector", "session", "in", "file", "byte", "preview")
    for rec in records:
        table.add_row(*rec.fields[:3], rec.paths[0], rec.fields[3], rec.lines[0])
    table.columns[0].no_wrap = True
    if fits(console, table):
        console.print(table)
    else:
        print_records(console, ("detector", "session", "in", "byte"), records)
    total = sum(counts.values())
    console.print(
        f"{count(total, 'finding')}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())),
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
