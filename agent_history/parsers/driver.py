"""Run a parser: the pure path shared by the loader, its parse workers, `agent-history parse` and
tests — and the one place rows leave the parse side.

Every row any parser produces — from a JSONL record (`feed_bytes`), at the end of a pass
(`flush_rows`), from a whole document (`document_rows`) or a database row (`database_rows`) —
passes `model.limits.check_rows` here, so nothing outside a column's limits reaches the loader.

A record the parser fails on costs that record: the exception becomes a ``parser_error`` issue
at the record's offset (type and message), and the next record is read. A number the parser's
typed reads refuse (`parsers.common.coerce`: a bool posing as an int, a string, a fraction) is
read as unknown and becomes one ``bad_value`` issue for its record. A whole document whose
parser fails is left to the caller (the loader records a `load_error` for that file and keeps
its previous rows).
"""

from __future__ import annotations

from collections.abc import Iterator

from agent_history.model.limits import check_rows
from agent_history.model.rows import ParseIssueRow, Row
from agent_history.parsers.base import DatabaseParser, DocumentParser, ParseContext, Parser, Pos
from agent_history.parsers.common.coerce import start_noting, stop_noting
from agent_history.parsers.common.lines import iter_lines, iter_records


def _parser_error(exc: BaseException, byte_offset: int, line_number: int | None, what: str) -> ParseIssueRow:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return ParseIssueRow("parser_error", byte_offset, line_number, f"{what}: {type(exc).__name__}: {first}")


def _refused(noted: list[str], byte_offset: int, line_number: int | None) -> ParseIssueRow:
    return ParseIssueRow("bad_value", byte_offset, line_number, "read as unknown (NULL): " + "; ".join(noted))


def feed_bytes(parser: Parser, buf: bytes, base_offset: int = 0, base_line: int = 1) -> Iterator[Row]:
    """Feed every complete line of `buf` to `parser`; yields line issues and the parser's rows,
    checked against the columns' limits.

    A parser with ``RAW_LINES`` (an append-only text format: Aider's Markdown) gets each line's
    bytes instead of decoded JSON.

    Does not call ``flush()``: the caller does at the end of its pass (`flush_rows`).
    """
    if parser.RAW_LINES:
        for raw, pos in iter_lines(buf, base_offset, base_line):
            token, noted = start_noting()
            try:
                rows = list(parser.feed(raw, pos))
            except Exception as exc:  # noqa: BLE001 - a bad line costs that line
                rows = [_parser_error(exc, pos.byte_offset, pos.line_number, "line skipped")]
            finally:
                stop_noting(token)
            if noted:
                rows.append(_refused(noted, pos.byte_offset, pos.line_number))
            yield from check_rows(rows, pos.byte_offset, pos.line_number)
        return
    for pos, objs, issues in iter_records(buf, base_offset, base_line):
        rows: list[Row] = list(issues)
        for obj in objs:
            token, noted = start_noting()
            try:
                rows.extend(parser.feed(obj, pos))
            except Exception as exc:  # noqa: BLE001 - a bad record costs that record
                rows.append(_parser_error(exc, pos.byte_offset, pos.line_number, "record skipped"))
            finally:
                stop_noting(token)
            if noted:
                rows.append(_refused(noted, pos.byte_offset, pos.line_number))
        yield from check_rows(rows, pos.byte_offset, pos.line_number)


def flush_rows(parser: Parser) -> list[Row]:
    """``parser.flush()``, checked; a failing flush becomes a ``parser_error`` issue at offset 0."""
    try:
        rows = list(parser.flush())
    except Exception as exc:  # noqa: BLE001 - the rows held back are lost, nothing else
        return [_parser_error(exc, 0, None, "flush failed")]
    return check_rows(rows)


def document_rows(parser: DocumentParser, data: bytes) -> list[Row]:
    """Every row of the document `data`, checked. The parser's exceptions propagate. Refused
    numbers are one ``bad_value`` issue at offset 0 (a document's rows have no byte offsets)."""
    token, noted = start_noting()
    try:
        rows = list(parser.parse(data))
    finally:
        stop_noting(token)
    if noted:
        rows.append(_refused(noted, 0, None))
    return check_rows(rows)


def database_rows(parser: DatabaseParser, table: str, record: dict, pos: Pos) -> list[Row]:
    """Rows of one database row, checked; a failing row becomes a ``parser_error`` issue."""
    token, noted = start_noting()
    try:
        rows = list(parser.rows(table, record, pos))
    except Exception as exc:  # noqa: BLE001 - a bad row costs that row
        rows = [_parser_error(exc, pos.byte_offset, pos.line_number, f"{table} row skipped")]
    finally:
        stop_noting(token)
    if noted:
        rows.append(_refused(noted, pos.byte_offset, pos.line_number))
    return check_rows(rows, pos.byte_offset, pos.line_number)


def parse_bytes(parser_cls: type[Parser], ctx: ParseContext, data: bytes) -> list[Row]:
    """Parse a whole file's bytes in one pass → all rows (unfolded), including ``flush()``."""
    parser = parser_cls(ctx, None)
    rows = list(feed_bytes(parser, data))
    rows.extend(flush_rows(parser))
    return rows
