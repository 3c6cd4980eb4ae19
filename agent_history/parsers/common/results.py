"""The row a tool result makes, shared by the parsers whose results arrive apart from their calls. Pure.

A harness that writes a tool call's result in its own record (Crush, Factory Droid, Goose, Kimi,
Qwen Code, OpenHands) needs the same three things from it: the call's output row keyed by
`tool_call_uid` (merged with the call's own row by the loader: docs/design.md §7, "tool calls
arrive in two halves"), the error class and excerpt (`agent_history.parsers.common.errors`), and
the git commits/pushes the output shows when the tool is a shell (`common.gitout`). Only where
the uid comes from, how the harness says "failed" and whether it is a shell differ per harness;
those are the arguments.

Outcome (docs/design.md §6, `ah.tool_call.outcome`): ``rejected`` when the user refused the call,
else ``error`` when the harness marks the result an error, else ``ok`` — unless the parser knows
better (Qwen Code's ``interrupted``/``cancelled`` statuses) and passes `outcome`.
"""

from __future__ import annotations

from datetime import datetime

from agent_history.model.rows import ParseIssueRow, Row, ToolCallRow
from agent_history.parsers.base import Pos
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows

__all__ = ["missing_call_id", "tool_result_rows"]


def missing_call_id(pos: Pos, what: str) -> list[Row]:
    """``[ParseIssueRow("bad_record", …)]`` for a result that names no call (`what` says which record)."""
    return [ParseIssueRow("bad_record", pos.byte_offset, pos.line_number, what)]


def tool_result_rows(
    *,
    agent: str,
    tool_call_uid: str,
    session_uid: str,
    agent_id: str,
    name: str | None,
    output: str | None,
    is_error: bool,
    ts: datetime | None,
    pos: Pos,
    rejected: bool = False,
    exit_code: int | None = None,
    interrupted: bool = False,
    outcome: str | None = None,
    error: tuple[str | None, str | None] | None = None,
    shell: bool = False,
    git_command: str | None = None,
) -> list[Row]:
    """The result half of one tool call: a `ToolCallRow`, then its `GitEventRow`s.

    `output` is the result text (None when the harness wrote none); `is_error` whether the
    harness marks it failed; `rejected`, `exit_code` and `interrupted` are the structured flags
    `classify_error` reads (a rejected call is an error). `error` overrides the classification
    with a harness's own ``(error_class, excerpt)`` (Qwen Code's ``errorType``). `ts` and `pos`
    are those of the record holding the result (the row's ``ended_at`` and output position).
    When `shell` is true and there is output, the commits and pushes it shows follow the row
    (`git_command`: the shell command or a hint naming its git subcommands, None when unknown).
    ``is_error`` is stored as True or NULL (never False: absence of a flag is not a success
    claim). Never raises.
    """
    is_error = is_error or rejected
    if error is None:
        error_class, excerpt = classify_error(
            output, is_error=is_error, exit_code=exit_code, rejected=rejected, interrupted=interrupted
        )
    else:
        error_class, excerpt = error
    if outcome is None:
        outcome = "rejected" if rejected else ("error" if is_error else "ok")
    rows: list[Row] = [
        ToolCallRow(
            agent=agent,
            tool_call_uid=tool_call_uid,
            session_uid=session_uid,
            agent_id=agent_id,
            name=name,
            output=output,
            is_error=is_error or None,
            exit_code=exit_code,
            outcome=outcome,
            error_class=error_class,
            error_excerpt=excerpt,
            ended_at=ts,
            output_byte_offset=pos.byte_offset,
            output_line=pos.line_number,
        )
    ]
    if shell and output:
        rows += git_event_rows(
            agent=agent,
            tool_call_uid=tool_call_uid,
            session_uid=session_uid,
            agent_id=agent_id,
            output=output,
            command=git_command,
            ts=ts,
            pos=pos,
        )
    return rows
