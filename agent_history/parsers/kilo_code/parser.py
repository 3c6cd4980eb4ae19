"""Kilo Code's legacy extension task folders (``kilocode.kilo-code``, a Roo Code fork; before
its rebuild on OpenCode in 2026): the Cline-family reader (`parsers.cline.parser`) with Roo's
differences — ``new_task`` starts a child task, the model is named in
``<environment_details>`` — and Cline's ``task_metadata.json`` (``files_in_context`` only)
(FORMATS-NEW.md §3; splitrail ``src/analyzers/kilo_code.rs``, agentsview
``internal/parser/types.go``). No real Kilo Code task folder is known: this reader is built
from the family's schema. The current Kilo (``~/.local/share/kilo/kilo.db``, OpenCode's store)
is not read yet.
"""

from __future__ import annotations

from agent_history.parsers.cline.parser import TaskFolderParser


class KiloCodeParser(TaskFolderParser):
    """Kilo Code legacy (``kilocode.kilo-code``)."""

    AGENT = "kilo-code"
    SUBTASKS = True


PARSER = KiloCodeParser
DOCUMENT_PARSER = KiloCodeParser
