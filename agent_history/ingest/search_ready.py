"""Search text computed by the loader and sent with the rows (issue 27; migration 0016).

For the row types declared in `READY`, the writer adds two staging columns — the document's
search text and symbol lexemes (`agent_history.search.search_text`, the Python twin of
``ah.search_text`` / ``ah.script_lexemes``) — and the merge stores
``ah.search_tsv_ready(search_text, search_symbols)`` as the new row's ``tsv``: the vector
``ah.search_tsv`` would compute, without the server's regular-expression work. A re-observed row
(``ON CONFLICT DO UPDATE``) gets its vector from the table's trigger, through the SQL functions.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_history.model.rows import MessageRow, Row, ToolCallRow
from agent_history.search.search_text import message_doc, ready, tool_call_doc

READY_COLUMNS: tuple[str, ...] = ("search_text", "search_symbols")
"""Staging columns carrying the ready analysis (text, tsvector text)."""

READY_TSV = "ah.search_tsv_ready(s.search_text, s.search_symbols)"
"""The merge's value of ``tsv`` for a staged row."""

READY: dict[type[Row], Callable[[Row], tuple[str, str]]] = {
    MessageRow: lambda row: ready(message_doc(row.text)),  # type: ignore[attr-defined]
    ToolCallRow: lambda row: ready(tool_call_doc(row.name, row.input, row.output)),  # type: ignore[attr-defined]
}
"""Row type → (search text, symbol lexemes) of its document (``ah.message_tsv`` /
``ah.tool_call_tsv`` analyse the same text)."""
