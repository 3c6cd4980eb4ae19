"""Cline-family task folders → rows: Cline (this harness), and through subclasses Roo Code
(`parsers.roo_code`) and Kilo Code's legacy extension (`parsers.kilo_code`).

Format (FORMATS-NEW.md §1–§3; real Cline 3.51.0 task folders in fixtures/samples/cline): each
task is a folder ``tasks/<task id>/`` under the extension's VS Code global storage, holding whole
JSON documents the extension rewrites on every change — ``api_conversation_history.json`` (the
conversation as sent to the model: `api`), ``ui_messages.json`` (what the panel showed, with
epoch-ms times, per-request usage and errors: `ui`), ``task_metadata.json`` (model and harness
version: `meta`) and, in Roo Code, ``history_item.json`` (working directory, parent task:
`meta`). Each is a source of its own read by content hash; all four key their rows by the task
id (the folder name = the session uid), so they merge into one session:

- messages, turns, tool calls, file touches, git events and sub-agent spawns come only from the
  API history; model calls (tokens, cost), compactions and error notices only from the UI
  messages — no row key is written by two files, so a file re-read alone can never purge
  another's rows, and nothing is counted twice (the API history's ``metrics.tokens`` and Roo's
  ``history_item`` totals repeat the UI's counts; the UI's ``say: text`` / ``api_req_started.
  request`` repeat the conversation);
- the token rule (what ``tokensIn`` holds per provider) is `ui`'s module docstring;
- the API history records no times in Cline (Roo writes ``ts``): a Cline message's time is
  unknown (NULL); the session's start and end come from the UI messages and the metadata.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath

from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers.base import DocumentParser
from agent_history.parsers.cline.api import api_rows
from agent_history.parsers.cline.family import Task
from agent_history.parsers.cline.meta import history_item_rows, metadata_rows
from agent_history.parsers.cline.ui import ui_rows
from agent_history.parsers.common.document import load_document

READERS = {
    "api_conversation_history.json": api_rows,
    "ui_messages.json": ui_rows,
    "task_metadata.json": metadata_rows,
    "history_item.json": history_item_rows,
}
"""File name in a task folder → its reader."""


class TaskFolderParser(DocumentParser):
    """One document of a Cline-family task folder (DocumentParser contract), chosen by its file
    name; the task id is the folder's name. Subclasses set ``AGENT`` and ``SUBTASKS``."""

    AGENT = "cline"
    VERSION = 1
    SUBTASKS = False
    """True when ``new_task`` starts a child task (Roo Code, Kilo Code)."""

    def parse(self, data: bytes) -> Iterable[Row]:
        """Rows of the document; undecodable input, a shape the file name does not fit or an
        unknown file name → parse issues."""
        path = PurePath(self.ctx.path.replace("\\", "/"))
        reader = READERS.get(path.name)
        if reader is None:
            return [ParseIssueRow("unknown_record_type", 0, 1, f"not a task-folder file: {path.name}")]
        doc, issues = load_document(data)
        if doc is None:
            return issues
        task = Task(self.AGENT, path.parent.name or path.stem, self.SUBTASKS)
        return [*issues, *reader(doc, task)]


class ClineParser(TaskFolderParser):
    """Cline (``saoudrizwan.claude-dev``)."""


PARSER = ClineParser
DOCUMENT_PARSER = ClineParser
