"""VS Code Copilot Chat ``chatSessions/<id>.json`` documents → rows (agent ``copilot-vscode``).

VS Code rewrites the whole file as a chat grows, so this is a `DocumentParser`: every call gets
the complete document and returns its complete content. Files live at
``<VS Code user dir>/workspaceStorage/<hash>/chatSessions/<id>.json`` (and
``globalStorage/emptyWindowChatSessions/<id>.json`` for windows without a folder).

Format contract (FORMATS §7, read off ``corpus/samples/vscode-copilot``; every sample is
hand-written):

- **Document** (record type ``session-doc``): ``{version: 3, sessionId, creationDate,
  lastMessageDate (unix ms), responderUsername, initialLocation, mode, customTitle?,
  requests: [...]}``. One fixture has nothing but ``requests``: the session id then comes from
  the file name.
- **Request** (record type ``request``): ``{requestId, modelId: "copilot/<model>", message:
  {text, parts[]}, response: [part, …], result: {promptTokens, outputTokens, timings:
  {firstProgress, totalElapsed}, metadata: {model}}, timestamp?}``. The samples carry no
  per-request timestamp: ``ts`` stays NULL unless ``timestamp`` is present.
- **Response parts** (record type ``response/<kind>``): ``markdownContent`` (text in ``value``
  or ``content.value`` — both shapes occur) → assistant text, joined in order;
  ``thinking`` (``value``) → reasoning; ``toolInvocationSerialized`` (``toolCallId``, ``toolId``,
  ``invocationMessage``, ``isComplete``) → a tool call. `IGNORED_KINDS` are known and kept
  only as counts; any other kind is ``unknown_record_type``.
- **Keys.** Session = ``sessionId``; turn and prompt = ``<session>:<requestId>``; the response
  text ``…#response``, reasoning ``…#reasoning``; tool call ``<session>:<toolCallId>``; model call
  = the request (only when it records tokens).
- **Usage.** ``result.promptTokens`` → ``input_uncached`` (VS Code records no cache split),
  ``result.outputTokens`` → ``output``; absent → NULL (no model-call row without tokens).
  ``timings.totalElapsed`` → ``duration_ms`` (basis ``recorded``), ``timings.firstProgress`` →
  ``ttft_ms``. Model = ``result.metadata.model``, else ``modelId`` without ``copilot/``.
- **Positions.** ``byte_offset`` = the item's ordinal in document order (the document 0, then
  each request and its response parts), ``line_number`` = ordinal + 1 (`DocumentParser`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import DocumentParser, record_type_row
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.document import load_document
from agent_history.parsers.common.timeutil import parse_ts
from agent_history.parsers.copilot.events import session_uid_from_path

AGENT = "copilot-vscode"

TEXT_KINDS: frozenset[str] = frozenset({"markdownContent"})
"""Response parts holding answer text (FORMATS §7)."""
IGNORED_KINDS: frozenset[str] = frozenset(
    {
        # VS Code chat response part kinds that carry no conversation text of their own
        # (VS Code `chatService` serialized response kinds; none occur in the samples)
        "inlineReference",
        "codeblockUri",
        "textEditGroup",
        "notebookEditGroup",
        "progressMessage",
        "progressTask",
        "progressTaskSerialized",
        "undoStop",
        "prepareToolInvocation",
        "confirmation",
        "command",
        "warning",
        "markdownVuln",
        "mcpServersStarting",
        "elicitation",
        "extensions",
        "pullRequest",
        "multiDiffData",
        "treeData",
        "references",
        "codeCitation",
    }
)


def _markdown(part: dict) -> str | None:
    value = part.get("value")
    if isinstance(value, str):
        return value
    return as_str(as_dict(part.get("content")).get("value"))


class ChatSessionsParser(DocumentParser):
    """A ``chatSessions/*.json`` document → rows (contract in the module docstring)."""

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
        last_model = None
        for req in as_list(doc.get("requests")):
            ordinal += 1
            if not isinstance(req, dict):
                rows.append(ParseIssueRow("non_object", ordinal, ordinal + 1, "request"))
                continue
            rows.append(record_type_row(AGENT, req, "request", None, True))
            req_id = as_nonempty_str(req.get("requestId")) or f"#{ordinal}"
            turn = f"{sid}:{req_id}"
            ts = parse_ts(req.get("timestamp"))
            result = as_dict(req.get("result"))
            meta = as_dict(result.get("metadata"))
            model_id = as_nonempty_str(req.get("modelId"))
            model = as_nonempty_str(meta.get("model")) or (model_id.removeprefix("copilot/") if model_id else None)
            last_model = model or last_model
            pos = ordinal
            rows.append(TurnRow(AGENT, turn, sid, "", model, ts, ts, pos, pos + 1))
            text = as_str(as_dict(req.get("message")).get("text"))
            if text:
                first_prompt = first_prompt or text
                rows.append(self._msg(turn, sid, "user", classes.HUMAN_PROMPT, text, ts, pos, turn, "request"))
            answer: list[str] = []
            thinking: list[str] = []
            for part in as_list(req.get("response")):
                ordinal += 1
                if not isinstance(part, dict):
                    rows.append(ParseIssueRow("non_object", ordinal, ordinal + 1, "response part"))
                    continue
                kind = as_str(part.get("kind")) or ""
                known = kind in TEXT_KINDS or kind in IGNORED_KINDS or kind in ("thinking", "toolInvocationSerialized")
                rows.append(record_type_row(AGENT, part, f"response/{kind}", None, known))
                if not known:
                    rows.append(ParseIssueRow("unknown_record_type", ordinal, ordinal + 1, f"response/{kind}"[:200]))
                elif kind in TEXT_KINDS:
                    value = _markdown(part)
                    if value:
                        answer.append(value)
                elif kind == "thinking":
                    value = as_str(part.get("value"))
                    if value:
                        thinking.append(value)
                elif kind == "toolInvocationSerialized":
                    rows.extend(self._tool(part, sid, turn, ts, ordinal))
            if answer:
                rows.append(
                    self._msg(
                        f"{turn}#response",
                        sid,
                        "assistant",
                        classes.ASSISTANT_TEXT,
                        "".join(answer),
                        ts,
                        pos,
                        turn,
                        "response",
                        model,
                    )
                )
            if thinking:
                rows.append(
                    self._msg(
                        f"{turn}#reasoning",
                        sid,
                        "assistant",
                        classes.REASONING,
                        "".join(thinking),
                        ts,
                        pos,
                        turn,
                        "response",
                        model,
                    )
                )
            prompt_tokens, output_tokens = as_int(result.get("promptTokens")), as_int(result.get("outputTokens"))
            if prompt_tokens is not None or output_tokens is not None:
                timings = as_dict(result.get("timings"))
                elapsed = as_int(timings.get("totalElapsed"))
                rows.append(
                    ModelCallRow(
                        agent=AGENT,
                        call_uid=turn,
                        session_uid=sid,
                        turn_uid=turn,
                        request_id=req_id,
                        model=model,
                        input_uncached=prompt_tokens,
                        output=output_tokens,
                        is_complete=True,
                        ts=ts,
                        byte_offset=pos,
                        line_number=pos + 1,
                        duration_ms=elapsed,
                        duration_basis="recorded" if elapsed is not None else None,
                        ttft_ms=as_int(timings.get("firstProgress")),
                    )
                )
        rows.insert(
            0,
            SessionRow(
                agent=AGENT,
                session_uid=sid,
                agent_id="",
                is_subagent=False,
                model=last_model,
                custom_title=as_nonempty_str(doc.get("customTitle")),
                first_prompt=first_prompt[:200] if first_prompt else None,
                started_at=parse_ts(doc.get("creationDate")),
                ended_at=parse_ts(doc.get("lastMessageDate")),
                byte_offset=0,
                line_number=1,
            ),
        )
        return rows

    @staticmethod
    def _msg(uid, sid, role, cls, text, ts, pos, turn, record_type, model=None) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=sid,
            agent_id="",
            turn_uid=turn,
            role=role,
            message_class=cls,
            text=text,
            ts=ts,
            model=model,
            byte_offset=pos,
            line_number=pos + 1,
            record_type=record_type,
        )

    @staticmethod
    def _tool(part: dict, sid: str, turn: str, ts: Any, ordinal: int) -> list[Row]:
        call = as_nonempty_str(part.get("toolCallId"))
        if call is None:
            return []
        message = part.get("invocationMessage")
        if isinstance(message, dict):
            message = message.get("value")
        complete = part.get("isComplete")
        return [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=f"{sid}:{call}",
                session_uid=sid,
                agent_id="",
                turn_uid=turn,
                name=as_nonempty_str(part.get("toolId")),
                input=as_str(message) if message is not None else None,
                output=json.dumps(part.get("resultDetails"), ensure_ascii=False) if part.get("resultDetails") else None,
                outcome=None if complete is not True else "ok",
                started_at=ts,
                byte_offset=ordinal,
                line_number=ordinal + 1,
            )
        ]


PARSER = ChatSessionsParser
