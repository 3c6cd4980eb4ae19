"""Helpers for parser tests: whole-file, batched and resumed parses folded for comparison."""

from __future__ import annotations

import json
from pathlib import Path

from agent_history.model.merge import fold
from agent_history.model.rows import Row
from agent_history.parsers.base import ParseContext, Parser
from agent_history.parsers.common.lines import iter_lines
from agent_history.parsers.driver import feed_bytes, parse_bytes


def parse_file(parser_cls: type[Parser], path: Path, ctx_path: str | None = None) -> dict:
    """Parse a whole file in one pass → folded rows ``{RowType: {key: row}}``."""
    ctx = ParseContext(path=ctx_path or str(path), namespace="test")
    return fold(parse_bytes(parser_cls, ctx, path.read_bytes()))


def parse_resumed(parser_cls: type[Parser], data: bytes, cut_lines: list[int], ctx: ParseContext) -> dict:
    """Parse `data` in passes ending after each line count in `cut_lines`, the way the loader
    does: flush at the end of every pass, save ``state()`` (JSON round trip), build a new parser
    from it for the next pass. Returns the folded rows of all passes."""
    lines = list(iter_lines(data))
    bounds = sorted({c for c in cut_lines if 0 < c < len(lines)}) + [len(lines)]
    rows: list[Row] = []
    state = None
    start = 0
    for end in bounds:
        parser = parser_cls(ctx, state)
        if start < len(lines):
            off = lines[start][1].byte_offset
            stop = lines[end - 1][1].byte_offset + lines[end - 1][1].length if end > start else off
            rows.extend(feed_bytes(parser, data[off:stop], off, start + 1))
        rows.extend(parser.flush())
        state = json.loads(json.dumps(parser.state()))
        start = end
    return fold(rows)


def parse_in_batches(parser_cls: type[Parser], data: bytes, batch: int, ctx: ParseContext) -> dict:
    """Parse with a pass boundary every `batch` lines (state saved and restored each time)."""
    n = len(list(iter_lines(data)))
    return parse_resumed(parser_cls, data, list(range(batch, n, batch)), ctx)


def rows_of(folded: dict, row_type: type[Row]) -> list[Row]:
    """The merged rows of one type, in first-seen order."""
    return list(folded.get(row_type, {}).values())
