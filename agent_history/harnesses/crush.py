"""Crush (charmbracelet/crush): one SQLite database per project, ``<project>/.crush/crush.db``
(WAL mode), read read-only by a saved cursor — no home of its own: found in the projects the
catalogue knows and below configured roots (``[crush] roots``) (`parsers.crush`).

Sources: FORMATS-NEW.md §10 — charmbracelet/crush ``internal/config/load.go`` (the data
directory is ``.crush`` at the project root; option ``data_directory``),
``internal/db/migrations/`` (schema), ``internal/message/content.go`` (parts); two real databases
(listed in fixtures/samples/crush/PROVENANCE.md, not committed: binary, fetched). The test
database is built from that schema. Crush's hooks are ``PreToolUse`` only (no per-turn hook),
and its configuration is moving from ``crush.json`` to a Bash ``crushrc``
(``docs/config/README.md``), so ``connect`` writes nothing there.
"""

from __future__ import annotations

from agent_history.harnesses.spec import Capabilities, Harness, Layout, ProjectFile, Signature

HARNESS = Harness(
    name="crush",
    product="Crush",
    aliases=("charm-crush",),
    parser="crush.parser",
    source_kinds=("database",),
    layout=Layout(projects=(ProjectFile(".crush/crush.db", "database"),)),
    signatures=(Signature(32, head=(r"^SQLite format 3\x00",), path=".crush/crush.db"),),
    path_hint=r"(^|/)\.crush/crush\.db$",
    capabilities=Capabilities(
        frozenset({"cost", "model", "timestamps", "subagents", "compactions", "tool_results", "reasoning", "cwd"})
    ),
    built_from="schema",
    built_from_why="real databases inspected but binary (not committed); tests build one from Crush's migrations",
    explicit="[crush] roots",
)
