"""Aider chat histories → rows (pure). Format: FORMATS-NEW.md §4; Aider-AI/aider ``aider/io.py``
(``append_chat_history``, ``user_input``, ``ai_output``) and ``aider/coders/base_coder.py``
(``calculate_and_show_tokens_and_cost``) at 5dc9490bb35f; samples in fixtures/samples/aider
(excerpts of three real histories, one of them the Aider author's own).

``<repository>/.aider.chat.history.md`` is append-only Markdown (UTF-8; Aider writes with
``errors="ignore"``), read by byte offset like JSONL: the loader feeds complete lines (a torn
last line waits, `parsers.base.Parser.RAW_LINES`). Each write is one block:

- ``\\n# aider chat started at YYYY-MM-DD HH:MM:SS\\n`` starts a session (local wall time without
  a zone: read in the indexing machine's zone). Session uid ``<8 hex of the file path's
  sha256>-<byte offset of the header>``; lines before the first header (the file may start
  with other content) form a session at offset 0 with no start time. cwd: the file's directory.
- ``#### <line>  `` lines are one user input (a multi-line input is several; ``#### <blank>``
  is an empty one). Input starting with ``/`` is an Aider command (``command_expansion``;
  ``/code X`` is followed by the prompt ``#### X``); anything else is a ``human_prompt`` and
  starts a turn.
- ``> <line>  `` lines are Aider's own output; a multi-line output prefixes only its first line,
  so a non-blank, unprefixed line right after one continues it (``Tokens: …`` then ``Cost: …``
  on the next line). Consecutive outputs are one ``local_command_output`` message. Read from
  them: ``Aider vX`` (version), ``Main model: X``/``Model: X``/``Models: X … weak model Y``
  (the model of the calls that follow), ``Tokens: … sent, [W cache write, ][H cache hit, ]R
  received.[ Cost: $M message|request, $S session.]`` (one model call: its counts and the
  message cost), ``Applied edit to P`` (an ``apply_edit`` call touching P — ``create`` when a
  ``Create new file?`` for P was answered just before, else ``edit``), ``Running CMD`` (a
  ``run`` call, its shell touches), ``Commit SHA SUBJECT`` (a ``commit`` call and its git event).
- Every other line (blank lines included) is the assistant's reply (``assistant_text``,
  SEARCH/REPLACE blocks and all).

Tokens — what Aider prints, not what the provider returned: counts are exact below 1,000 and
in ``5,244``-style output (≤ 0.49); ``5.1k``/``21k`` are rounded to what Aider shows (read as
5,100 and 21,000). ``sent`` changed meaning (base_coder.py history): DeepSeek's prompt count
includes its cache hits (``sent − hit`` uncached, ``hit`` read); for providers reporting
Anthropic-style cache fields ``sent`` excluded hits and writes up to 0.50, was ``prompt + hit +
write`` from 0.51 (4c2c0ac, 2024-08-19) and ``prompt + write`` from 0.63 (2e97fcc); with a
cache count and no known version, uncached input is NULL. Writes → ``cache_write_5m``;
``received`` → output; no reasoning bucket. Message times are not written (only the session
header's): NULL. ``.aider.input.history`` repeats the inputs (and y/n answers) and is not read.

State: the session, its model and version, the open turn, and the open block with its text so
far — the one deviation from "no text in the state", because a block may span a batch or a
pass. The text is capped at `MAX_BLOCK_CHARS`: a longer block is emitted in parts at
content-determined cut points, so results never depend on batch boundaries.
Record types counted: ``header``, ``user``, ``tool``, ``assistant`` (one per block).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import orjson

from agent_history.model import classes
from agent_history.model.rows import (
    GitEventRow,
    MessageRow,
    ModelCallRow,
    ParseIssueRow,
    RecordTypeRow,
    Row,
    SessionRow,
    ToolCallRow,
    TurnRow,
)
from agent_history.parsers.base import ParseContext, Parser, Pos
from agent_history.parsers.common.coerce import note_refused
from agent_history.parsers.common.shell import touches_from_shell
from agent_history.parsers.common.touches import file_touch_rows

AGENT = "aider"
VERSION = 1
MAX_BLOCK_CHARS = 128 * 1024
"""A block's text kept in the state; a longer block is emitted in parts of about this size."""

_HEADER = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
_VERSION = re.compile(r"^Aider v(\d+)\.(\d+)(?:\.(\d+))?")
_MODEL = re.compile(r"^(?:Main model|Model|Models): (\S+)")
_NUM = r"[\d][\d,]*(?:\.\d+)?k?"
_TOKENS = re.compile(
    rf"Tokens: (?P<sent>{_NUM}) sent(?:, (?P<write>{_NUM}) cache write)?"
    rf"(?:, (?P<hit>{_NUM}) (?:cache hit|cached))?, (?P<recv>{_NUM}) received\."
)
_COST = re.compile(r"Cost: \$(?P<msg>\d+(?:\.\d+)?) (?:message|request)")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_CREATE = re.compile(r"^Create new file\? .*: y(?:es)?$", re.I)
_RUNNING = re.compile(r"^Running (.+)$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$")
_DEEPSEEK = re.compile(r"deepseek", re.I)

SENT_INCLUDES = (((0, 0, 0), ()), ((0, 51, 0), ("hit", "write")), ((0, 63, 0), ("write",)))
"""Anthropic-style cache fields: from which Aider version (inclusive) ``sent`` includes which
cache counts (base_coder.py: 4c2c0ac in 0.51.0, 2e97fcc in 0.63.0)."""


def _count(text: str | None) -> int | None:
    """A printed token count: ``5,244`` → 5244, ``5.1k`` → 5100, ``21k`` → 21000."""
    if not text:
        return None
    k = text.endswith("k")
    value = float(text.rstrip("k").replace(",", ""))
    return int(round(value * 1000)) if k else int(value)


def _tokens(line: str, model: str | None, version: list | None) -> dict[str, Any] | None:
    """Model-call columns of one ``Tokens:`` output (module docstring), or None."""
    m = _TOKENS.search(line)
    if m is None:
        return None
    sent, write, hit, recv = (_count(m.group(g)) for g in ("sent", "write", "hit", "recv"))
    uncached: int | None = sent
    if sent is not None and _DEEPSEEK.search(model or ""):
        uncached = sent - (hit or 0)
    elif sent is not None and (hit or write):
        if version is None:
            uncached = None
        else:
            included = next(inc for since, inc in reversed(SENT_INCLUDES) if tuple(version) >= since)
            uncached = sent - (hit or 0 if "hit" in included else 0) - (write or 0 if "write" in included else 0)
    cost = _COST.search(line)
    return {
        "input_uncached": uncached,
        "cache_read": hit,
        "cache_write_5m": write,
        "output": recv,
        "recorded_cost_usd": float(cost.group("msg")) if cost else None,
    }


def _kind(line: str) -> str:
    """``header`` | ``user`` | ``tool`` | ``blank`` | ``text`` for one line (trailing blanks stripped)."""
    if line.startswith("# aider chat started at ") and _HEADER.match(line):
        return "header"
    if line == "####" or line.startswith("#### "):
        return "user"
    if line == ">" or line.startswith("> "):
        return "tool"
    return "blank" if not line.strip() else "text"


class AiderParser(Parser):
    """One ``.aider.chat.history.md``, fed line by line (module docstring)."""

    AGENT = AGENT
    VERSION = VERSION
    RAW_LINES = True

    def __init__(self, ctx: ParseContext, state: dict | None = None) -> None:
        super().__init__(ctx, state)
        st = state or {}
        self.file_key = hashlib.sha256(ctx.path.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        self.cwd = os.path.dirname(ctx.path) or None
        self.sid: str | None = st.get("sid")
        self.model: str | None = st.get("model")
        self.version: list | None = st.get("version")
        self.turn: str | None = st.get("turn")
        self.creating: str | None = st.get("creating")
        self.prev_tool: str | None = st.get("prev_tool")
        self.block: dict | None = st.get("block")
        """The open block: ``{kind, offset, line, parts, text, entry}`` (``entry``: the open
        output entry ``{offset, line, text}`` of a tool block)."""

    def state(self) -> dict:
        """The session, model, version, turn, pending create, last output line, open block."""
        return {
            "sid": self.sid,
            "model": self.model,
            "version": self.version,
            "turn": self.turn,
            "creating": self.creating,
            "prev_tool": self.prev_tool,
            "block": self.block,
        }

    # -- feeding -----------------------------------------------------------------------------
    def feed(self, record: Any, pos: Pos) -> Iterable[Row]:
        """Rows of one line (`record`: its bytes without the newline)."""
        rows: list[Row] = []
        if isinstance(record, bytes):
            try:
                line = record.decode("utf-8")
            except UnicodeDecodeError as exc:
                rows.append(ParseIssueRow("invalid_utf8", pos.byte_offset, pos.line_number, f"byte {exc.start}"))
                line = record.decode("utf-8", "replace")
        else:
            line = str(record)
        line = line.replace("\x00", "\ufffd").rstrip()
        kind = _kind(line)
        block = self.block
        if kind == "header":
            rows += self._close()
            rows.append(self._seen("header"))
            rows += self._start_session(line, pos)
            return rows
        if self.sid is None and kind != "blank":  # content before any header
            self.sid = f"{self.file_key}-0"
            rows.append(self._session_row(None, Pos(0, 0, 1)))
        if kind == "user":
            if block is None or block["kind"] != "user":
                rows += self._close()
                self._open("user", pos)
            self._append(line[5:] if line != "####" else "", pos, rows)
        elif kind == "tool":
            if block is None or block["kind"] != "tool":
                rows += self._close()
                self._open("tool", pos)
            rows += self._close_entry()
            self.block["entry"] = {"offset": pos.byte_offset, "line": pos.line_number, "text": line[2:]}
            self._append(line[2:], pos, rows)
        elif kind == "text" and block is not None and block["kind"] == "tool" and block.get("entry") is not None:
            block["entry"]["text"] = (block["entry"]["text"] + "\n" + line)[:4096]  # an output's continuation
            self._append(line, pos, rows)
        elif kind == "blank" and (block is None or block["kind"] != "assistant"):
            rows += self._close()
        else:
            if block is None or block["kind"] != "assistant":
                rows += self._close()
                self._open("assistant", pos)
            self._append(line, pos, rows)
        return rows

    def flush(self) -> Iterable[Row]:
        """The open block (and its open output entry) as read so far, emitted again, complete,
        when it closes; the state is left as it was, so the block goes on in the next pass."""
        if self.block is None:
            return []
        saved = orjson.loads(orjson.dumps(self.state()))
        rows = self._close_entry()
        rows += self._emit(self.block, partial=True)
        self.__init__(self.ctx, saved)
        return rows

    # -- blocks ------------------------------------------------------------------------------
    def _open(self, kind: str, pos: Pos) -> None:
        self.block = {"kind": kind, "offset": pos.byte_offset, "line": pos.line_number, "text": "", "entry": None}

    def _append(self, text: str, pos: Pos, rows: list[Row]) -> None:
        b = self.block
        assert b is not None
        if b["text"] and len(b["text"]) + len(text) > MAX_BLOCK_CHARS:  # emit this part, go on in a new one
            rows += self._emit(b, partial=False, actions=False)
            entry = b.get("entry")
            self.block = b = {
                "kind": b["kind"],
                "offset": pos.byte_offset,
                "line": pos.line_number,
                "text": "",
                "entry": entry,
            }
        b["text"] = f"{b['text']}\n{text}" if b["text"] or b.get("started") else text
        b["started"] = True

    def _close(self) -> list[Row]:
        if self.block is None:
            return []
        rows = self._close_entry()
        rows += self._emit(self.block, partial=False)
        self.block = None
        return rows

    def _close_entry(self) -> list[Row]:
        b = self.block
        if b is None or b["kind"] != "tool" or b.get("entry") is None:
            return []
        entry, b["entry"] = b["entry"], None
        return self._output(entry["text"], Pos(entry["offset"], 0, entry["line"]))

    def _emit(self, b: dict, partial: bool, actions: bool = True) -> list[Row]:
        """The message of block `b` (and, for a closed user block, its turn)."""
        text = b["text"].strip("\n")
        pos = Pos(b["offset"], 0, b["line"])
        rows: list[Row] = [] if partial or not actions else [self._seen(b["kind"])]
        if not text.strip():
            return rows
        sid = self.sid or f"{self.file_key}-0"
        uid = f"{sid}@{b['offset']}"
        if b["kind"] == "user":
            if text.lstrip().startswith("/"):
                rows.append(self._msg(uid, "user", classes.COMMAND_EXPANSION, text, pos))
            else:
                if self.turn != uid:
                    self.turn = uid
                rows.append(TurnRow(AGENT, uid, sid, "", self.model, None, None, pos.byte_offset, pos.line_number))
                rows.append(self._msg(uid, "user", classes.HUMAN_PROMPT, text, pos))
                if not partial:  # keep-first: only the whole prompt
                    rows.append(SessionRow(agent=AGENT, session_uid=sid, agent_id="", first_prompt=text))
        elif b["kind"] == "tool":
            rows.append(self._msg(uid, "system", classes.LOCAL_COMMAND_OUTPUT, text, pos))
        else:
            rows.append(self._msg(uid, "assistant", classes.ASSISTANT_TEXT, text, pos, self.model))
        return rows

    def _msg(self, uid: str, role: str, mclass: str, text: str, pos: Pos, model: str | None = None) -> MessageRow:
        return MessageRow(
            agent=AGENT,
            message_uid=uid,
            session_uid=self.sid or f"{self.file_key}-0",
            agent_id="",
            turn_uid=self.turn,
            role=role,
            message_class=mclass,
            text=text,
            model=model,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
            record_type="aider",
        )

    def _seen(self, kind: str) -> RecordTypeRow:
        return RecordTypeRow(agent=AGENT, record_type=kind, subtype="", key_set="", known=True, count=1)

    # -- sessions and outputs ---------------------------------------------------------------
    def _start_session(self, line: str, pos: Pos) -> list[Row]:
        self.sid = f"{self.file_key}-{pos.byte_offset}"
        self.turn = self.model = self.version = self.creating = self.prev_tool = None
        m = _HEADER.match(line)
        started = None
        if m:
            try:
                started = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").astimezone(UTC)
            except (ValueError, OverflowError, OSError):
                note_refused(m.group(1), "a timestamp")
                started = None
        return [self._session_row(started, pos)]

    def _session_row(self, started: datetime | None, pos: Pos) -> SessionRow:
        return SessionRow(
            agent=AGENT,
            session_uid=self.sid or f"{self.file_key}-0",
            agent_id="",
            is_subagent=False,
            cwd=self.cwd,
            started_at=started,
            byte_offset=pos.byte_offset,
            line_number=pos.line_number,
        )

    def _output(self, text: str, pos: Pos) -> list[Row]:
        """Rows of one output entry of Aider's (its first line after ``> ``, continuations after)."""
        first = text.split("\n", 1)[0].strip()
        sid = self.sid or f"{self.file_key}-0"
        prev, self.prev_tool = self.prev_tool, first[:1000]
        rows: list[Row] = []
        if m := _VERSION.match(first):
            self.version = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
            return [SessionRow(agent=AGENT, session_uid=sid, agent_id="", cli_version=first[len("Aider v") :])]
        if m := _MODEL.match(first):
            self.model = m.group(1)
            return [SessionRow(agent=AGENT, session_uid=sid, agent_id="", model=self.model)]
        if _CREATE.match(first) and prev:
            self.creating = prev
            return []
        tokens = _tokens(" ".join(text.split("\n")), self.model, self.version)
        if tokens is not None:
            rows.append(
                ModelCallRow(
                    agent=AGENT,
                    call_uid=f"{sid}@{pos.byte_offset}",
                    session_uid=sid,
                    agent_id="",
                    turn_uid=self.turn,
                    model=self.model,
                    is_complete=True,
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                    **tokens,
                )
            )
        elif m := _APPLIED.match(first):
            path = m.group(1).strip()
            op = "create" if self.creating == path else "edit"
            self.creating = None
            rows += self._action("apply_edit", path, pos)
            rows += file_touch_rows(
                [(op, path)],
                agent=AGENT,
                tool_call_uid=f"{sid}@{pos.byte_offset}",
                session_uid=sid,
                agent_id="",
                ts=None,
                pos=pos,
                cwd=self.cwd,
            )
        elif m := _RUNNING.match(first):
            command = m.group(1).strip()
            rows += self._action("run", command, pos, ok=None)
            rows += file_touch_rows(
                touches_from_shell(command),
                agent=AGENT,
                tool_call_uid=f"{sid}@{pos.byte_offset}",
                session_uid=sid,
                agent_id="",
                ts=None,
                pos=pos,
                cwd=self.cwd,
            )
        elif m := _COMMIT.match(first):
            tid = f"{sid}@{pos.byte_offset}"
            rows += self._action("commit", m.group(2), pos, output=first)
            rows.append(
                GitEventRow(
                    agent=AGENT,
                    git_event_uid=f"{tid}:commit:{m.group(1)}",
                    session_uid=sid,
                    agent_id="",
                    tool_call_uid=tid,
                    op="commit",
                    sha=m.group(1),
                    subject=m.group(2),
                    byte_offset=pos.byte_offset,
                    line_number=pos.line_number,
                )
            )
        return rows

    def _action(self, name: str, what: str, pos: Pos, ok: bool | None = True, output: str | None = None) -> list[Row]:
        """An action Aider reports as done (an edit applied, a commit) or starts (a command run)."""
        sid = self.sid or f"{self.file_key}-0"
        return [
            ToolCallRow(
                agent=AGENT,
                tool_call_uid=f"{sid}@{pos.byte_offset}",
                session_uid=sid,
                agent_id="",
                turn_uid=self.turn,
                name=name,
                input=what,
                output=output if output is not None else (what if ok else None),
                outcome="ok" if ok else None,
                byte_offset=pos.byte_offset,
                line_number=pos.line_number,
                output_byte_offset=pos.byte_offset if ok else None,
                output_line=pos.line_number if ok else None,
            )
        ]


PARSER = AiderParser
