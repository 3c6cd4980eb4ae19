"""pi coding agent (badlogic/pi-mono): append-only JSONL under ``~/.pi/agent/sessions``.

Sources: FORMATS.md §3 (a ``session`` header line, then entries with ``id``/``parentId``
forming a tree; legacy v1 files lack ids; the per-message usage includes a cost).
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, InstalledPlaces, Layout, Place, Signature

HARNESS = Harness(
    name="pi",
    product="pi",
    parser="pi.parser",
    source_kinds=("jsonl",),
    home=Place(("~/.pi/agent",)),
    layout=Layout(roots=("sessions",), globs=("sessions/**/*.jsonl",)),  # sessions/<cwd-slug>/*.jsonl
    signatures=(Signature(80, head=(r'"type"\s*:\s*"session"',), absent=(r'"sessionId"\s*:',)),),
    path_hint=r"(^|/)\.pi/|(^|/)agent/sessions/",
    resume="pi --session {path}",
    # skills: ~/.pi/agent/skills and a project's .pi/skills (pi-mono, docs/skills.md)
    installed=InstalledPlaces(user_skills=("skills",), project_skills=(".pi/skills",)),
    capabilities=Capabilities(
        frozenset(
            {
                "tokens.input_uncached",
                "tokens.cache_read",
                "tokens.cache_write_5m",
                "tokens.output",
                "cost",
                "model",
                "timestamps",
                "subagents",
                "compactions",
                "interrupts",
                "tool_results",
                "reasoning",
                "cwd",
            }
        )
    ),
)
