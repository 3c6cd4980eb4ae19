"""Parse files without a database (`agent-history parse`): read, detect the harness, summarise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_history.ingest.sidecar import read_sidecar
from agent_history.model.merge import fold
from agent_history.parsers import AGENTS, detect_agent, parser_class
from agent_history.parsers.base import DocumentParser, ParseContext
from agent_history.parsers.driver import document_rows, parse_bytes
from agent_history.parsers.report import add_summaries, summarize


@dataclass
class FileReport:
    """One file's result: harness, summary (see `parsers.report.summarize`) or an error line."""

    path: str
    agent: str | None
    summary: dict[str, Any] | None
    error: str | None = None


def expand(paths: list[Path]) -> list[Path]:
    """Files named, plus every ``*.jsonl`` under directories named (sorted, no symlinks)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.jsonl") if f.is_file() and not f.is_symlink()))
        else:
            out.append(p)  # a named file is read even if it is a symlink; non-files fail in parse_file
    return out


def parse_file(path: Path, agent: str | None = None) -> FileReport:
    """Parse one file completely (torn last line left out, as the loader would).

    A harness whose only parser reads whole documents (OpenCode: an ``opencode export`` object
    saved as ``.jsonl``, field cases E34/E35) has the file read as one document. Bad records are
    parse issues in the summary; a parser that fails on the file as a whole gives `error`.
    """
    if path.exists() and not path.is_file():
        return FileReport(str(path), agent, None, "not a regular file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileReport(str(path), agent, None, f"cannot read: {exc.strerror}")
    agent = agent or detect_agent(str(path), data[:65536])
    if agent is None:
        return FileReport(str(path), None, None, "cannot tell the harness; pass --agent " + "|".join(AGENTS))
    ctx = ParseContext(path=str(path.resolve()), sidecar=read_sidecar(path))
    try:
        rows = _other_kind_rows(path, agent, ctx, data)
        if rows is None:
            cls = parser_class(agent)
            rows = document_rows(cls(ctx), data) if issubclass(cls, DocumentParser) else parse_bytes(cls, ctx, data)
    except Exception as exc:  # noqa: BLE001 - one line for this file; the others are still parsed
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        return FileReport(str(path), agent, None, f"{agent} parser failed: {type(exc).__name__}: {first}")
    return FileReport(str(path), agent, summarize(fold(rows)))


def _other_kind_rows(path: Path, agent: str, ctx: ParseContext, data: bytes) -> list | None:
    """Rows of a whole-document (``.json``) or SQLite (``.db``) source of `agent` (issue 16), or
    None when the file is read as JSONL."""
    from agent_history.parsers import source_parser

    kind = {".json": "document", ".db": "database"}.get(path.suffix)
    if kind is None and data[:16] == b"SQLite format 3\x00":
        kind = "database"
    try:
        cls = source_parser(agent, kind) if kind else None
    except KeyError:
        cls = None
    if cls is None:
        return None
    if kind == "document":
        return document_rows(cls(ctx), data)
    from agent_history.ingest.databases import read_all

    return read_all(str(path), cls(ctx))


def parse_paths(
    paths: list[Path], agent: str | None = None, progress: Callable[[int, int], None] | None = None
) -> tuple[list[FileReport], dict[str, dict[str, Any]]]:
    """Parse every file; returns the per-file reports and totals per harness (plus ``all``).
    `progress(done, total)` (files) is called once before the first file and after each one."""
    files = expand(paths)
    reports = []
    if progress:
        progress(0, len(files))
    for n, p in enumerate(files, 1):
        reports.append(parse_file(p, agent))
        if progress:
            progress(n, len(files))
    totals: dict[str, dict[str, Any]] = {}
    for r in reports:
        if r.summary is None:
            continue
        per = totals.setdefault(r.agent or "?", {"files": 0})
        per["files"] += 1
        add_summaries(per, r.summary)
        allt = totals.setdefault("all", {"files": 0})
        allt["files"] += 1
        add_summaries(allt, r.summary)
    return reports, totals
