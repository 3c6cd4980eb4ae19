"""``ui_messages.json`` → rows: what the extension showed, with times, usage and errors (pure).

The file is a JSON array of ``{ts (epoch ms), type: say | ask, say | ask, text, partial,
conversationHistoryIndex, conversationHistoryDeletedRange, modelInfo{modelId, providerId},
…}`` records (cline/cline ``src/shared/ExtensionMessage.ts``, RooCodeInc/Roo-Code
``packages/types/src/message.ts``). It repeats the conversation (``say: text``, ``reasoning``,
``tool``, ``command_output``; ``api_req_started.request`` replays the whole user turn), so it
gives **no** conversation messages — those come from the API history. Rows (item = array index):

- ``say: api_req_started`` → one model call keyed ``<task>:req:<ts>`` (`TOKEN RULE` below),
  its time, model (``modelInfo.modelId``), recorded cost (``cost``, USD), ``cancelReason`` as
  the stop reason (``streaming_failed`` marks an API error). Its counters are written into the
  record when the request finishes: a request still running, or cancelled before any usage,
  keeps NULL counts (never 0), and the next read of the rewritten file fills them (the row's key
  is the record's ``ts``, which does not change).
- its turn: the record's ``conversationHistoryIndex`` k says the API history held k+1 items
  when it was written, so the human input said at k (the task at −1, ``user_feedback``) is API
  item k+1 — the turn the API history reader keys ``<task>#<k+1>``; Roo/Kilo records without the
  index leave the turn NULL.
- errors the API history does not hold (``ask: api_req_failed``, ``say: error``,
  ``diff_error``, ``ask: mistake_limit_reached``) → ``system_reminder`` messages, so they can be
  found; Roo ``say: subtask_result`` → a ``subagent_report`` message.
- compactions: Roo ``say: condense_context`` (``contextCondense{prevContextTokens,
  newContextTokens, condenseId}``) and ``sliding_window_truncation`` (``contextTruncation``), Cline
  ``ask: condense`` (``/smol``: manual) and ``summarize_task`` (auto), and each new Cline
  ``conversationHistoryDeletedRange`` (the oldest messages dropped for the context window: auto).
- ``partial: true`` records are streaming snapshots replaced later by the final one: counted,
  never turned into rows.
Every ``(type, say|ask)`` is counted; one no table knows is a parse issue.

TOKEN RULE (`tokens`; decided on the two real Cline 3.51 tasks of fixtures/samples/cline, 83
requests): ``tokensIn``, ``tokensOut``, ``cacheWrites``, ``cacheReads`` are the provider's counts
as Cline's handler reported them. For Anthropic they are disjoint — the sample's recorded cost
0.04485375 = 10 × 3 + 595 × 15 + 9573 × 3.75 USD per million (claude-sonnet-4.5 list prices, cache
*write*) — while the API history's ``metrics.tokens.cached`` (9573) is ``cacheWrites +
cacheReads`` in all 83 requests: it cannot tell reads from writes, so it is not used. For
OpenAI-compatible handlers ``tokensIn`` includes the cached tokens and ``cacheWrites`` may be a
cache *miss* count (cline/cline ``src/core/api/providers/cache-usage.ts``). Hence: with
``providerId`` in `DISJOINT_PROVIDERS` or Roo's ``apiProtocol: anthropic`` the four counts go
to input_uncached, output, cache_write_5m (no TTL recorded; 5 min is Anthropic's default),
cache_read; with ``apiProtocol: openai`` (Roo's own rule, ``calculateApiCostOpenAI``) input
uncached = tokensIn − cacheWrites − cacheReads; otherwise — provider unknown — the counts are
taken as they are only when no cache tokens were reported (then both conventions agree), else
input_uncached and cache_write stay NULL (cache reads and output are the same in every
convention).
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    Row,
    SessionRow,
)
from agent_history.parsers.base import record_type_row
from agent_history.parsers.cline.family import Task
from agent_history.parsers.common.coerce import as_dict, as_int, as_list, as_nonempty_str, as_str
from agent_history.parsers.common.timeutil import parse_ts

SAYS: frozenset[str] = frozenset(
    {
        # Cline (src/shared/ExtensionMessage.ts)
        "task",
        "error",
        "error_retry",
        "api_req_started",
        "api_req_finished",
        "text",
        "reasoning",
        "qna_respond",
        "completion_result",
        "user_feedback",
        "user_feedback_diff",
        "api_req_retried",
        "command",
        "command_output",
        "tool",
        "shell_integration_warning",
        "shell_integration_warning_with_suggestion",
        "browser_action_launch",
        "browser_action",
        "browser_action_result",
        "mcp_server_request_started",
        "mcp_server_response",
        "mcp_notification",
        "use_mcp_server",
        "diff_error",
        "deleted_api_reqs",
        "clineignore_error",
        "command_permission_denied",
        "checkpoint_created",
        "load_mcp_documentation",
        "generate_explanation",
        "info",
        "task_progress",
        "hook_status",
        "hook_output_stream",
        "subagent",
        "use_subagents",
        "subagent_usage",
        "conditional_rules_applied",
        "partial_tool_result",
        "state_snapshot",
        "compaction",
        # Roo Code / Kilo Code (packages/types/src/message.ts)
        "api_req_retry_delayed",
        "api_req_rate_limit_wait",
        "api_req_deleted",
        "image",
        "subtask_result",
        "checkpoint_saved",
        "rooignore_error",
        "condense_context",
        "condense_context_error",
        "sliding_window_truncation",
        "codebase_search_result",
        "user_edit_todos",
        "too_many_tools_warning",
        "inspect_site_result",
        "payment_required_prompt",
    }
)
ASKS: frozenset[str] = frozenset(
    {
        "followup",
        "plan_mode_respond",
        "make_plan",
        "act_mode_respond",
        "command",
        "command_output",
        "completion_result",
        "tool",
        "api_req_failed",
        "resume_task",
        "resume_completed_task",
        "mistake_limit_reached",
        "auto_approval_max_req_reached",
        "browser_action_launch",
        "use_mcp_server",
        "new_task",
        "spawn_task",
        "condense",
        "change_todo_list",
        "qna_respond",
        "summarize_task",
        "report_bug",
        "use_subagents",
        "status_acknowledgment",
        "generate_report",
        "payment_required_prompt",
    }
)
DISJOINT_PROVIDERS: frozenset[str] = frozenset({"anthropic", "openrouter"})
"""Cline ``providerId``s whose ``tokensIn`` excludes cached tokens: ``anthropic`` (the sample's
cost arithmetic), ``openrouter`` (``src/core/api/providers/openrouter.ts`` subtracts
``cached_tokens`` from ``prompt_tokens``)."""
ERROR_RECORDS: frozenset[tuple[str, str]] = frozenset(
    {("ask", "api_req_failed"), ("say", "error"), ("say", "diff_error"), ("ask", "mistake_limit_reached")}
)
PROMPT_SAYS: frozenset[str] = frozenset({"task", "user_feedback", "user_feedback_diff"})


def tokens(info: dict, provider: str | None, protocol: str | None) -> dict[str, int | None]:
    """The model-call buckets of an ``api_req_started`` payload (the module docstring's rule)."""
    tin, tout = as_int(info.get("tokensIn")), as_int(info.get("tokensOut"))
    cw, cr = as_int(info.get("cacheWrites")), as_int(info.get("cacheReads"))
    out: dict[str, int | None] = {"output": tout, "cache_read": cr, "input_uncached": None, "cache_write_5m": None}
    if protocol == "anthropic" or provider in DISJOINT_PROVIDERS:
        out.update(input_uncached=tin, cache_write_5m=cw)
    elif protocol == "openai":
        rest = None if tin is None else tin - (cw or 0) - (cr or 0)
        out.update(input_uncached=rest if rest is None or rest >= 0 else None, cache_write_5m=cw)
    elif not cw and not cr:
        out.update(input_uncached=tin, cache_write_5m=cw)
    return out


def _payload(record: dict) -> dict | None:
    text = record.get("text")
    if not isinstance(text, str):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def ui_rows(doc: Any, task: Task) -> list[Row]:
    """Every row of one ``ui_messages.json`` (decoded) of `task` (module docstring). A document
    that is not an array is one ``non_object`` issue."""
    if not isinstance(doc, list):
        return [ParseIssueRow("non_object", 0, 1, "UI messages are not a JSON array")]
    agent, sid = task.agent, task.sid
    rows: list[Row] = []
    times = []
    model: str | None = None
    turn: str | None = None
    ranges: set[tuple[int, int]] = set()
    started_request = False
    for i, rec in enumerate(doc):
        loc = {"byte_offset": i, "line_number": i + 1}
        if not isinstance(rec, dict):
            rows.append(ParseIssueRow("non_object", i, i + 1, "UI message is not an object"))
            continue
        rtype = as_str(rec.get("type")) or ""
        sub = as_str(rec.get(rtype)) if rtype in ("say", "ask") else None
        known = (rtype == "say" and sub in SAYS) or (rtype == "ask" and sub in ASKS)
        rows.append(record_type_row(agent, rec, rtype, sub, known))
        if not known:
            rows.append(ParseIssueRow("unknown_record_type", i, i + 1, f"UI record {rtype}/{sub}"))
            continue
        ts = parse_ts(rec.get("ts"))
        if ts is not None:
            times.append(ts)
        info = as_dict(rec.get("modelInfo"))
        model = as_nonempty_str(info.get("modelId")) or model
        index = as_int(rec.get("conversationHistoryIndex"))
        deleted = as_list(rec.get("conversationHistoryDeletedRange"))
        if len(deleted) == 2 and all(as_int(d) is not None for d in deleted):
            span = (as_int(deleted[0]), as_int(deleted[1]))
            if span not in ranges:
                ranges.add(span)  # type: ignore[arg-type]
                rows.append(CompactionRow(agent, f"{sid}:deleted:{span[0]}-{span[1]}", sid, "", "auto", ts=ts, **loc))
        if rec.get("partial") is True:
            continue
        key = f"{sid}:ui:{rec.get('ts')}"
        if rtype == "say" and (sub in PROMPT_SAYS or (sub == "text" and index == -1 and not started_request)):
            if index is not None:
                turn = f"{sid}#{index + 1}"
        elif (rtype, sub) == ("say", "api_req_started"):
            started_request = True
            payload = _payload(rec)
            if payload is None:
                rows.append(ParseIssueRow("bad_record", i, i + 1, "api_req_started text is not a JSON object"))
                continue
            counts = tokens(payload, as_nonempty_str(info.get("providerId")), as_str(payload.get("apiProtocol")))
            cost = payload.get("cost")
            cancel = as_nonempty_str(payload.get("cancelReason"))
            rows.append(
                ModelCallRow(
                    agent=agent,
                    call_uid=f"{sid}:req:{rec.get('ts')}",
                    session_uid=sid,
                    agent_id="",
                    turn_uid=turn if index is not None else None,
                    model=as_nonempty_str(info.get("modelId")),
                    stop_reason=cancel,
                    is_api_error=True if cancel == "streaming_failed" else None,
                    is_complete=(counts["output"] is not None or isinstance(cost, int | float)) and not cancel or None,
                    recorded_cost_usd=float(cost)
                    if isinstance(cost, int | float) and not isinstance(cost, bool)
                    else None,
                    ts=ts,
                    **counts,
                    **loc,
                )
            )
        elif (rtype, sub) in ERROR_RECORDS and as_nonempty_str(rec.get("text")):
            rows.append(_message(task, key, "system", classes.SYSTEM_REMINDER, rec["text"], ts, turn, loc))
        elif (rtype, sub) == ("say", "subtask_result") and as_nonempty_str(rec.get("text")):
            rows.append(_message(task, key, "user", classes.SUBAGENT_REPORT, rec["text"], ts, turn, loc))
        elif (rtype, sub) == ("say", "condense_context"):
            c = as_dict(rec.get("contextCondense"))
            cid = as_nonempty_str(c.get("condenseId")) or str(rec.get("ts"))
            rows.append(
                CompactionRow(
                    agent,
                    f"{sid}:condense:{cid}",
                    sid,
                    "",
                    None,
                    as_int(c.get("prevContextTokens")),
                    as_int(c.get("newContextTokens")),
                    ts=ts,
                    **loc,
                )
            )
        elif (rtype, sub) == ("say", "sliding_window_truncation"):
            c = as_dict(rec.get("contextTruncation"))
            tid = as_nonempty_str(c.get("truncationId")) or str(rec.get("ts"))
            rows.append(
                CompactionRow(
                    agent,
                    f"{sid}:truncation:{tid}",
                    sid,
                    "",
                    "auto",
                    as_int(c.get("prevContextTokens")),
                    as_int(c.get("newContextTokens")),
                    ts=ts,
                    **loc,
                )
            )
        elif rtype == "ask" and sub in ("condense", "summarize_task"):
            trigger = "manual" if sub == "condense" else "auto"
            rows.append(CompactionRow(agent, f"{sid}:{sub}:{rec.get('ts')}", sid, "", trigger, ts=ts, **loc))
    rows.insert(
        0,
        SessionRow(
            agent=agent,
            session_uid=sid,
            agent_id="",
            model=model,
            started_at=min(times) if times else None,
            ended_at=max(times) if times else None,
            byte_offset=0,
            line_number=1,
        ),
    )
    return rows


def _message(task: Task, uid: str, role: str, mclass: str, text: str, ts, turn: str | None, loc: dict) -> MessageRow:
    return MessageRow(
        agent=task.agent,
        message_uid=uid,
        session_uid=task.sid,
        agent_id="",
        turn_uid=turn,
        role=role,
        message_class=mclass,
        text=text,
        ts=ts,
        **loc,
    )
