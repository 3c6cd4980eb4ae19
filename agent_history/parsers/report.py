"""Summaries of parsed rows (pure): what `agent-history parse` prints per file and in total."""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_history.model import classes
from agent_history.model.rows import (
    CompactionRow,
    FileTouchRow,
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    SessionRow,
    SubagentSpawnRow,
    ToolCallRow,
)

TOKEN_BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning")


def summarize(folded: dict) -> dict[str, Any]:
    """Counts for folded rows (`model.merge.fold` output).

    Keys: sessions, subagent_sessions, messages_by_class, human_prompts, model_calls (billable:
    not API-error notices; None — unknown, not 0 — when there are assistant replies and no
    model call at all: the format recorded no usage, Codex field cases E22/E23),
    replies_without_usage (assistant messages of sessions with no model call: the calls
    behind them are not counted), api_error_notices, tokens {bucket: tokens} (NULL buckets are
    skipped, not counted as 0), tool_calls, tool_errors_by_class, spawns, compactions,
    file_touches, git_events, issues_by_kind, unknown_record_types {type/subtype: count}.
    A token bucket no call reports is None (unknown), not 0.
    """

    def rows(t):
        return list(folded.get(t, {}).values())

    sessions = rows(SessionRow)
    messages = rows(MessageRow)
    calls = rows(ModelCallRow)
    billable = [c for c in calls if not c.is_api_error]
    tools = rows(ToolCallRow)
    tokens = {
        b: (sum(v for v in vals if v is not None) if any(v is not None for v in vals) else None)
        for b in TOKEN_BUCKETS
        for vals in [[getattr(c, b) for c in billable]]
    }
    with_calls = {(c.session_uid, c.agent_id) for c in calls}
    replies = sum(1 for m in messages if m.role == "assistant" and (m.session_uid, m.agent_id) not in with_calls)
    unknown: Counter[str] = Counter()
    for r in rows(RecordTypeRow):
        if not r.known:
            unknown[f"{r.record_type}/{r.subtype}" if r.subtype else r.record_type] += r.count
    return {
        "sessions": len(sessions),
        "subagent_sessions": sum(1 for s in sessions if s.is_subagent),
        "messages": len(messages),
        "messages_by_class": dict(Counter(m.message_class or "?" for m in messages)),
        "human_prompts": sum(1 for m in messages if m.message_class in classes.PROMPTS),
        "model_calls": len(billable) if calls or not replies else None,
        "replies_without_usage": replies,
        "api_error_notices": len(calls) - len(billable),
        "tokens": tokens,
        "tool_calls": len(tools),
        "tool_errors_by_class": dict(Counter(t.error_class for t in tools if t.error_class)),
        "spawns": len(rows(SubagentSpawnRow)),
        "compactions": len(rows(CompactionRow)),
        "file_touches": len(rows(FileTouchRow)),
        "git_events": len(rows(GitEventRow)),
        "issues_by_kind": dict(Counter(i.kind for i in rows(ParseIssueRow))),
        "unknown_record_types": dict(unknown),
    }


def add_summaries(total: dict[str, Any], one: dict[str, Any]) -> dict[str, Any]:
    """Add summary `one` into `total` (numbers add, dicts add per key, None — unknown — adds
    nothing and stays None only while no summary knows the figure); returns `total`."""
    for k, v in one.items():
        if isinstance(v, dict):
            d = total.setdefault(k, {})
            for kk, vv in v.items():
                if vv is None:
                    d.setdefault(kk, None)
                else:
                    d[kk] = (d.get(kk) or 0) + vv
        elif isinstance(v, int):
            total[k] = (total.get(k) or 0) + v
        elif v is None:  # unknown: the total is the known part, None while nothing is known
            total.setdefault(k, None)
    return total
