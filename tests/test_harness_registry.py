"""The harness registry (`agent_history.harnesses`): rows are well formed, everything that lists
agents reads them, and the README's agent tables are generated from them. Pure."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from agent_history import harnesses
from agent_history.classify.rules import TOOL_RULES
from agent_history.config import default_sources
from agent_history.connect.hook import HOOKS, transcript_of
from agent_history.connect.targets import AGENTS as CONNECT_TARGETS
from agent_history.harnesses import ACCEPTED_NAMES, ALIASES, HARNESSES, NAMES, readme, resolve_name
from agent_history.harnesses.places import resolve
from agent_history.harnesses.spec import HOOK_STYLES, MCP_ENTRIES, SOURCE_KINDS, Place
from agent_history.ingest.discovery import home_layout
from agent_history.loops import rules as loop_rules
from agent_history.parsers import detect_agent
from agent_history.parsers.base import DatabaseParser, DocumentParser, Parser
from tests.conftest import REPO, SHARED

PACKAGE = REPO / "agent_history"


def _places(h) -> list[Place]:
    out = [p for p in (h.home, h.app_state) if p is not None]
    if h.hook:
        out.append(h.hook.config)
        if h.hook.lookup:
            out.append(h.hook.lookup.root)
    if h.mcp:
        out += [h.mcp.config, h.mcp.note]
    return out


def test_names_and_aliases_are_unique_lowercase_and_never_collide():
    names = [h.name for h in HARNESSES]
    aliases = [a for h in HARNESSES for a in h.aliases]
    assert len(set(names)) == len(names) and len(set(aliases)) == len(aliases)
    assert not set(names) & set(aliases)
    assert all(re.fullmatch(r"[a-z][a-z0-9_-]*", n) for n in (*names, *aliases))
    assert ACCEPTED_NAMES == (*NAMES, *ALIASES)


def test_resolve_name_takes_names_and_aliases_in_any_case():
    assert resolve_name(" Claude-Code ") == "claude" and resolve_name("vscode") == "copilot-vscode"
    with pytest.raises(ValueError, match=r"^unknown agent 'vim' \(accepted: claude, codex, pi, gemini, opencode"):
        resolve_name("vim")


def test_every_place_resolves_without_any_variable_on_every_os():
    for h in HARNESSES:
        for place in _places(h):
            for platform in ("linux", "darwin", "win32"):
                path = resolve(place, home=Path("/h"), env={}, platform=platform)
                assert path.is_relative_to("/h"), (h.name, place, platform, path)


def test_an_environment_override_wins_over_the_default_home():
    claude = harnesses.harness("claude").home
    assert resolve(claude, home=Path("/h"), env={"CLAUDE_CONFIG_DIR": "/c"}, platform="linux") == Path("/c")
    assert resolve(claude, home=Path("/h"), env={"CLAUDE_CONFIG_DIR": ""}, platform="linux") == Path("/h/.claude")
    vscode = harnesses.harness("copilot-vscode").home
    assert resolve(vscode, home=Path("/h"), env={"XDG_CONFIG_HOME": "/x"}, platform="linux") == Path("/x/Code/User")
    assert resolve(vscode, home=Path("/h"), env={"XDG_CONFIG_HOME": "/x"}, platform="darwin") == Path(
        "/h/Library/Application Support/Code/User"
    )


def test_default_sources_and_home_layout_are_the_rows_with_a_home_in_registry_order(monkeypatch, tmp_path):
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    expected = [f"{h.name}-local" for h in HARNESSES if h.home is not None]
    assert list(default_sources()) == expected == list(home_layout(tmp_path))
    assert default_sources() == home_layout(tmp_path)
    assert "claude-ai-local" not in expected  # exports are configured explicitly


def test_every_row_names_a_parser_for_each_of_its_source_kinds():
    for h in HARNESSES:
        assert h.source_kinds and set(h.source_kinds) <= set(SOURCE_KINDS), h.name
        module = importlib.import_module(f"agent_history.parsers.{h.parser}")
        if "jsonl" in h.source_kinds:
            assert issubclass(module.PARSER, Parser), h.name
        if "database" in h.source_kinds:
            assert issubclass(module.DATABASE_PARSER, DatabaseParser), h.name
        if "document" in h.source_kinds:
            own = getattr(module, "DOCUMENT_PARSER", None)
            assert own is not None or h.layout.documents, h.name
        for rule in h.layout.documents:
            if rule.parser is not None:
                doc = importlib.import_module(f"agent_history.parsers.{rule.parser}")
                assert issubclass(doc.PARSER, DocumentParser), (h.name, rule.doc_kind)
        if "markdown" in h.source_kinds:  # append-only text, fed line by line
            assert issubclass(module.PARSER, Parser) and module.PARSER.RAW_LINES, h.name
        kinds = {r.kind for r in h.layout.kinds} | ({"jsonl"} if h.layout.roots else set())
        kinds |= {"document"} if h.layout.documents else set()
        kinds |= {p.kind for p in h.layout.projects}
        assert kinds == set(h.source_kinds), h.name


def test_hook_and_mcp_specs_use_known_shapes_and_names():
    for h in HARNESSES:
        if h.hook:
            assert h.hook.style in HOOK_STYLES
            assert h.hook.transcript_key or h.hook.lookup, h.name
            assert resolve_name(h.hook.name) == h.name  # `connect NAME --hook` finds the row again
        if h.mcp:
            assert (
                h.mcp.entry in MCP_ENTRIES and h.mcp.fmt in ("json", "toml") and h.mcp.note_kind in ("skill", "section")
            )
            assert resolve_name(h.mcp.name) == h.name
    assert list(HOOKS) == [h.hook.name for h in HARNESSES if h.hook]
    assert list(CONNECT_TARGETS) == [h.mcp.name for h in HARNESSES if h.mcp]


def test_a_hook_payload_names_its_transcript_by_the_row(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    rollout = tmp_path / ".codex" / "sessions" / "2026" / "05" / "02" / "rollout-2026-05-02T12-00-00-t1.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text("{}\n")
    assert transcript_of("codex", {"thread-id": "t1"}) == rollout
    assert transcript_of("claude-code", {"transcript_path": "~/x.jsonl"}) == tmp_path / "x.jsonl"
    with pytest.raises(ValueError, match=r"^AfterAgent payload has no transcript_path$"):
        transcript_of("gemini", {})
    with pytest.raises(ValueError, match=r"^no rollout file for thread t2 under "):
        transcript_of("codex", {"thread-id": "t2"})


def test_signature_ranks_are_unique():
    ranks = [s.rank for h in HARNESSES for s in h.signatures]
    assert len(ranks) == len(set(ranks))


@pytest.mark.parametrize(
    ("sample_dir", "agent"),
    [
        ("claude-code", "claude"),
        ("codex", "codex"),
        ("pi", "pi"),
        ("gemini", "gemini"),
        ("opencode", "opencode"),
        ("copilot-cli", "copilot"),
        ("claude-ai-export", "claude-ai"),
    ],  # fmt: skip
)
def test_most_samples_of_a_format_are_detected_as_its_harness(sample_dir, agent):
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    files = [
        p for p in sorted((SHARED / "corpus" / "samples" / sample_dir).iterdir()) if p.suffix in (".json", ".jsonl")
    ]
    found = [detect_agent(str(p), p.read_bytes()[:65536]) for p in files if not p.name.endswith(".meta.json")]
    assert found.count(agent) >= 0.75 * len(found), found
    assert set(found) <= {agent, None, "claude"}  # never another harness (drifted fixtures may read as Claude)


def test_per_harness_rule_tables_are_keyed_by_registry_names():
    tables = {
        "classify.rules.TOOL_RULES": TOOL_RULES,
        **{
            f"loops.rules.{n}": getattr(loop_rules, n)
            for n in dir(loop_rules)
            if isinstance(getattr(loop_rules, n), dict)
        },
    }
    keyed = {name: set(t) for name, t in tables.items() if set(t) & set(NAMES)}  # tables keyed by harness
    assert "classify.rules.TOOL_RULES" in keyed and len(keyed) >= 4
    for name, keys in keyed.items():
        assert keys <= set(NAMES), (name, keys - set(NAMES))


# -- nothing else lists agents ----------------------------------------------------------------------

KNOWN_PER_HARNESS_RULES: dict[tuple[str, str], str] = {
    ("classify/rules.py", "dict"): "the efficiency classifier's tool rules per harness, twin of sql/35_efficiency.sql",
    ("classify/results.py", "compare"): "pi's wake origin, twin of sql/35_efficiency.sql",
    ("loops/rules.py", "dict"): "the loop evidence rules: each harness's write, edit and shell tool names",
    (
        "ingest/documents.py",
        "compare",
    ): "the loader's OpenCode part sidecar (the loader is restructured by the speed work)",
    ("ingest/chunks.py", "compare"): "the loader's Cursor state sidecar (the loader is restructured by the speed work)",
    ("classify/activity_rules.py", "dict"): "the efficiency families' spawn tools per harness, twin of sql/36",
}
"""Per-harness rules outside the registry, each a rule table or twin the registry cannot hold
(module relative to the package, kind of node) → why. Anything else naming several harnesses in
a literal, or comparing an ``agent`` to a harness name, fails `test_nothing_outside_the_registry_lists_agents`."""

_AGENT_WORDS = {*NAMES, *ALIASES, *HOOKS, *CONNECT_TARGETS}


def _agent_mentions(tree: ast.AST) -> list[tuple[str, int]]:
    """(kind, line) of literals naming two or more harnesses, and of ``<…agent> ==/!=/in "name"``."""
    out = []

    def words(nodes) -> set[str]:
        return {n.value for n in nodes if isinstance(n, ast.Constant) and n.value in _AGENT_WORDS}

    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(words(node.elts)) >= 2:
            out.append(("list", node.lineno))
        elif isinstance(node, ast.Dict) and len(words([k for k in node.keys if k is not None])) >= 2:
            out.append(("dict", node.lineno))
        elif isinstance(node, ast.Compare):
            left = node.left
            name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
            right = [
                c
                for comp in node.comparators
                for c in (comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp])
            ]
            if name.endswith("agent") and words(right):
                out.append(("compare", node.lineno))
    return out


def test_nothing_outside_the_registry_lists_agents():
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("harnesses/", "parsers/")):
            continue  # the registry itself; each parser names its own harness
        for kind, line in _agent_mentions(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault((rel, kind), []).append(line)
    unexpected = {k: v for k, v in found.items() if k not in KNOWN_PER_HARNESS_RULES}
    assert unexpected == {}, "agents listed outside agent_history/harnesses (read the registry instead)"
    assert set(found) == set(KNOWN_PER_HARNESS_RULES), "a known exception is gone: remove it from the list"


# -- the README ------------------------------------------------------------------------------------


def test_readme_agent_tables_are_generated_from_the_registry():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.rewrite(text) == text, "README.md agent tables drifted: run python -m agent_history.harnesses.readme"


def test_readme_says_how_the_project_harnesses_are_found_with_and_without_home():
    row = next(line for line in readme.files_table().splitlines() if line.startswith("| `aider` |"))
    assert row.split(" | ")[2] == (
        "`.aider.chat.history.md` in each project (found from sessions' working directories and below "
        "`[aider] roots`; `index --home DIR`: below DIR instead)"
    )


def test_readme_agent_tables_have_a_row_per_harness():
    files, caps = readme.files_table().splitlines(), readme.capabilities_table().splitlines()
    assert [line.split(" | ")[0] for line in files[2:]] == [f"| `{n}`" for n in NAMES]
    assert [line.split(" | ")[0] for line in caps[2:]] == [f"| `{n}`" for n in NAMES]
    claude = next(line for line in caps if line.startswith("| `claude` |"))
    assert claude.split(" | ")[1] == "in, cache read, cache write 5m, cache write 1h, out"
