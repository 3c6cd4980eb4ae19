"""VS Code Copilot Chat: the "copilot-agent" event log (Copilot CLI vocabulary, with
``vscodeVersion``) and ``chatSessions/<id>.json`` documents in VS Code's user directory.

Sources: FORMATS.md §7; code.visualstudio.com/docs/copilot ("customization/mcp-servers": the
profile's ``mcp.json``, key ``servers``; "customization/hooks": every ``*.json`` in
``~/.copilot/hooks/`` is read, so ours is a file of its own; "agent-skills"). The hook payload's
``transcript_path`` names ``workspaceStorage/<hash>/GitHub.copilot-chat/transcripts/<id>.jsonl``
(microsoft/vscode-copilot-chat#3545); older builds send only the session id. The event log's
location is unconfirmed: its only sample is hand-written.
"""

from __future__ import annotations

from agent_history.harnesses.copilot import COPILOT_EVENT
from agent_history.harnesses.spec import (
    Capabilities,
    DocumentRule,
    Harness,
    HookSpec,
    Layout,
    McpSpec,
    Place,
    Signature,
    TranscriptLookup,
    vscode_family,
)

USER_DIR = vscode_family("Code")

HARNESS = Harness(
    name="copilot-vscode",
    product="VS Code Copilot Chat",
    aliases=("vscode",),
    parser="copilot_vscode.agent_log",
    source_kinds=("jsonl", "document"),
    home=USER_DIR,
    layout=Layout(
        roots=("workspaceStorage", "globalStorage"),
        transcript=(
            r"^(workspaceStorage/[^/]+/GitHub\.copilot-chat|globalStorage/github\.copilot-chat)/(.+/)?events\.jsonl$"
            # the extension's own transcript, the file the hook payload names as transcript_path
            r"|^workspaceStorage/[^/]+/GitHub\.copilot-chat/transcripts/[^/]+\.jsonl$"
        ),
        documents=(
            DocumentRule(
                "copilot-vscode-chat",
                r"^(workspaceStorage/[^/]+/chatSessions|globalStorage/emptyWindowChatSessions)/[^/]+\.json$",
                ("workspaceStorage/*/chatSessions", "globalStorage/emptyWindowChatSessions"),
                parser="copilot_vscode.chat_sessions",
            ),
        ),
        globs=(
            "workspaceStorage/*/GitHub.copilot-chat/**/events.jsonl",
            "workspaceStorage/*/GitHub.copilot-chat/transcripts/*.jsonl",
            "globalStorage/github.copilot-chat/**/events.jsonl",
            "workspaceStorage/*/chatSessions/*.json",
            "globalStorage/emptyWindowChatSessions/*.json",
        ),
    ),
    signatures=(Signature(40, first=(COPILOT_EVENT, r'"vscodeVersion"')),),
    hook=HookSpec(
        "vscode",
        Place(("~/.copilot/hooks/agent-history.json",)),
        "flat",
        "Stop",
        entry=(("type", "command"),),
        own_file=True,
        lookup=TranscriptLookup(
            ("sessionId", "session_id"),
            USER_DIR.joined("workspaceStorage"),
            ("*/GitHub.copilot-chat/transcripts/{id}.jsonl",),
            "Stop payload has neither transcript_path nor sessionId",
            "transcript for session",
        ),
    ),
    mcp=McpSpec(
        "vscode",
        USER_DIR.joined("mcp.json"),
        "json",
        "stdio-typed",
        ("servers",),
        Place(("~/.copilot/skills/agent-history/SKILL.md",)),
        "skill",
    ),
    capabilities=Capabilities(
        frozenset({"tokens.input_uncached", "tokens.output", "model", "timestamps", "tool_results"})
    ),
)
