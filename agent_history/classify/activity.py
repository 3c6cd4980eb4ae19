"""One thread's ``agent_efficiency_*`` figures from its rows (issue 32): pure, no I/O.

The SQL twin is ``ah.agent_efficiency(ids)`` in ``sql/36_agent_efficiency.sql``; the rules are in
`agent_history.classify.activity_rules`. Input: the thread's model calls, tool calls and
messages as the catalogue stores them (times as Unix seconds, ``None`` unknown); the model
calls' triggers are the classifier's (``ah.model_call.trigger``). Output: figure key → value,
where a key is ``(family, ((label, value), …))`` without the ``role`` and ``loop`` labels (the
caller adds them: they can change without the thread changing). A figure is present only when
the thread shows the signal: nothing is reported as 0 for a signal the thread does not record.

Families (suffix of ``agent_efficiency_``): ``model_calls`` {trigger}, ``tokens`` {bucket,
trigger}, ``thread_state_seconds`` {state}, ``waits`` / ``wait_seconds`` {wait_outcome},
``polls`` / ``poll_seconds``, ``spawns`` {route}, ``gate_runs`` {gate, gate_result},
``ci_waits`` / ``ci_wait_seconds``, ``reviews`` {review_event}, ``tool_failures``
{error_class}, ``interventions`` {intervention}.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

from agent_history.classify import activity_rules as ar
from agent_history.classify import rules
from agent_history.classify.attribute import KIND_ORDER
from agent_history.classify.commands import command_text, parse_object
from agent_history.classify.results import eff_message, eff_result

TOKEN_BUCKETS: tuple[str, ...] = (
    "input_uncached",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "reasoning",
)
"""The disjoint token buckets of ``ah.model_call`` (migration 0001_core)."""

Key = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class Call:
    """A model call: position (source order, byte offset; None: unplaced), time (Unix s), the
    classifier's trigger (None: unclassified), whether it is an API-error notice, and its
    token counts in `TOKEN_BUCKETS` order (None: unknown)."""

    uid: str
    position: tuple[int, int] | None
    ts: float | None
    trigger: str | None
    is_api_error: bool | None
    tokens: tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool call as stored: name, input (JSON text), output, error flags, times (Unix s) and
    the position of its result (None: no result recorded)."""

    uid: str
    name: str | None
    input: str | None
    output: str | None
    is_error: bool | None
    exit_code: int | None
    error_class: str | None
    started_at: float | None
    ended_at: float | None
    duration_ms: int | None
    position: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class Message:
    """A message as stored (class, role, text, raw record type and origin), its time (Unix s)
    and position."""

    uid: str
    message_class: str | None
    role: str | None
    text: str | None
    record_type: str | None
    record_origin: str | None
    ts: float | None
    position: tuple[int, int] | None


@functools.lru_cache(maxsize=64)
def _program(program: str) -> re.Pattern[str]:
    return re.compile(ar.CMD_START + ar.CMD_WRAPPER + "(" + program + ")" + ar.CMD_END)


def runs(program: str, command: str | None) -> bool:
    """Whether the shell text `command` runs `program` (a regex of `activity_rules`) at a command
    start before any here-document (SQL: ``ah.eff_runs``)."""
    return command is not None and _program(program).search(command.split(ar.HEREDOC, 1)[0]) is not None


def shell_command(agent: str, tool: Tool) -> str | None:
    """The shell text of a shell tool call (rule ``shell`` of `rules.TOOL_RULES`), else None; a
    non-JSON input is the command itself (as `results.eff_result` reads it)."""
    if rules.TOOL_RULES.get(agent, {}).get(tool.name or "") != "shell":
        return None
    args = parse_object(tool.input)
    return tool.input if args is None else command_text(args)


def gate_of(command: str | None) -> str | None:
    """The gate (`activity_rules.GATES`) a shell command runs, or None."""
    for gate, program in ar.GATE_RULES:
        if runs(program, command):
            return gate
    return None


def gate_result(tool: Tool) -> str:
    """``fail`` | ``pass`` | ``unknown`` from the tool result (see `activity_rules.GATE_RESULTS`)."""
    if tool.is_error or (tool.exit_code is not None and tool.exit_code != 0):
        return "fail"
    if tool.is_error is False or tool.exit_code == 0:
        return "pass"
    return "unknown"


def review_event(command: str | None, output: str | None) -> str | None:
    """The review event (`activity_rules.REVIEW_EVENTS`) a shell call shows, or None."""
    for event, program, out_rx in ar.REVIEW_RULES:
        if runs(program, command) and (out_rx is None or re.search(out_rx, output or "")):
            return event
    return None


def spawn_route(agent: str, tool: Tool, command: str | None) -> str | None:
    """The route (`activity_rules.ROUTES`) a tool call spawns on, or None."""
    route = ar.SPAWN_TOOLS.get(agent, {}).get(tool.name or "")
    args = parse_object(tool.input) or {}
    if route is not None:
        if rules.TOOL_RULES.get(agent, {}).get(tool.name or "") == "pi_subagent":
            action = args.get("action")
            if isinstance(action, str) and action in rules.PI_SUBAGENT_STATUS_ACTIONS:
                return None
        return route
    if command is None:
        return None
    if runs(ar.EXEC_LANE, command):
        return "exec_lane"
    return "background_shell" if args.get(ar.BACKGROUND_KEY) is True else None


def tool_seconds(tool: Tool) -> float | None:
    """A tool call's duration (s): ended − started when both are known (0 when negative), else
    ``duration_ms`` / 1000, else None."""
    if tool.started_at is not None and tool.ended_at is not None:
        return max(tool.ended_at - tool.started_at, 0.0)
    if tool.duration_ms is not None:
        return tool.duration_ms / 1000
    return None


def _time(tool: Tool) -> float | None:
    return tool.ended_at if tool.ended_at is not None else tool.started_at


def readable(value: float | None) -> bool:
    """A time the figures can use: unknown (None) or finite (PostgreSQL's ±infinity are not)."""
    return value is None or math.isfinite(value)


def thread_figures(
    agent: str, in_worker: bool, calls: list[Call], tools: list[Tool], messages: list[Message]
) -> Counter[Key]:
    """The figures of one thread (module doc). `in_worker`: the thread is a sub-agent's."""
    out: Counter[Key] = Counter()
    # model calls and tokens (API-error notices are not calls)
    for c in calls:
        if c.is_api_error:
            continue
        trig = c.trigger or "unclassified"
        out[("model_calls", (("trigger", trig),))] += 1
        for bucket, n in zip(TOKEN_BUCKETS, c.tokens, strict=True):
            if n is not None:
                out[("tokens", (("bucket", bucket), ("trigger", trig)))] += n
    # per tool call: waits, polls, spawns, gates, reviews, failures, denials
    commands: dict[int, str | None] = {}  # by id(tool): a uid may repeat within a thread
    result_trig: dict[int, str] = {}
    for t in tools:
        command = commands[id(t)] = shell_command(agent, t)
        if t.position is not None:
            trig = result_trig[id(t)] = eff_result(agent, t.name, t.input, t.output, t.is_error)
            seconds = tool_seconds(t)
            if trig in ar.WAIT_OUTCOMES:
                labels = (("wait_outcome", ar.WAIT_OUTCOMES[trig]),)
                out[("waits", labels)] += 1
                if seconds is not None:
                    out[("wait_seconds", labels)] += seconds
            elif trig == "status":
                out[("polls", ())] += 1
                if seconds is not None:
                    out[("poll_seconds", ())] += seconds
        route = spawn_route(agent, t, command)
        if route is not None:
            out[("spawns", (("route", route),))] += 1
        gate = gate_of(command)
        if gate is not None:
            out[("gate_runs", (("gate", gate), ("gate_result", gate_result(t))))] += 1
        if command is not None and not t.is_error:
            event = review_event(command, t.output)
            if event is not None:
                out[("reviews", (("review_event", event),))] += 1
        if t.error_class is not None:
            out[("tool_failures", (("error_class", t.error_class),))] += 1
            if t.error_class == ar.DENIAL_CLASS:
                out[("interventions", (("intervention", "denial"),))] += 1
    for m in messages:
        kind = ar.INTERVENTION_MESSAGES.get(m.message_class or "")
        if kind is not None:
            out[("interventions", (("intervention", kind),))] += 1
    _sequence_figures(agent, in_worker, calls, tools, messages, commands, result_trig, out)
    return out


def _sequence_figures(
    agent: str,
    in_worker: bool,
    calls: list[Call],
    tools: list[Tool],
    messages: list[Message],
    commands: dict[int, str | None],
    result_trig: dict[int, str],
    out: Counter[Key],
) -> None:
    """Thread states, corrections and CI waits: the figures that need the ordered sequence."""
    # (position, kind order, uid, kind, state, ts, tool or message)
    seq: list[tuple] = []
    for c in calls:
        if not c.is_api_error and c.position is not None:
            seq.append((c.position, KIND_ORDER["call"], c.uid, "call", ar.CALL_STATE, c.ts, None))
    for t in tools:
        if t.position is None:
            continue
        trig = result_trig[id(t)]
        state = ar.RESULT_STATES[trig]
        if trig != "wait" and rules.TOOL_RULES.get(agent, {}).get(t.name or "") in ar.SUBAGENT_TOOL_RULES:
            state = "waiting_subagent"
        seq.append((t.position, KIND_ORDER["result"], t.uid, "result", state, t.ended_at, t))
    for m in messages:
        if m.position is None:
            continue
        trig = eff_message(agent, m.message_class, m.role, m.text, m.record_type, m.record_origin, in_worker)
        if trig is not None:
            seq.append((m.position, KIND_ORDER["message"], m.uid, "message", ar.MESSAGE_STATES[trig], m.ts, m))
    seq.sort(key=lambda e: (e[0], e[1], e[2]))
    previous_ts: float | None = None
    last_result_failed = False
    push_at: float | None = None
    pushed = False
    for _, _, _, kind, state, ts, row in seq:
        if ts is not None:
            if previous_ts is not None:
                gap = max(ts - previous_ts, 0.0)
                out[("thread_state_seconds", (("state", "idle" if gap > ar.IDLE_AFTER_S else state),))] += gap
            previous_ts = ts
        if kind == "result":
            last_result_failed = bool(row.is_error)
            command = commands[id(row)]
            if command is None or row.is_error:
                continue
            if runs(ar.PUSH, command):
                pushed, push_at = True, _time(row)
            elif pushed and runs(ar.CI_LOOK, command) and re.search(ar.CI_FINISHED, row.output or ""):
                out[("ci_waits", ())] += 1
                seen_at = _time(row)
                if push_at is not None and seen_at is not None:
                    out[("ci_wait_seconds", ())] += max(seen_at - push_at, 0.0)
                pushed, push_at = False, None
        elif kind == "message" and state == "waiting_human":
            if row.message_class == ar.CORRECTION_CLASS and last_result_failed:
                out[("interventions", (("intervention", "correction"),))] += 1
            last_result_failed = False
