"""Kilo Code's legacy VS Code extension (``kilocode.kilo-code``, a Roo Code fork): Cline-family
task folders under the extension's global storage (`parsers.kilo_code`).

Sources: FORMATS-NEW.md §3 (splitrail ``src/analyzers/kilo_code.rs``, agentsview
``internal/parser/types.go``). No real Kilo Code file is public: built from the family's schema
and checked on a hand-written task folder. Since 2026 Kilo Code is rebuilt on OpenCode
(``~/.local/share/kilo/kilo.db``), which this row does not read; the legacy extension's MCP
settings and rules locations are not verified, so ``connect`` does not write them.
"""

from __future__ import annotations

from agent_history.harnesses.cline import API_HEAD, TASK_FILES, UI_HEAD
from agent_history.harnesses.spec import Capabilities, Harness, KindRule, Layout, Signature, vscode_family

HARNESS = Harness(
    name="kilo-code",
    product="Kilo Code (legacy extension)",
    aliases=("kilo", "kilocode"),
    parser="kilo_code.parser",
    source_kinds=("document",),
    home=vscode_family("Code").joined("globalStorage", "kilocode.kilo-code"),
    layout=Layout(kinds=(KindRule("tasks", TASK_FILES, "document"),), globs=("tasks/*/*.json",)),
    signatures=(
        Signature(15, head=(UI_HEAD,), path="kilocode.kilo-code"),
        Signature(16, head=(API_HEAD,), path="kilocode.kilo-code"),
    ),
    path_hint=r"(^|/)kilocode\.kilo-code/tasks/",
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
                "tool_results",
                "reasoning",
                "cwd",
            }
        ),
        unsampled=(("subagents", "new_task sub-tasks (Roo's child task folders): the hand-written task has none"),),
    ),
    built_from="schema",
    built_from_why="no real Kilo Code file is public; the Cline-family schema, a hand-written task folder",
)
