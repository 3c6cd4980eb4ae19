"""Capability sync (as agentsview's ``capabilities_sync_test.go``): each harness row's declared
capabilities against what its parser actually emits on the shared corpus home, the samples, the
field cases and this repository's fixture homes. Pure: parsers only, no database.

An emitted capability the row does not declare always fails (the table would call something
unknown that the catalogue has). A declared capability no input shows fails unless the row
names it unsampled, with the reason; an unsampled one that some input does show fails too, so
the list shrinks as samples arrive.
"""

from __future__ import annotations

import collections
from pathlib import Path

import orjson
import pytest

from agent_history.config import Settings
from agent_history.harnesses import HARNESSES, NAMES
from agent_history.harnesses.capabilities import CAPABILITIES, observed
from agent_history.ingest.databases import read_all
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout, iter_files
from agent_history.ingest.sidecar import read_sidecar
from agent_history.ingest.sources import resolve_sources
from agent_history.parsers import detect_agent, parser_class, source_parser
from agent_history.parsers.base import DocumentParser, ParseContext
from agent_history.parsers.driver import parse_bytes
from tests.conftest import REPO, SHARED
from tests.new_formats_home import OPENCODE_EXPORT, export_to_sqlite
from tests.repo_sample_homes import sample_documents
from tests.repo_sample_homes_b import HARNESSES_B, LOOSE_SAMPLES, build_sample_home_b

SAMPLE_DIRS: dict[str, str] = {
    "claude-code": "claude",
    "codex": "codex",
    "pi": "pi",
    "gemini": "gemini",
    "opencode": "opencode",
    "cursor": "cursor",
    "copilot-cli": "copilot",
    "vscode-copilot": "copilot-vscode",
    "claude-ai-export": "claude-ai",
}
"""``corpus/samples/<dir>`` → the harness whose format it holds. Not here: ``claude-code-web``
(an API export, not a file agent-history reads) and ``visualstudio-copilot-otel`` (Visual
Studio traces, no parser)."""

FIXTURE_HOMES = (REPO / "fixtures" / "efficiency" / "home", REPO / "fixtures" / "loops" / "home")


def _rows(agent: str, kind: str, doc_kind: str | None, path: Path, sidecar: dict | None = None) -> list:
    """Every row `agent`'s parser emits for the file (a JSONL harness whose parser reads whole
    documents — an OpenCode export named ``*.jsonl`` — reads it as a document)."""
    ctx = ParseContext(path=str(path), sidecar=sidecar)
    if kind == "jsonl" and issubclass(parser_class(agent), DocumentParser):
        kind = "document"
    if kind == "jsonl":
        return parse_bytes(parser_class(agent), ctx, path.read_bytes())
    cls = source_parser(agent, kind, doc_kind)
    if kind == "document":
        return list(cls(ctx).parse(path.read_bytes()))
    return read_all(str(path), cls(ctx))


def _document_kind(agent: str) -> str | None:
    """The doc kind of a harness's own (non-memory) document rule, if it has one."""
    row = next(h for h in HARNESSES if h.name == agent)
    return next((r.doc_kind for r in row.layout.documents if r.doc_kind != "memory"), None)


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> dict[str, collections.Counter]:
    """Harness → capability → number of inputs showing it (``"inputs"``: inputs parsed)."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: these tests need ../shared beside the repository")
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def add(agent: str, rows: list) -> None:
        out[agent]["inputs"] += 1
        out[agent].update(observed(rows))

    for home in (SHARED / "corpus" / "home", *FIXTURE_HOMES):
        for namespace, path in home_layout(home).items():
            source = Source(namespace, agent_of_namespace(namespace), path)
            for ref in iter_files(source):
                sidecar = read_sidecar(Path(ref.path)) if ref.kind == "jsonl" else None
                add(source.agent, _rows(source.agent, ref.kind, ref.doc_kind, Path(ref.path), sidecar))
    for field_case in sorted((SHARED / "field").glob("*.jsonl")):
        agent = detect_agent(str(field_case), field_case.read_bytes()[:65536])
        assert agent is not None, f"{field_case.name}: no harness recognises it"
        add(agent, _rows(agent, "jsonl", None, field_case))
    for name, agent in SAMPLE_DIRS.items():
        for sample in sorted((SHARED / "corpus" / "samples" / name).iterdir()):
            if sample.suffix not in (".jsonl", ".json") or sample.name.endswith(".meta.json"):
                continue  # sidecars and companion files are read with their transcript
            kind = "jsonl" if sample.suffix == ".jsonl" else "document"
            doc_kind = _document_kind(agent) if kind == "document" else None
            if kind == "document" and "document" not in next(h for h in HARNESSES if h.name == agent).source_kinds:
                continue  # a JSON file of a JSONL-only harness: another tool's export of it
            try:
                source_parser(agent, kind, doc_kind)
            except KeyError:
                continue  # e.g. a Claude Code workflow's JSON: no document parser of its own
            add(agent, _rows(agent, kind, doc_kind, sample))
    for agent, sample in sample_documents():  # fixtures/samples/<harness>/ (real excerpts, hand-written)
        add(agent, _rows(agent, "document", None, sample))
    home_b = build_sample_home_b(tmp_path_factory.mktemp("home-b"))  # Aider … Crush, laid out as written
    for source in resolve_sources(Settings(), home=home_b):
        if source.agent in HARNESSES_B:
            for ref in iter_files(source):
                kind = "jsonl" if ref.kind == "markdown" else ref.kind  # Markdown: fed line by line
                add(source.agent, _rows(source.agent, kind, None, Path(ref.path)))
    for agent, sample in LOOSE_SAMPLES:
        add(agent, _rows(agent, "jsonl", None, sample))
    db = tmp_path_factory.mktemp("opencode") / "opencode.db"
    export_to_sqlite(orjson.loads(OPENCODE_EXPORT.read_bytes()), db).close()
    add("opencode", _rows("opencode", "database", None, db))
    return out


def test_every_declared_capability_is_in_the_vocabulary():
    for h in HARNESSES:
        assert h.capabilities.records <= set(CAPABILITIES), h.name
        unsampled = [name for name, _ in h.capabilities.unsampled]
        assert set(unsampled) <= h.capabilities.records, h.name
        assert len(unsampled) == len(set(unsampled)), h.name


@pytest.mark.parametrize("agent", NAMES)
def test_every_harness_has_inputs_in_the_corpus(emitted, agent):
    assert emitted[agent]["inputs"] > 0


@pytest.mark.parametrize("agent", NAMES)
def test_emitted_capabilities_are_declared(emitted, agent):
    row = next(h for h in HARNESSES if h.name == agent)
    shown = {name for name in emitted[agent] if name != "inputs"}
    assert sorted(shown - row.capabilities.records) == [], f"{agent} emits capabilities its row does not declare"


@pytest.mark.parametrize("agent", NAMES)
def test_declared_capabilities_are_emitted_unless_named_unsampled(emitted, agent):
    row = next(h for h in HARNESSES if h.name == agent)
    shown = {name for name in emitted[agent] if name != "inputs"}
    unsampled = {name for name, _ in row.capabilities.unsampled}
    assert sorted(row.capabilities.records - shown) == sorted(unsampled), (
        f"{agent}: declared capabilities no input shows must be exactly those named unsampled"
    )
