"""Codex tool calls: arguments, outputs, exit codes, durations and the files a call touched. Pure.

The format facts `agent_history.parsers.codex.parser` relies on for tool calls (Codex CLI 0.3x–0.15x):

- ``function_call`` carries ``name``, ``call_id`` and ``arguments`` — a JSON *string* (sometimes
  already an object in hand-written files). ``custom_tool_call`` carries a raw ``input`` string
  (``apply_patch`` sends the patch envelope itself). ``local_shell_call`` carries
  ``action = {type: exec, command: [argv], working_directory, timeout_ms}``.
- Shell-like tools and where their command is: ``shell`` / ``container.exec`` /
  ``local_shell`` → ``command`` (an argv list such as ``["bash", "-lc", "<script>"]``, or a
  string); ``shell_command`` → ``command`` (string); ``exec_command`` (unified exec) → ``cmd``.
  An argv whose program is a shell with ``-c``/``-lc`` stands for its script; any other argv
  is joined with shell quoting.
- ``apply_patch`` arrives as a ``function_call`` (``arguments.input``), a ``custom_tool_call``
  (``input``), or a shell script that feeds an envelope (``*** Begin Patch`` … ``*** End
  Patch``) to ``apply_patch`` by a heredoc (`shell.touches_from_shell` reads the envelope).
- Working directory of a call: ``workdir`` (shell, shell_command, exec_command arguments),
  ``action.working_directory`` (local_shell_call), ``exec_command_begin.cwd``.
- ``function_call_output.output`` is one of: a JSON string ``{"output": "...", "metadata":
  {"exit_code": 0, "duration_seconds": 1.2}}`` (0.3x–0.5x shell), plain text with a harness
  header (``Exit code: 0`` / ``Process exited with code 0`` / ``Wall time: 1.2 seconds`` lines
  before an ``Output:`` line — shell_command and unified exec), a JSON list of content items
  (MCP results), a list of ``{type: output_text|input_text, text}`` items, or an object
  ``{content, success}``. Exit codes are read from the metadata, the header, or Codex's own
  sandbox message (``failed in sandbox … exit code: 2, stdout: …``) only: text further down
  the output never sets one (field case E26).
- Harness messages at the head of an output mark an error the output itself states:
  ``exec command rejected by user`` (denied), ``aborted`` (interrupted), ``command timed out``,
  ``failed to parse function arguments``, ``unsupported call``.
- Durations: ``{"secs": 1, "nanos": 200000000}`` (Rust ``Duration``), seconds as a number, or
  strings like ``"1.2s"`` / ``"350ms"``.
- ``patch_apply_begin.changes`` maps a path to a change tagged ``add`` / ``update`` (with an
  optional ``move_path``: a move, reported like ``mv``) / ``delete``, either externally tagged
  (``{"update": {...}}``) or with a ``type`` field.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

import orjson

from agent_history.parsers.common.shell import touches_from_patch, touches_from_shell

__all__ = [
    "OutputInfo",
    "call_input",
    "changes_touches",
    "command_script",
    "dumps",
    "duration_ms",
    "exec_text",
    "harness_flags",
    "mcp_result",
    "parse_arguments",
    "parse_output",
    "patch_touches",
    "script_touches",
    "shell_script_for",
    "spawned_thread",
    "text_of",
    "workdir_of",
]

SHELL_TOOLS: frozenset[str] = frozenset({"shell", "container.exec", "local_shell", "shell_command", "exec_command"})
"""Tool names whose input is a shell command (see the module docstring for the argument key)."""
PATCH_TOOLS: frozenset[str] = frozenset({"apply_patch"})
SPAWN_TOOLS: frozenset[str] = frozenset({"spawn_agent"})
"""Tools that start a sub-agent thread: arguments ``message`` (the brief), ``agent_type``."""

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_SHELL_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic", "-cl"})
_HEADER_LINE = re.compile(
    r"^(?:(?P<exit>Exit code:?|Process exited with code)\s+(?P<code>-?\d+)"
    r"|Wall time:\s*(?P<wall>[\d.]+)\s*(?:seconds|s)"
    r"|Chunk ID:.*|Original token count:.*|Process running with session ID.*|Total output lines:.*)\s*$"
)
_SANDBOX_EXIT = re.compile(r"\Afailed in sandbox\b[^\n]{0,200}?\bexit code:? (-?\d+)")
_DURATION_TEXT = re.compile(r"^\s*([\d.]+)\s*(ms|s|sec|secs|seconds)?\s*$")

HARNESS_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*(?:exec command|patch|command|tool call)?\s*rejected by (?:the )?user", re.I), "rejected"),
    (re.compile(r"^\s*aborted(?: by (?:the )?user\b[^\n]*)?\s*$", re.I), "interrupted"),
    (re.compile(r"^\s*command timed out after\b", re.I), "timed_out"),
    (re.compile(r"^\s*failed to parse function arguments", re.I), "error"),
    (re.compile(r"^\s*unsupported call\b|^\s*unsupported custom tool call\b", re.I), "error"),
    (re.compile(r"^\s*execution error:|^\s*failed in sandbox\b|^\s*sandbox error\b", re.I), "error"),
)
"""Codex's own messages at the head of a tool output → the flag they set (as data)."""


def dumps(value: Any) -> str:
    """`value` as JSON text (non-str keys and odd values are stringified, never raises)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(str(value)).decode()


def parse_arguments(raw: Any) -> tuple[dict | None, str | None]:
    """``function_call.arguments`` → (decoded object or None, input as JSON text or raw text).

    A JSON string that decodes to an object is returned decoded and re-serialised; any other
    string is kept as raw text; an object is serialised. None → (None, None).
    """
    if raw is None:
        return None, None
    if isinstance(raw, dict):
        return raw, dumps(raw)
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None, raw
        return (value if isinstance(value, dict) else None), dumps(value)
    return None, dumps(raw)


def call_input(raw: Any) -> str | None:
    """A ``custom_tool_call.input`` (raw text) or any other value as text (JSON for non-strings)."""
    if raw is None:
        return None
    return raw if isinstance(raw, str) else dumps(raw)


def command_script(command: Any) -> str | None:
    """A command value (argv list or string) → the shell text it runs, or None."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return None
    prog = command[0].rsplit("/", 1)[-1]
    if len(command) >= 3 and prog in _SHELLS and command[1] in _SHELL_FLAGS:
        return command[2]
    return shlex.join(command)


def shell_script_for(name: str | None, args: dict | None) -> str | None:
    """The shell text a shell-like tool call runs (`SHELL_TOOLS`, or any tool whose name says
    shell/exec with a ``command``/``cmd`` argument), else None."""
    if not isinstance(args, dict) or not isinstance(name, str):
        return None
    lowered = name.lower()
    if name not in SHELL_TOOLS and "shell" not in lowered and "exec" not in lowered:
        return None
    for key in ("cmd", "command"):
        if key in args:
            return command_script(args[key])
    return None


def script_touches(script: str | None) -> list[tuple[str, str]]:
    """Files a shell script touches (`shell.touches_from_shell`, which also reads an apply_patch
    envelope fed to ``apply_patch`` by a heredoc). Never raises."""
    if not isinstance(script, str) or not script.strip():
        return []
    try:
        return list(touches_from_shell(script))
    except Exception:  # noqa: BLE001 — a helper bug must not stop the parse
        return []


def patch_touches(patch: Any) -> list[tuple[str, str]]:
    """Files an apply_patch envelope (or unified diff) touches. Never raises."""
    if not isinstance(patch, str) or not patch.strip():
        return []
    try:
        return list(touches_from_patch(patch))
    except Exception:  # noqa: BLE001
        return []


_CHANGE_OPS = {
    "add": "create",
    "create": "create",
    "update": "edit",
    "modify": "edit",
    "delete": "delete",
    "remove": "delete",
}


def changes_touches(changes: Any) -> list[tuple[str, str]]:
    """``patch_apply_begin.changes`` → [(op, path)]; a move is ``("move", old)``, ``("create", new)``."""
    if not isinstance(changes, dict):
        return []
    out: list[tuple[str, str]] = []
    for path, change in changes.items():
        if not isinstance(path, str) or not path:
            continue
        kind, body = None, None
        if isinstance(change, dict):
            if isinstance(change.get("type"), str):
                kind, body = change["type"], change
            elif len(change) == 1:
                kind, body = next(iter(change.items()))
        op = _CHANGE_OPS.get(str(kind).lower()) if kind is not None else None
        move = body.get("move_path") if isinstance(body, dict) else None
        if isinstance(move, str) and move:
            out += [("move", path), ("create", move)]  # the `mv` convention of `shell`
        else:
            out.append((op or "edit", path))
    return out


def workdir_of(args: Any) -> str | None:
    """The working directory named in a call's arguments (``workdir`` / ``working_directory`` / ``cwd``)."""
    if not isinstance(args, dict):
        return None
    for key in ("workdir", "working_directory", "cwd"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def duration_ms(value: Any) -> int | None:
    """A duration (``{"secs", "nanos"}``, seconds as a number, ``"1.2s"`` / ``"350ms"``) → ms."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return round(value * 1000) if value >= 0 else None
    if isinstance(value, dict):
        secs, nanos = value.get("secs", 0), value.get("nanos", 0)
        if isinstance(secs, int | float) and isinstance(nanos, int | float) and not isinstance(secs, bool):
            return round(secs * 1000 + nanos / 1_000_000)
        return None
    if isinstance(value, str):
        m = _DURATION_TEXT.match(value)
        if m:
            try:
                n = float(m.group(1))
            except ValueError:
                return None
            return round(n) if m.group(2) == "ms" else round(n * 1000)
    return None


def text_of(value: Any) -> str | None:
    """Text of an output value: a string, or the joined ``text`` of content items."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
        return "\n".join(parts) if parts else None
    return None


@dataclass(frozen=True, slots=True)
class OutputInfo:
    """What a tool output says: its text, and the structured facts found with it (None = unknown)."""

    text: str | None
    exit_code: int | None = None
    duration_ms: int | None = None
    is_error: bool | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _header(text: str) -> tuple[int | None, int | None]:
    """(exit code, duration ms) from a harness header: lines before ``Output:`` that all match."""
    exit_code, wall = None, None
    for line in text.split("\n", 12)[:12]:
        line = line.strip()
        if line == "Output:":
            return exit_code, wall
        m = _HEADER_LINE.match(line)
        if m is None:
            return None, None
        if m.group("code") is not None:
            exit_code = int(m.group("code"))
        elif m.group("wall") is not None:
            try:
                wall = round(float(m.group("wall")) * 1000)
            except ValueError:
                wall = None
    return None, None


def parse_output(output: Any) -> OutputInfo:
    """Decode a ``function_call_output`` / ``custom_tool_call_output`` ``output`` value.

    See the module docstring for the shapes. Never raises; unknown shapes give their JSON text.
    """
    if isinstance(output, dict):
        text = text_of(output.get("content")) or text_of(output.get("output"))
        success = output.get("success")
        is_error = (not success) if isinstance(success, bool) else None
        return OutputInfo(text if text is not None else dumps(output), is_error=is_error)
    if isinstance(output, list):
        return OutputInfo(text_of(output) if text_of(output) is not None else dumps(output))
    if not isinstance(output, str):
        return OutputInfo(None if output is None else dumps(output))
    stripped = output.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and "output" in value and isinstance(value.get("metadata"), dict | None):
            meta = value.get("metadata") or {}
            text = value["output"] if isinstance(value["output"], str) else text_of(value["output"])
            return OutputInfo(
                text,
                exit_code=_int(meta.get("exit_code")),
                duration_ms=duration_ms(meta.get("duration_seconds")),
            )
        if isinstance(value, dict) and isinstance(value.get("isError", value.get("is_error")), bool):
            text = text_of(value.get("content"))
            return OutputInfo(
                text if text is not None else output, is_error=value.get("isError", value.get("is_error"))
            )
        if isinstance(value, list):
            text = text_of(value)
            if text is not None:
                return OutputInfo(text)
        return OutputInfo(output)
    code, wall = _header(output)
    if code is None:
        m = _SANDBOX_EXIT.match(output)
        code = int(m.group(1)) if m else None
    return OutputInfo(output, exit_code=code, duration_ms=wall)


def harness_flags(text: str | None) -> dict[str, bool]:
    """Flags (rejected / interrupted / timed_out / error) from Codex's own message at the head
    of an output (`HARNESS_MESSAGES`); empty when the output is ordinary program output."""
    if not isinstance(text, str):
        return {}
    head = text[:200]
    for pattern, flag in HARNESS_MESSAGES:
        if pattern.search(head):
            return {flag: True}
    return {}


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def exec_text(p: dict) -> str | None:
    """``exec_command_end`` output: aggregated output, else stdout + stderr, else formatted."""
    agg = p.get("aggregated_output")
    if isinstance(agg, str):
        return agg
    parts = [x for x in (p.get("stdout"), p.get("stderr")) if isinstance(x, str) and x]
    if parts:
        return "\n".join(parts)
    fmt = p.get("formatted_output")
    return fmt if isinstance(fmt, str) else None


def mcp_result(result: Any) -> tuple[str | None, bool | None]:
    """``mcp_tool_call_end.result`` (``{"Ok": {content, isError}}`` / ``{"Err": msg}``) → (text, is_error)."""
    if isinstance(result, dict):
        if "Err" in result:
            err = result["Err"]
            return (err if isinstance(err, str) else dumps(err)), True
        ok = result.get("Ok", result)
        if isinstance(ok, dict):
            flag = ok.get("isError", ok.get("is_error"))
            return text_of(ok.get("content")), flag if isinstance(flag, bool) else False
    return None, None


def spawned_thread(text: str) -> str | None:
    """The child thread id in a ``spawn_agent`` output (``{"agent_id": …}``)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict):
        return _str(value.get("agent_id")) or _str(value.get("thread_id"))
    return None
