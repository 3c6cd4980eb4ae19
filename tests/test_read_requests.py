"""The request builders of `read.requests` (pure): what each question accepts, and the one line a
mistake gets — the CLI naming ``--since``, the MCP tools and the web UI naming ``since``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from agent_history.model import classes
from agent_history.read.requests import (
    KEYS,
    RequestError,
    active_sessions_request,
    efficiency_request,
    infra_actions_request,
    loops_request,
    recent_sessions_request,
    search_request,
    session_request,
    sessions_request,
    touched_request,
    usage_request,
    why_request,
)
from agent_history.search.request import Scope

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def test_a_search_request_from_the_shared_parameter_names():
    req = search_request(
        {
            "query": "pool",
            "limit": "5",
            "in": "tools",
            "agents": ["claude-code", "claude", "codex"],
            "exclude_agents": "pi",
            "namespaces": ["claude-local", "claude-local"],
            "classes": ["prompts", "assistant_text"],
            "since": "7d",
            "until": "2026-03-09",
            "session": "  abcdef12  ",
            "source_types": ["memory"],
            "rank": "blend",
        },
        now=NOW,
    )
    assert (req.query, req.limit, req.scope) == ("pool", 5, Scope.TOOLS)
    assert (req.agents, req.exclude_agents, req.namespaces) == (("claude", "codex"), ("pi",), ("claude-local",))
    assert req.classes == (*classes.PROMPTS, "assistant_text")
    assert (req.since, req.until) == (NOW - timedelta(days=7), datetime(2026, 3, 10, tzinfo=UTC))
    assert (req.session, req.source_types, req.rank) == ("abcdef12", ("memory",), "blend")
    empty = search_request({"query": ""})  # asked: the search itself says why it finds nothing
    assert (empty.query, empty.classes, empty.limit) == ("", classes.CONVERSATIONAL, 20)


@pytest.mark.parametrize(
    ("params", "flags", "message"),
    [
        ({"query": "x", "sort": "date"}, True, "search: unknown parameter 'sort' (known: "),
        ({"query": "x", "since": "yesterday"}, True, "--since: not a time: 'yesterday' (use 7d"),
        ({"query": "x", "since": "yesterday"}, False, "since: not a time: 'yesterday' (use 7d"),
        (
            {"query": "x", "since": "2026-03-02", "until": "2026-03-01"},
            False,
            "since 2026-03-02 is not before until 2026-03-01",
        ),
        ({"query": "x", "limit": 0}, True, "--limit must be between 1 and 1000 (got 0)"),
        ({"query": "x", "limit": "many"}, False, "limit must be a whole number (got 'many')"),
        ({"query": "x", "agents": ["vim"]}, False, "unknown agent 'vim' (accepted: claude, codex"),
        ({"query": "x", "classes": ["chatter"]}, True, "unknown message class 'chatter' (classes: "),
        ({"query": "x", "in": "everything"}, True, "unknown search scope 'everything' (known: messages, tools, all,"),
        ({"query": "x", "rank": "best"}, True, "unknown rank 'best' (known: default, blend)"),
        ({"query": "x", "session": "  "}, True, "--session: give a session uid or a prefix of at least 6 characters"),
        ({}, True, "search: give a query"),
    ],
)
def test_a_bad_search_request_is_one_line_naming_the_parameter(params, flags, message):
    with pytest.raises(RequestError) as err:
        search_request(params, flags=flags)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_sessions_session_efficiency_and_loops_requests():
    s = sessions_request({"agents": "codex-cli", "health": "c-f", "subagents": True, "until": "2026-03-01"})
    assert (s.agents, s.health, s.include_subagents, s.limit) == (("codex",), ("C", "D", "F"), True, 20)
    assert s.until == datetime(2026, 3, 2, tzinfo=UTC)
    with pytest.raises(RequestError, match=r"^health grade 'G': give a letter A–F"):
        sessions_request({"health": "G"})
    assert session_request({"uid": " 9e953218/agent-a1 "}) == session_request(
        {"uid": "9e953218", "agent_id": "agent-a1"}
    )
    with pytest.raises(RequestError, match=r"^to must not be before from$"):
        session_request({"uid": "9e953218", "from": 5, "to": 2}, flags=False)
    e = efficiency_request({"session_uid": "abcdef", "role": "root", "limit": 3})
    assert (e.session_uid, e.role, e.limit) == ("abcdef", "root", 3)
    with pytest.raises(RequestError, match=r"^unknown role 'boss' \(known: root, worker, solo\)$"):
        efficiency_request({"role": "boss"})
    assert loops_request({"status": "waiting"}).limit == 20
    with pytest.raises(
        RequestError, match=r"^unknown status 'done' \(known: finished, waiting, paused, running, stale\)$"
    ):
        loops_request({"status": "done"})


def test_a_usage_request_reads_days_in_its_zone():
    u = usage_request({"by": "model", "timezone": "Europe/Berlin", "since": "20250901", "until": "2025-09-30"})
    berlin = ZoneInfo("Europe/Berlin")
    assert (u.view, u.timezone, u.window) == ("model", berlin, "block")
    assert (u.since, u.until) == (datetime(2025, 9, 1, tzinfo=berlin), datetime(2025, 10, 1, tzinfo=berlin))
    assert usage_request({"window": "week", "timezone": "UTC"}).view == "blocks"  # a week window is the blocks view
    for params, message in [
        ({"view": "fortnightly"}, "unknown view 'fortnightly' (known: daily, weekly, monthly, session, blocks)"),
        ({"view": "daily", "by": "model"}, "--by model replaces the view; drop 'daily'"),
        ({"by": "model", "window": "week"}, "--window goes with the blocks view"),
        ({"timezone": "Mars/Olympus"}, "--timezone: unknown time zone 'Mars/Olympus' (an IANA name such as UTC"),
        ({"since": "2025-13-01", "timezone": "UTC"}, "--since: not a date: '2025-13-01'"),
    ]:
        with pytest.raises(RequestError) as err:
            usage_request(params)
        assert str(err.value).startswith(message), params


def test_every_question_names_its_keys():
    assert set(KEYS) == {
        "search", "sessions", "session", "usage", "efficiency", "loops",
        "why", "touched", "recent_sessions", "active_sessions", "infra_actions",
    }  # fmt: skip
    for question, build in [
        ("sessions", sessions_request),
        ("usage", usage_request),
        ("loops", loops_request),
        ("why", why_request),
        ("touched", touched_request),
        ("recent_sessions", recent_sessions_request),
        ("active_sessions", lambda p: active_sessions_request(p, now=NOW)),
        ("infra_actions", lambda p: infra_actions_request(p, programs=("ssh",), now=NOW)),
    ]:
        with pytest.raises(RequestError, match=rf"^{question}: unknown parameter 'nope' \(known: "):
            build({"nope": 1})
