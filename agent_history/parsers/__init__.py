"""Pure transcript parsers: one package per harness + shared helpers. No file or database I/O.

Which module parses which harness is the harness registry's (`agent_history.harnesses`: each
row's ``parser`` module and its document rules); this module turns a row into a class.
`parser_class` / `source_parser` give a harness's parser class for each source kind (JSONL,
whole document, database); `detect_agent` guesses the harness of a file from its path and first
bytes (`harnesses.detect`).
"""

from __future__ import annotations

import importlib

from agent_history.harnesses import BY_NAME, HARNESSES, NAMES
from agent_history.harnesses.detect import detect_harness
from agent_history.parsers.base import ParseContext, Parser, Pos

AGENTS: tuple[str, ...] = NAMES
"""Harness names (`agent_history.harnesses.NAMES`)."""

DOCUMENT_MODULES: dict[str, str] = {
    rule.doc_kind: rule.parser for h in HARNESSES for rule in h.layout.documents if rule.parser is not None
}
"""Whole-document parsers by kind (a `spec.DocumentRule.doc_kind` → module whose PARSER is a
`DocumentParser`); memories (kind ``memory``) use `document_parser_class`."""

_KIND_ATTRIBUTE = {"jsonl": "PARSER", "document": "DOCUMENT_PARSER", "database": "DATABASE_PARSER"}


def document_parser_class(kind: str, agent: str) -> type:
    """The `DocumentParser` class for document `kind` (a `DOCUMENT_MODULES` key, or ``memory``
    for a Markdown memory of harness `agent`). Raises KeyError if unknown."""
    if kind == "memory":
        from agent_history.parsers.memory.parser import for_agent

        return for_agent(agent)
    module = importlib.import_module(f"agent_history.parsers.{DOCUMENT_MODULES[kind]}")
    return module.PARSER


def parser_class(agent: str) -> type[Parser]:
    """The JSONL parser class for harness `agent` (an `AGENTS` name). Raises KeyError if unknown."""
    module = importlib.import_module(f"agent_history.parsers.{BY_NAME[agent].parser}")
    return module.PARSER


def source_parser(agent: str, kind: str, doc_kind: str | None = None):
    """The parser class for `agent` reading a source of `kind` (jsonl | document | database):
    the module's PARSER, DOCUMENT_PARSER or DATABASE_PARSER; a document with a `doc_kind` (a
    parser other than the agent's own: Copilot legacy JSON, VS Code chat sessions, memories) gets
    `document_parser_class(doc_kind, agent)`. Raises KeyError if there is none."""
    if kind == "document" and doc_kind:
        return document_parser_class(doc_kind, agent)
    module = importlib.import_module(f"agent_history.parsers.{BY_NAME[agent].parser}")
    name = _KIND_ATTRIBUTE[kind]
    if not hasattr(module, name):
        raise KeyError(f"{agent} has no {kind} parser")
    return getattr(module, name)


def detect_agent(path: str, head: bytes) -> str | None:
    """Guess the harness of a transcript from its path, then from its first lines' shapes
    (`harnesses.detect.detect_harness`: the rows' signatures, then their path hints).

    Returns an `AGENTS` name, or None when nothing matches. Content wins over the path when
    the content is unambiguous (field case E09: Claude files may start with bookkeeping lines).
    """
    return detect_harness(path, head)


__all__ = [
    "AGENTS",
    "DOCUMENT_MODULES",
    "ParseContext",
    "Parser",
    "Pos",
    "detect_agent",
    "document_parser_class",
    "parser_class",
    "source_parser",
]
