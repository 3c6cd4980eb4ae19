"""Run a parser over bytes: the pure path shared by the loader, `agent-history parse` and tests."""

from __future__ import annotations

from collections.abc import Iterator

from agent_history.model.rows import Row
from agent_history.parsers.base import ParseContext, Parser
from agent_history.parsers.common.lines import iter_records


def feed_bytes(parser: Parser, buf: bytes, base_offset: int = 0, base_line: int = 1) -> Iterator[Row]:
    """Feed every complete line of `buf` to `parser`; yields line issues and the parser's rows.

    Does not call ``flush()``: the caller does at the end of its pass.
    """
    for pos, objs, issues in iter_records(buf, base_offset, base_line):
        yield from issues
        for obj in objs:
            yield from parser.feed(obj, pos)


def parse_bytes(parser_cls: type[Parser], ctx: ParseContext, data: bytes) -> list[Row]:
    """Parse a whole file's bytes in one pass → all rows (unfolded), including ``flush()``."""
    parser = parser_cls(ctx, None)
    rows = list(feed_bytes(parser, data))
    rows.extend(parser.flush())
    return rows
