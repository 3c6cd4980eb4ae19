"""`blame FILE[:LINE] [--json]` (issue 30): thin, over `read.blame`.

Lines with the same commit and origin are one block: a header (line range, short sha, commit
time, who authored it when collected, subject), the session and event behind it, the prompt,
then the lines themselves. Every line is cut to the console's width (80 columns fit), and all
text goes through the terminal-safe console (`cli.terminal`).
"""

from __future__ import annotations

from itertools import groupby

import typer
from rich.text import Text

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, fail, path_option, print_json
from agent_history.cli.tables import shorten_end, shown
from agent_history.timestamps import minute

WHO = {True: "you", False: "someone else", None: None}


def _key(line) -> tuple:
    o = line.origin
    return (line.sha, (o.session.id, o.tool_call_uid, o.ts) if o else None)


def _line(text: str | Text, width: int, style: str | None = None) -> None:
    plain = text.plain if isinstance(text, Text) else text
    one = shorten_end(shown(console, plain.splitlines()[0] if plain.strip() else plain.strip()), width)
    console.print(Text(one, style=style or ""), soft_wrap=True, highlight=False)


def _origin_lines(o, width: int) -> None:
    s = o.session
    thread = s.session_uid + (f"/{s.agent_id}" if s.agent_id else "")
    what = "committed in" if o.kind == "commit" else f"{o.tool_name or 'tool call'} in"
    when = f" at {minute(o.ts)}" if o.ts else ""
    _line(f"  {what} {thread} ({s.namespace or s.agent}){when}", width, "blue")
    if o.brief:
        _line(f"  brief   {o.brief.text}", width, "cyan")
    if o.prompt:
        _line(f"  prompt  {o.prompt.text}", width, "green")


@app.command("blame")
def blame_cmd(
    target: str = typer.Argument(..., help="A file, FILE:LINE or FILE:FIRST-LAST."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Each line's commit, the session and event that made it, and the last prompt before it."""
    from agent_history.read.blame import BlameError, blame, parse_target

    try:
        name, first, last = parse_target(target)
        path = path_option(name, "TARGET", "a file, FILE:LINE or FILE:FIRST-LAST")
        with database().connect() as conn:
            result = blame(conn, path, first, last)
    except BlameError as exc:
        fail(str(exc), 2)
    if json:
        print_json(result.as_dict())
        return
    width = console.width
    digits = len(str(result.lines[-1].line)) if result.lines else 1
    for _, group in groupby(result.lines, key=_key):
        block = list(group)
        head = block[0]
        span = f"{head.line}" if len(block) == 1 else f"{head.line}-{block[-1].line}"
        if head.sha:
            who = WHO[head.authored_by_me]
            parts = [span, head.sha[:10], minute(head.committed_at) if head.committed_at else "-"]
            parts += [who] if who else []
            _line(" ".join(parts) + f"  {head.subject or ''}", width, "bold")
        else:
            _line(f"{span} uncommitted", width, "bold")
        if head.origin:
            _origin_lines(head.origin, width)
        else:
            _line("  no session made it" if head.sha else "  no tool call in the catalogue wrote it", width, "dim")
        for x in block:
            _line(f"  {x.line:>{digits}}│ {x.text.expandtabs(4)}", width)
    if not result.lines:
        console.print(f"{result.path} is empty", highlight=False)
