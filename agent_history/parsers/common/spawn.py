"""The sub-agent spawn row of a ``Task``/``Agent`` tool call, shared by the harnesses whose
spawn tool takes Claude Code's input shape (``prompt``, ``description``, ``subagent_type``):
Claude Code (FORMATS §1) and Cursor agent-transcripts (FORMATS §6)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_history.model.rows import SubagentSpawnRow
from agent_history.parsers.common.coerce import as_dict, as_nonempty_str


def spawn_row(
    agent: str,
    call_uid: str,
    session_uid: str,
    agent_id: str,
    tool_input: Any,
    *,
    byte_offset: int | None,
    line_number: int | None,
    ts: datetime | None = None,
    subagent_type: str | None = None,
) -> SubagentSpawnRow:
    """The spawn of the tool call `call_uid` (its uid is the spawn's): the brief is the input's
    ``prompt``, the description its ``description`` (None when absent or empty); the child
    session is linked later by the post-pass."""
    args = as_dict(tool_input)
    return SubagentSpawnRow(
        agent=agent,
        spawn_uid=call_uid,
        session_uid=session_uid,
        agent_id=agent_id,
        tool_call_uid=call_uid,
        subagent_type=subagent_type,
        description=as_nonempty_str(args.get("description")),
        brief=as_nonempty_str(args.get("prompt")),
        ts=ts,
        byte_offset=byte_offset,
        line_number=line_number,
    )
