"""The request builders of why, touched, recent sessions, active sessions and infra actions
(`read.requests`): what they accept, what they normalise and the one line they refuse with,
naming a parameter as the CLI (``flags=True``) or a tool argument / GET parameter does. Pure: no
database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_history.read.requests import (
    ActiveSessionsRequest,
    InfraActionsRequest,
    RecentSessionsRequest,
    RequestError,
    TouchedRequest,
    WhyRequest,
    active_sessions_request,
    infra_actions_request,
    recent_sessions_request,
    touched_request,
    why_request,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
PROGRAMS = ("ssh", "scp", "rsync", "sftp")


def test_why_lowercases_and_strips_the_sha():
    assert why_request({"sha": " 6D0E203\n"}) == WhyRequest("6d0e203")
    assert why_request({"sha": "6d0e203", "namespaces": ["claude-local"]}) == WhyRequest("6d0e203", ("claude-local",))


@pytest.mark.parametrize("sha", ["6d0e20", "xyz-not-hex", "", "6d0e203" + "0" * 34])
def test_why_refuses_what_is_not_7_to_40_hex_digits(sha):
    with pytest.raises(RequestError) as exc:
        why_request({"sha": sha})
    assert str(exc.value) == f"not a commit sha: {sha.strip().lower()!r} (7–40 hex digits)"


def test_touched_defaults_and_values():
    assert touched_request({"pattern": "src/*.py"}) == TouchedRequest("src/*.py")
    req = touched_request(
        {"pattern": "pool.py", "ops": ["edit", "edit", "read"], "agents": ["claude-code"], "since": "2025-11-01",
         "limit": 5, "touches_per_session": 3}
    )  # fmt: skip
    assert (req.ops, req.agents, req.since, req.limit, req.touches_per_session) == (
        ("edit", "read"),
        ("claude",),
        datetime(2025, 11, 1, tzinfo=UTC),
        5,
        3,
    )


@pytest.mark.parametrize(
    ("params", "flags", "message"),
    [
        ({"pattern": "  "}, True, "empty path pattern"),
        ({"pattern": "x", "ops": ["burn"]}, True, "unknown --op 'burn' (known: read, create, edit, delete, move)"),
        ({"pattern": "x", "ops": ["burn"]}, False, "unknown op 'burn' (known: read, create, edit, delete, move)"),
        ({"pattern": "x", "limit": 0}, True, "--limit must be between 1 and 1000 (got 0)"),
        ({"pattern": "x", "limit": 0}, False, "limit must be between 1 and 1000 (got 0)"),
        ({"pattern": "x", "touches_per_session": 51}, False, "touches_per_session must be between 1 and 50 (got 51)"),
        ({"pattern": "x", "until": "1d"}, True, "touched: unknown parameter 'until' (known: agents, limit, namespaces, "
                                               "ops, pattern, since, touches_per_session)"),
    ],
)  # fmt: skip
def test_touched_refuses_in_one_line(params, flags, message):
    with pytest.raises(RequestError) as exc:
        touched_request(params, flags=flags)
    assert str(exc.value) == message


def test_recent_sessions_resolves_product_names_and_caps_the_limit():
    assert recent_sessions_request({"agents": ["claude-code"], "project": "/w"}) == RecentSessionsRequest(
        10, "/w", ("claude",)
    )
    with pytest.raises(RequestError, match=r"^limit must be between 1 and 50 \(got 51\)$"):
        recent_sessions_request({"limit": 51}, limit_max=50, flags=False)


def test_active_sessions_window_ends_at_now_or_at():
    assert active_sessions_request({}, now=NOW) == ActiveSessionsRequest(NOW - timedelta(minutes=60), NOW)
    req = active_sessions_request({"at": "2026-11-30T10:00:00Z", "minutes": 90, "limit": 5}, now=NOW, flags=False)
    end = datetime(2026, 11, 30, 10, tzinfo=UTC)
    assert (req.since, req.until, req.minutes, req.limit) == (end - timedelta(minutes=90), end, 90, 5)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"at": "soon"}, "at: not a time: 'soon' (use 7d, 12h, 30m, 2w, YYYY-MM-DD or an ISO timestamp)"),
        ({"minutes": 0}, "minutes must be between 1 and 43200 (got 0)"),
        ({"at": "0001-01-02T00:30:00Z", "minutes": 43_200}, "at 0001-01-02T00:30:00Z is out of range: the window "
                                                             "would start before 0001-01-01"),
    ],
)  # fmt: skip
def test_active_sessions_refuses_in_one_line(params, message):
    with pytest.raises(RequestError) as exc:
        active_sessions_request(params, now=NOW, flags=False)
    assert str(exc.value) == message


def test_infra_actions_defaults_to_every_program_and_reads_until_as_the_days_end():
    req = infra_actions_request({"host": "web1", "until": "2026-11-30"}, programs=PROGRAMS, now=NOW, flags=False)
    assert req == InfraActionsRequest(PROGRAMS, "web1", None, datetime(2026, 12, 1, tzinfo=UTC))
    assert infra_actions_request({"programs": ["scp"], "host": ""}, programs=PROGRAMS).programs == ("scp",)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"programs": ["telnet"]}, "unknown program 'telnet' (known: ssh, scp, rsync, sftp)"),
        ({"since": "2026-12-01", "until": "2026-11-01"}, "since 2026-12-01 is after until 2026-11-01"),
    ],
)
def test_infra_actions_refuses_in_one_line(params, message):
    with pytest.raises(RequestError) as exc:
        infra_actions_request(params, programs=PROGRAMS, now=NOW, flags=False)
    assert str(exc.value) == message
