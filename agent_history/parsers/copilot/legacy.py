"""Legacy GitHub Copilot CLI session documents (``~/.copilot/history-session-state/*.json``) → rows.

Copilot CLI before the ``session-state/<id>/events.jsonl`` log wrote one JSON document per
session and rewrote it as the session grew: a `DocumentParser`. No real sample is in the
corpus (FORMATS §7 lists only ``events.jsonl``); the shape below is the one public Copilot
session readers decode (``{sessionId, startTime, chatMessages[], timeline[]}``), and the tests
use a document written to it.

- **Document** (record type ``session-doc``): ``sessionId`` (else the file name), ``startTime``
  (ISO) → ``started_at``, ``selectedModel`` → model.
- **chatMessages** (record type ``chatMessage/<role>``): the OpenAI chat list the CLI sent to the
  model. ``user`` → ``human_prompt``; ``assistant`` → ``assistant_text`` (``content`` may be
  null) with ``tool_calls[{id, function{name, arguments}}]`` → tool calls; ``tool``
  (``tool_call_id``, ``content``) → that call's output; ``system`` → ``system_prompt``. Other
  roles are ``unknown_record_type``. Message uid ``<session>:m<index>``; tool call uid
  ``<session>:<id>``. The list carries no timestamps (``ts`` NULL) and no usage (no model calls).
- **timeline** (record type ``timeline/<type>``): the UI's event list with ``timestamp``s; it
  repeats what ``chatMessages`` holds, so it only gives ``ended_at`` (the latest timestamp) and
  counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ParseIssueRow, Row, SessionRow, ToolCallRow
from agent_history.parsers.base import DocumentParser, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.copilot.events import session_uid_from_path

AGENT = "copilot"

ROLE_CLASS: dict[str, tuple[str, str]] = {
    # chat-completions roles (the list Copilot CLI sent to the model)
    "user": ("user", classes.HUMAN_PROMPT),
    "assistant": ("assistant", classes.ASSISTANT_TEXT),
    "system": ("system", classes.SYSTEM_PROMPT),
}


def _text(content) -> str | None:
    if isinstance(content, str):
        return content
    parts = [as_str(p.get("text")) or "" for p in as_list(content) if isinstance(p, dict)]
    return "\n".join(parts) if parts else None


class LegacySessionParser(DocumentParser):
    """A ``history-session-state/*.json`` document → rows (contract in the module docstring)."""

    AGENT = AGENT
    VERSION = 1

    def parse(self, data: bytes) -> Iterable[Row]:
        """Every row of the document; invalid JSON or a non-object → one parse issue."""
        doc, issues = load_document(data)
        if doc is None:
            return issues
        if not isinstance(doc, dict):
            return [*issues, ParseIssueRow("non_object", 0, 1, type(doc).__name__)]
        sid = as_nonempty_str(doc.get("sessionId")) or session_uid_from_path(self.ctx.path)
        rows: list[Row] = [*issues, record_type_row(AGENT, doc, "session-doc", None, True)]
        ordinal = 0
        first_prompt = None
        for i, msg in enumerate(as_list(doc.get("chatMessages"))):
            ordinal += 1
            if not isinstance(msg, dict):
                rows.append(ParseIssueRow("non_object", ordinal, ordinal + 1, "chatMessage"))
                continue
            role = as_str(msg.get("role")) or ""
            known = role in ROLE_CLASS or role == "tool"
            rows.append(record_type_row(AGENT, msg, f"chatMessage/{role}", None, known))
            if not known:
                rows.append(ParseIssueRow("unknown_record_type", ordinal, ordinal + 1, f"chatMessage/{role}"[:200]))
                continue
            uid = f"{sid}:m{i}"
            if role == "tool":
                call = as_nonempty_str(msg.get("tool_call_id"))
                if call:
                    rows.append(
                        ToolCallRow(
                            agent=AGENT,
                            tool_call_uid=f"{sid}:{call}",
                            session_uid=sid,
                            agent_id="",
                            output=_text(msg.get("content")),
                            output_byte_offset=ordinal,
                            output_line=ordinal + 1,
                        )
                    )
                continue
            text = _text(msg.get("content"))
            out_role, cls = ROLE_CLASS[role]
            if text:
                if cls == classes.HUMAN_PROMPT and first_prompt is None:
                    first_prompt = text
                rows.append(
                    MessageRow(
                        agent=AGENT,
                        message_uid=uid,
                        session_uid=sid,
                        agent_id="",
                        role=out_role,
                        message_class=cls,
                        text=text,
                        byte_offset=ordinal,
                        line_number=ordinal + 1,
                        record_type=f"chatMessage/{role}",
                    )
                )
            for tc in as_list(msg.get("tool_calls")):
                if not isinstance(tc, dict) or not as_nonempty_str(tc.get("id")):
                    continue
                fn = as_dict(tc.get("function"))
                args = fn.get("arguments")
                rows.append(
                    ToolCallRow(
                        agent=AGENT,
                        tool_call_uid=f"{sid}:{tc['id']}",
                        session_uid=sid,
                        agent_id="",
                        message_uid=uid if text else None,
                        name=as_nonempty_str(fn.get("name")),
                        input=args if isinstance(args, str) or args is None else json.dumps(args, sort_keys=True),
                        byte_offset=ordinal,
                        line_number=ordinal + 1,
                    )
                )
        latest = None
        for entry in as_list(doc.get("timeline")):
            ordinal += 1
            if not isinstance(entry, dict):
                rows.append(ParseIssueRow("non_object", ordinal, ordinal + 1, "timeline entry"))
                continue
            rows.append(record_type_row(AGENT, entry, f"timeline/{as_str(entry.get('type')) or ''}", None, True))
            ts = parse_ts(entry.get("timestamp"))
            if ts is not None and (latest is None or ts > latest):
                latest = ts
        started = parse_ts(doc.get("startTime"))
        rows.insert(
            0,
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=False,
                model=as_nonempty_str(doc.get("selectedModel")),
                first_prompt=first_prompt[:200] if first_prompt else None,
                started_at=started,
                ended_at=latest or started,
                byte_offset=0,
                line_number=1,
            ),
        )
        return rows


PARSER = LegacySessionParser
