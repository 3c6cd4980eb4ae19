"""VS Code Copilot Chat's "copilot-agent" event log (JSONL) → rows, agent ``copilot-vscode``.

It is the Copilot CLI event vocabulary (``session.start{producer: "copilot-agent",
copilotVersion, vscodeVersion}``, ``user.message``, ``assistant.turn_start``,
``tool.execution_start/complete`` with a plain-string ``result``, ``assistant.message`` with
``toolRequests[{toolCallId, toolName, arguments}]``), so the Copilot CLI parser reads it; see
`agent_history.parsers.copilot.events` for the contract. Source: FORMATS §7,
``corpus/samples/vscode-copilot/code-session-memory__tests__fixtures__vscode-session.jsonl``.
"""

from __future__ import annotations

from agent_history.parsers.copilot.events import CopilotEventsParser


class VSCodeAgentLogParser(CopilotEventsParser):
    """The Copilot event-log parser under agent ``copilot-vscode``."""

    AGENT = "copilot-vscode"
    VERSION = 1


PARSER = VSCodeAgentLogParser
