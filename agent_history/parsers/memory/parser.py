"""A Markdown memory file → one session of ``source_type='memory'`` holding one ``memory`` message.

Memories are notes an agent (or its user) keeps for later sessions: Codex
``~/.codex/memories/**.md`` and Claude Code's per-project ``~/.claude/projects/<project>/memory/``
directory (``MEMORY.md`` index + topic files), plus any roots configured under ``[memories]``.
Instruction files (``AGENTS.md``, ``CLAUDE.md``, rules directories) are not memories: the
discovery rules (`agent_history.ingest.documents_rules`) never hand them to this parser, and
`is_instruction_file` says which names those are.

A memory is a whole document (it is edited in place), so this is a `DocumentParser`: each call
gets the file's complete bytes and returns its complete content.

- **Frontmatter.** An optional leading YAML block between ``---`` lines. `KEPT_FIELDS`
  (``title``, ``project_path``, ``session_id``, ``date``, ``tags``, and Claude Code's ``name``,
  ``description``, ``type``) are kept: ``title`` (else ``name``, else the first ``# heading``,
  else the file name) → ``SessionRow.custom_title``; ``project_path`` → ``SessionRow.cwd``;
  ``date`` → ``SessionRow.started_at``/``ended_at`` and the message ``ts``; all kept fields, as
  JSON-safe values, go into the message's ``attachments`` as one ``{"type": "frontmatter", …}``
  object (``session_id`` and ``tags`` live only there). Invalid YAML → a ``bad_record`` issue,
  the whole file is then the body.
- **Keys.** Session uid ``memory:<path relative to the home>`` (the path is the memory's
  identity: editing it re-reads it, the same key keeps its rows); message uid = session uid.
- **Message.** Role ``user`` when unknown who wrote it, class ``memory``, text = the body
  without the frontmatter (stripped). An empty body still yields the session (a title-only
  memory) but no message.
- Invalid UTF-8 is decoded with replacement characters and recorded as ``invalid_utf8``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any, ClassVar

import yaml

from agent_history.model import classes
from agent_history.model.rows import MessageRow, ParseIssueRow, Row, SessionRow
from agent_history.parsers.base import DocumentParser, ParseContext, record_type_row
from agent_history.parsers.common.timeutil import parse_ts

KEPT_FIELDS: tuple[str, ...] = ("title", "project_path", "session_id", "date", "tags", "name", "description", "type")
"""Frontmatter fields kept (issue 16; ``name``/``description``/``type`` are Claude Code's memory
topic-file fields)."""

INSTRUCTION_FILES: frozenset[str] = frozenset(
    {
        # agents' instruction files, not memories (issue 16): Codex/OpenCode AGENTS.md, Claude
        # Code CLAUDE.md / CLAUDE.local.md, Gemini GEMINI.md, Copilot copilot-instructions.md
        "agents.md",
        "agents.override.md",
        "claude.md",
        "claude.local.md",
        "gemini.md",
        "copilot-instructions.md",
    }
)
INSTRUCTION_DIRS: frozenset[str] = frozenset(
    {"rules", "instructions", ".cursor", "prompts", "commands", "skills", "agents"}
)
"""Directories whose Markdown files are instructions (rules, prompt templates, skills)."""

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


def is_instruction_file(rel_path: str) -> bool:
    """True when `rel_path` names an instruction file (by name or by a directory on its path)."""
    parts = PurePosixPath(rel_path.replace("\\", "/")).parts
    return parts[-1].lower() in INSTRUCTION_FILES or any(p.lower() in INSTRUCTION_DIRS for p in parts[:-1])


def _json_safe(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def split_frontmatter(text: str) -> tuple[dict | None, str, str | None]:
    """``(fields, body, error)`` of a Markdown text: the YAML frontmatter mapping (None when
    there is none or it is invalid), the rest, and a one-line YAML error when invalid."""
    m = _FRONTMATTER.match(text)
    if not m:
        return None, text, None
    try:
        fields = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        return None, text, " ".join(str(exc).split())[:200]
    if not isinstance(fields, dict):
        return None, text, None if fields is None else "frontmatter is not a mapping"
    return fields, text[m.end() :], None


def _date(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    return parse_ts(value) if isinstance(value, (str, int, float)) else None


class MemoryParser(DocumentParser):
    """A memory file → rows; subclasses fix the agent (`for_agent`)."""

    AGENT: ClassVar[str] = "memory"
    VERSION = 1

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__(ctx)

    def _rel(self) -> str:
        path = self.ctx.path
        if self.ctx.home:
            try:
                return os.path.relpath(path, self.ctx.home).replace(os.sep, "/")
            except ValueError:
                pass
        return path.replace(os.sep, "/")

    def parse(self, data: bytes) -> Iterable[Row]:
        """The memory's session row, its message (if the body has text) and its record type."""
        rows: list[Row] = []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", "replace")
            rows.append(ParseIssueRow("invalid_utf8", exc.start, None, "memory file is not valid UTF-8"))
        text = text.removeprefix("\ufeff")
        fields, body, error = split_frontmatter(text)
        if error:
            rows.append(ParseIssueRow("bad_record", 0, 1, f"frontmatter: {error}"))
        kept = {k: _json_safe(fields[k]) for k in KEPT_FIELDS if fields and k in fields}
        rows.append(record_type_row(self.AGENT, kept, "memory", "frontmatter" if fields else "", True))
        body = body.strip()
        uid = f"memory:{self._rel()}"
        heading = _HEADING.search(body)
        title = next(
            (
                str(kept[k])
                for k in ("title", "name")
                if isinstance(kept.get(k), (str, int, float)) and str(kept[k]).strip()
            ),
            heading.group(1) if heading else PurePosixPath(self._rel()).stem,
        )
        when = _date(fields.get("date")) if fields else None
        project = kept.get("project_path")
        rows.append(
            SessionRow(
                agent=self.AGENT,
                session_uid=uid,
                agent_id="",
                is_subagent=False,
                cwd=project if isinstance(project, str) and project else None,
                custom_title=title,
                started_at=when,
                ended_at=when,
                byte_offset=0,
                line_number=1,
                source_type="memory",
            )
        )
        if body:
            rows.append(
                MessageRow(
                    agent=self.AGENT,
                    message_uid=uid,
                    session_uid=uid,
                    agent_id="",
                    role="user",
                    message_class=classes.MEMORY,
                    text=body,
                    ts=when,
                    attachments=[{"type": "frontmatter", **kept}] if kept else None,
                    byte_offset=0,
                    line_number=1,
                    record_type="memory",
                )
            )
        return rows


_BY_AGENT: dict[str, type[MemoryParser]] = {}


def for_agent(agent: str) -> type[MemoryParser]:
    """The memory parser class whose rows carry `agent` (e.g. ``codex``, ``claude``)."""
    cls = _BY_AGENT.get(agent)
    if cls is None:
        cls = _BY_AGENT[agent] = type(f"MemoryParser_{agent.replace('-', '_')}", (MemoryParser,), {"AGENT": agent})
    return cls
