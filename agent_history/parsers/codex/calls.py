"""Codex tool calls → ToolCallRow, FileTouchRow, GitEventRow, SubagentSpawnRow (a parser mixin).

`ToolCallRows` is mixed into `agent_history.parsers.codex.CodexParser`; it builds the rows of
one tool call from the records that describe it (pure helpers in
`agent_history.parsers.codex.tools`):

- uid ``<session>:<call_id>`` for every record of a call: ``function_call`` /
  ``custom_tool_call`` / ``local_shell_call`` (name, input, started), their outputs (output,
  exit code, outcome, error class, ended), ``exec_command_begin/end``, ``patch_apply_begin/end``,
  ``mcp_tool_call_begin/end``, ``web_search_end``, ``view_image_tool_call``,
  ``collab_agent_spawn_begin/end``. Each record emits a partial row; they merge by policy.
- Outcome: ``ok`` unless the result is an error; ``denied`` → ``rejected``, ``interrupted`` →
  ``interrupted``, any other error class → ``error``. A call is an error when a structured
  field says so (non-zero exit code, ``success: false``, ``isError``) or Codex's own message
  heads the output (rejected / aborted / timed out / sandbox failure); the text of a
  program's output never is (E26).
- A structured exit code seen before the output (``exec_command_end`` ahead of
  ``function_call_output``) is kept in state for that call and applied to the output.
- File touches: shell scripts via `shell.touches_from_shell`, apply_patch envelopes via
  `shell.touches_from_patch`, ``patch_apply_begin.changes``; relative paths are joined to the
  call's working directory (``workdir`` / ``working_directory`` / ``cwd``) or the session cwd.
- Git events: `gitout.git_sightings` over the output of shell calls (with the command, kept
  in state only when it mentions git, cut to `GIT_COMMAND_CHARS`).
- ``spawn_agent`` (arguments ``agent_type``, ``message``) and ``collab_agent_spawn_*`` →
  SubagentSpawnRow (spawn uid = tool call uid; child = ``agent_id`` of the output /
  ``new_thread_id``).
"""

from __future__ import annotations

from typing import Any

from agent_history.model.rows import SubagentSpawnRow, ToolCallRow
from agent_history.parsers.codex import tools
from agent_history.parsers.codex.format import short_sha
from agent_history.parsers.common.coerce import as_nonempty_str, as_strict_int
from agent_history.parsers.common.errors import classify_error
from agent_history.parsers.common.gitout import git_event_rows
from agent_history.parsers.common.touches import file_touch_rows, resolve_path

AGENT = "codex"
MAX_CALLS = 256
"""Cap on tool calls waiting for their output kept in state (name, kind, exit code, git command)."""
GIT_COMMAND_CHARS = 400
"""Length of the command kept in state for git sightings (only commands that mention git)."""


class ToolCallRows:
    """Tool-call rows for `CodexParser`, which provides ``sid``, ``cwd``, ``calls`` (the state's
    pending calls), ``_turn_uid``, ``_issue(kind, pos, detail)`` and ``_occurrence(key, rep)``."""

    sid: str | None
    cwd: str | None
    calls: dict[str, dict]

    def _tool_uid(self, call_id: str) -> str:
        return f"{self.sid}:{call_id}"

    def _remember(self, call_id: str, **fields: Any) -> dict:
        entry = self.calls.pop(call_id, None)
        entry = dict(entry) if isinstance(entry, dict) else {}
        for k, v in fields.items():
            if v is not None:
                entry[k] = v
        self.calls[call_id] = entry
        while len(self.calls) > MAX_CALLS:
            self.calls.pop(next(iter(self.calls)))
        return entry

    def _tool_row(self, call_id: str, ts, pos, **fields: Any) -> ToolCallRow:
        return ToolCallRow(
            agent=AGENT,
            tool_call_uid=self._tool_uid(call_id),
            session_uid=self.sid or "",
            agent_id="",
            turn_uid=self._turn_uid,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            **fields,
        )

    def _touches(self, call_id: str, touches: list[tuple[str, str]], ts, pos, rows, workdir: str | None = None) -> None:
        rows.extend(
            file_touch_rows(
                touches,
                agent=AGENT,
                tool_call_uid=self._tool_uid(call_id),
                session_uid=self.sid or "",
                agent_id="",
                ts=ts,
                pos=pos,
                cwd=resolve_path(workdir, self.cwd) if workdir else self.cwd,
            )
        )

    def _spawn(self, call_id: str, ts, pos, rows, **fields: Any) -> None:
        tuid = self._tool_uid(call_id)
        rows.append(
            SubagentSpawnRow(
                agent=AGENT,
                spawn_uid=tuid,
                session_uid=self.sid or "",
                agent_id="",
                tool_call_uid=tuid,
                ts=ts,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                **fields,
            )
        )

    def _remember_script(self, call_id: str, name: str | None, kind: str, script: str | None) -> None:
        git = script[:GIT_COMMAND_CHARS] if isinstance(script, str) and "git" in script else None
        self._remember(call_id, n=name, k=kind, g=git)

    def _tool_call(self, subtype: str, p: dict, ts, pos, rows) -> None:
        call_id = as_nonempty_str(p.get("call_id")) or as_nonempty_str(p.get("id"))
        if call_id is None:
            rows.append(self._issue("bad_record", pos, f"{subtype} without call_id"))
            return
        if subtype == "local_shell_call":
            action = p.get("action") if isinstance(p.get("action"), dict) else {}
            name, args, input_text = "local_shell", action, tools.dumps(p.get("action"))
            script = tools.command_script(action.get("command"))
        elif subtype == "custom_tool_call":
            name = as_nonempty_str(p.get("name"))
            raw = p.get("input")
            args, input_text = None, tools.call_input(raw)
            script = raw if isinstance(raw, str) and name in tools.SHELL_TOOLS else None
        else:
            name = as_nonempty_str(p.get("name"))
            args, input_text = tools.parse_arguments(p.get("arguments"))
            script = tools.shell_script_for(name, args)
        rows.append(self._tool_row(call_id, ts, pos, name=name, input=input_text, started_at=ts))
        if name in tools.PATCH_TOOLS:
            patch = (args or {}).get("input") or (args or {}).get("patch") if args else input_text
            self._touches(call_id, tools.patch_touches(patch), ts, pos, rows)
            self._remember(call_id, n=name, k="patch")
        elif script is not None:
            self._touches(call_id, tools.script_touches(script), ts, pos, rows, tools.workdir_of(args))
            self._remember_script(call_id, name, "shell", script)
        elif name in tools.SPAWN_TOOLS and isinstance(args, dict):
            self._spawn(
                call_id,
                ts,
                pos,
                rows,
                subagent_type=as_nonempty_str(args.get("agent_type")) or as_nonempty_str(args.get("agent_role")),
                brief=as_nonempty_str(args.get("message")) or as_nonempty_str(args.get("prompt")),
            )
            self._remember(call_id, n=name, k="spawn")
        else:
            self._remember(call_id, n=name, k="other")

    def _result(
        self,
        call_id: str,
        text: str | None,
        ts,
        pos,
        rows,
        *,
        exit_code: int | None = None,
        is_error: bool | None = None,
        duration: int | None = None,
        **flags: bool,
    ) -> None:
        """Emit a tool call's result fields (outcome, error class) and its git sightings."""
        entry = self.calls.get(call_id) if isinstance(self.calls.get(call_id), dict) else {}
        if exit_code is None:
            exit_code = as_strict_int(entry.get("x"))
        for k, v in tools.harness_flags(text).items():
            flags.setdefault(k, v)
        err = bool(is_error) or any(flags.values()) or exit_code not in (None, 0)
        error_class, excerpt = classify_error(
            text,
            is_error=err,
            exit_code=exit_code,
            rejected=bool(flags.get("rejected")),
            interrupted=bool(flags.get("interrupted")),
            timed_out=bool(flags.get("timed_out")),
        )
        outcome = {None: "ok", "denied": "rejected", "interrupted": "interrupted"}.get(error_class, "error")
        rows.append(
            self._tool_row(
                call_id,
                ts,
                pos,
                name=as_nonempty_str(entry.get("n")),
                output=text,
                is_error=error_class is not None,
                exit_code=exit_code,
                outcome=outcome,
                error_class=error_class,
                error_excerpt=excerpt,
                duration_ms=duration,
                ended_at=ts,
                output_byte_offset=pos.byte_offset,
                output_line=pos.line_number,
            )
        )
        if entry.get("k") == "shell" and isinstance(text, str) and text:
            rows.extend(
                git_event_rows(
                    agent=AGENT,
                    tool_call_uid=self._tool_uid(call_id),
                    session_uid=self.sid or "",
                    agent_id="",
                    output=text,
                    command=as_nonempty_str(entry.get("g")),
                    ts=ts,
                    pos=pos,
                )
            )

    def _tool_output(self, p: dict, ts, pos, rows) -> None:
        call_id = as_nonempty_str(p.get("call_id"))
        if call_id is None:
            rows.append(self._issue("bad_record", pos, f"{p.get('type')} without call_id"))
            return
        info = tools.parse_output(p.get("output"))
        entry = self.calls.get(call_id) if isinstance(self.calls.get(call_id), dict) else {}
        if entry.get("k") == "spawn" and isinstance(info.text, str):
            child = tools.spawned_thread(info.text)
            if child:
                self._spawn(call_id, ts, pos, rows, child_session_uid=child, child_agent_id="")
        self._result(
            call_id,
            info.text,
            ts,
            pos,
            rows,
            exit_code=info.exit_code,
            is_error=info.is_error,
            duration=info.duration_ms,
        )
        self.calls.pop(call_id, None)  # answered: nothing later needs it

    def _web_search(self, p: dict, ts, pos, rows) -> None:
        action = p.get("action")
        call_id = as_nonempty_str(p.get("id")) or as_nonempty_str(p.get("call_id"))
        if call_id is None:
            h = short_sha(tools.dumps(action))
            call_id = f"web_search:{h}:{self._occurrence(f'ws:{h}', 0)}"
        status = as_nonempty_str(p.get("status"))
        failed = status in ("failed", "incomplete")
        rows.append(
            self._tool_row(
                call_id,
                ts,
                pos,
                name="web_search",
                input=None if action is None else tools.dumps(action),
                is_error=failed if status else None,
                outcome=("error" if failed else "ok") if status else None,
                started_at=ts,
            )
        )

    def _image_generation(self, p: dict, ts, pos, rows) -> None:
        call_id = as_nonempty_str(p.get("id")) or as_nonempty_str(p.get("call_id"))
        if call_id is None:
            rows.append(self._issue("bad_record", pos, "image_generation_call without id"))
            return
        prompt = as_nonempty_str(p.get("revised_prompt"))
        status = as_nonempty_str(p.get("status"))
        rows.append(
            self._tool_row(
                call_id,
                ts,
                pos,
                name="image_generation",
                input=None if prompt is None else tools.dumps({"revised_prompt": prompt}),
                outcome=("ok" if status == "completed" else "error" if status == "failed" else None),
                is_error=(status == "failed") if status else None,
                started_at=ts,
            )
        )

    def _tool_event(self, subtype: str, p: dict, ts, pos, rows) -> None:
        call_id = as_nonempty_str(p.get("call_id"))
        if (
            subtype in ("exec_command_begin", "exec_command_end", "patch_apply_begin", "patch_apply_end")
            and call_id is None
        ):
            rows.append(self._issue("bad_record", pos, f"{subtype} without call_id"))
            return
        if call_id is None:
            return
        if subtype == "exec_command_begin":
            script = tools.command_script(p.get("command"))
            rows.append(self._tool_row(call_id, ts, pos, started_at=ts))
            self._touches(call_id, tools.script_touches(script), ts, pos, rows, tools.workdir_of(p))
            entry = self.calls.get(call_id)
            if not isinstance(entry, dict) or entry.get("k") in (None, "other"):
                self._remember_script(call_id, None, "shell", script)
        elif subtype == "exec_command_end":
            exit_code = as_strict_int(p.get("exit_code"))
            text = tools.exec_text(p)
            if exit_code is not None:
                self._remember(call_id, x=exit_code)
            self._result(
                call_id,
                text,
                ts,
                pos,
                rows,
                exit_code=exit_code,
                duration=tools.duration_ms(p.get("duration")),
                timed_out=p.get("timed_out") is True,
            )
        elif subtype == "patch_apply_begin":
            rows.append(self._tool_row(call_id, ts, pos, started_at=ts))
            self._touches(call_id, tools.changes_touches(p.get("changes")), ts, pos, rows)
        elif subtype == "patch_apply_end":
            success = p.get("success")
            text = "\n".join(x for x in (p.get("stdout"), p.get("stderr")) if isinstance(x, str) and x) or None
            if isinstance(success, bool):
                self._result(call_id, text, ts, pos, rows, is_error=not success)
            self._touches(call_id, tools.changes_touches(p.get("changes")), ts, pos, rows)
        elif subtype == "mcp_tool_call_begin":
            rows.append(self._tool_row(call_id, ts, pos, started_at=ts))
        elif subtype == "mcp_tool_call_end":
            text, is_error = tools.mcp_result(p.get("result"))
            self._result(call_id, text, ts, pos, rows, is_error=is_error, duration=tools.duration_ms(p.get("duration")))
        elif subtype == "web_search_end":
            query = p.get("query")
            rows.append(
                self._tool_row(
                    call_id,
                    ts,
                    pos,
                    name="web_search",
                    input=None if query is None else tools.dumps({"query": query}),
                    outcome="ok",
                    is_error=False,
                    ended_at=ts,
                )
            )
        elif subtype == "view_image_tool_call":
            path = as_nonempty_str(p.get("path"))
            if path:
                self._touches(call_id, [("read", path)], ts, pos, rows)
        elif subtype in ("collab_agent_spawn_begin", "collab_agent_spawn_end"):
            self._spawn(
                call_id,
                ts,
                pos,
                rows,
                child_session_uid=as_nonempty_str(p.get("new_thread_id")),
                child_agent_id="" if as_nonempty_str(p.get("new_thread_id")) else None,
                subagent_type=as_nonempty_str(p.get("new_agent_role")) or as_nonempty_str(p.get("agent_role")),
                brief=as_nonempty_str(p.get("prompt")),
            )
