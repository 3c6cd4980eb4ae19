"""Tool results and messages → trigger (rules in `agent_history.classify.rules`).

Pure: no I/O. The SQL twins are ``ah.eff_result`` and ``ah.eff_message`` in
``sql/35_efficiency.sql``; ``tests/test_efficiency_contract.py`` holds them equal.
"""

from __future__ import annotations

import re

from agent_history.classify import rules
from agent_history.classify.commands import command_text, command_trigger, parse_object

_STATE_FILE = re.compile(rules.STATE_FILE)
_BG_RUNNING = re.compile(rules.BG_RUNNING)
_WAIT_TIMED_OUT = re.compile(rules.WAIT_TIMED_OUT)
_STDIN_RUNNING = re.compile(rules.STDIN_RUNNING)
_HARNESS_ORIGIN = re.compile(rules.HARNESS_ORIGIN)
_TASK_NOTIFICATION = re.compile(rules.TASK_NOTIFICATION)
_PI_WAKE_ORIGIN = re.compile(rules.PI_WAKE_ORIGIN)


def eff_result(agent: str, tool_name: str | None, input: str | None, output: str | None, is_error: bool | None) -> str:
    """The trigger a tool call's result is: one of `rules.TRIGGERS` except user/model/agent_msg.

    `agent` is the harness (claude | codex | pi), `input` the stored input JSON text, `output`
    the stored result text. Unknown harnesses and tools are ``work``. Raises ValueError only
    for a rule name `rules.TOOL_RULES` declares but this function does not know (a code bug).
    """
    rule = rules.TOOL_RULES.get(agent, {}).get(tool_name or "", "work")
    if rule in ("work", "status", "orchestrate"):
        return rule
    args = parse_object(input)
    if rule == "shell":  # a non-JSON input is the command itself
        return command_trigger(input if args is None else command_text(args))
    obj = args or {}
    if rule == "read_file":
        path = obj.get("file_path")
        if not (isinstance(path, str) and path != ""):
            path = obj.get("path")
        return "status" if isinstance(path, str) and _STATE_FILE.search(path) else "work"
    if rule == "bg_output":
        return "wait" if _BG_RUNNING.search(output or "") else "event"
    if rule == "agent_wait":
        if is_error:
            return "work"
        return "wait" if _WAIT_TIMED_OUT.search(output or "") else "event"
    if rule == "stdin_poll":
        chars = obj.get("chars")
        if isinstance(chars, str) and chars != "":
            return "work"
        return "wait" if _STDIN_RUNNING.search(output or "") else "event"
    if rule == "pi_subagent":
        action = obj.get("action")
        return "status" if isinstance(action, str) and action in rules.PI_SUBAGENT_STATUS_ACTIONS else "orchestrate"
    raise ValueError(f"unknown tool rule {rule!r} in rules.TOOL_RULES")


def eff_message(
    agent: str,
    message_class: str | None,
    role: str | None,
    text: str | None,
    record_type: str | None,
    record_origin: str | None,
    in_worker: bool,
) -> str | None:
    """The trigger a message is, or None when it does not change the agent's state.

    `record_type` / `record_origin` are the raw record type and origin the harness wrote
    (`MessageRow.record_type`); `in_worker` is true in a sub-agent thread. Never raises.
    """
    if role in rules.NON_EVENT_ROLES:
        return None
    if message_class == "agent_message":
        if record_origin is not None and _HARNESS_ORIGIN.search(record_origin):
            return "event"
        return rules.AGENT_MESSAGE_IN_WORKER if in_worker else rules.AGENT_MESSAGE_IN_ROOT
    fixed = rules.MESSAGE_CLASS_TRIGGERS.get(message_class or "")
    if fixed is not None:
        return fixed
    if message_class in ("context_injection", "system_reminder") and _TASK_NOTIFICATION.search(text or ""):
        return "event"
    if (
        agent == "pi"
        and record_type == "custom_message"
        and record_origin is not None
        and _PI_WAKE_ORIGIN.search(record_origin)
    ):
        return "event"
    return None
