"""GitHub Copilot CLI: ``events.jsonl`` per session under ``~/.copilot/session-state`` (older
CLIs: ``session-state/<id>.jsonl``; before that, whole ``history-session-state/<id>.json``
documents).

Sources: FORMATS.md §7; docs.github.com, "Copilot CLI configuration directory" (``COPILOT_HOME``).
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, DocumentRule, Harness, Layout, Place, Signature

COPILOT_EVENT = (
    r'"type"\s*:\s*"(session\.start|session\.resume|user\.message|assistant\.message|assistant\.turn_start'
    r'|userpromptsubmitted|assistantresponse)"'
)
"""The first line of a Copilot event log (the CLI's, and VS Code's "copilot-agent" log)."""

HARNESS = Harness(
    name="copilot",
    product="GitHub Copilot CLI",
    aliases=("copilot-cli",),
    parser="copilot.events",
    source_kinds=("jsonl", "document"),
    home=Place(("${COPILOT_HOME}", "~/.copilot")),
    # `copilot --resume <session-id>` (github/copilot-cli issues #4397, #3458); no fork flag
    resume="copilot --resume {uid}",
    layout=Layout(
        roots=("session-state",),
        transcript=r"^session-state/[^/]+(/events)?\.jsonl$",
        documents=(
            DocumentRule(
                "copilot-legacy",
                r"^history-session-state/[^/]+\.json$",
                ("history-session-state",),
                parser="copilot.legacy",
            ),
        ),
        globs=("session-state/*.jsonl", "session-state/*/events.jsonl", "history-session-state/*.json"),
    ),
    signatures=(Signature(41, first=(COPILOT_EVENT,)),),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "interrupts",
                "tool_results",
                "reasoning",
                "cwd",
                "git_branch",
            }
        )
    ),
)
