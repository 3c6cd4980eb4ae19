"""Search text computed by the loader and sent with the rows (issue 27; migration 0016).

For the row types declared in `READY`, the writer adds two staging columns — the document's
search text and symbol lexemes (`agent_history.analysis.search_text`, the Python twin of
``ah.search_text`` / ``ah.script_lexemes``) — and the merge stores
``ah.search_tsv_ready(search_text, search_symbols)`` (a tool call: its term-frequency form,
``ah.tool_call_tsv_ready``, migration 0025) as the new row's ``tsv``: the vector the SQL
functions would compute, without the server's regular-expression work. A re-observed row
(``ON CONFLICT DO UPDATE``) gets its vector from the table's trigger, through the SQL functions.

With a writer thread the loader `Prepared.prepare`s each chunk's documents in the thread that
parsed them, as the chunk joins a batch — per chunk and pure: when parse workers run, each
worker computes it beside the chunks it parsed (`prepare_map`) and the loader only `add`s the
results — and the writer takes the results (computing only what was not
prepared, e.g. a tool call whose result came in a later chunk). On 2 cores this measured the
same as analysing in the writer thread (one GIL): docs/performance.md, decision 1.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from agent_history.analysis.search_text import message_doc, ready, tool_call_doc
from agent_history.model.merge import fold
from agent_history.model.rows import MessageRow, Row, ToolCallRow

DOCUMENT: dict[type[Row], Callable[[Row], str]] = {
    MessageRow: lambda row: message_doc(row.text),  # type: ignore[attr-defined]
    ToolCallRow: lambda row: tool_call_doc(row.name, row.input, row.output),  # type: ignore[attr-defined]
}
"""Row type → the text its vector is computed from (what ``ah.message_tsv`` /
``ah.tool_call_tsv`` analyse)."""

READY = DOCUMENT
"""The row types whose vectors the loader sends ready (the keys of `db.tables.merges.READY_TSV`,
the merge's value of ``tsv`` for each, and its staging columns `db.tables.merges.READY_COLUMNS`)."""

MAX_PREPARED_CHARS = 64_000_000
"""Characters of prepared analyses kept at most (a bound on memory should the writer not take
them: a file that failed, a batch cut short by a signal)."""


def ready_of(row: Row) -> tuple[str, str]:
    """(search text, symbol lexemes) of `row`'s document, computed now."""
    return ready(DOCUMENT[type(row)](row))


def prepare_map(rows: Iterable[Row]) -> dict[str, tuple[str, str]]:
    """Doc text → (search text, symbol lexemes) of the documents of `rows` (folded by natural
    key first, as the writer will). Pure: a parse worker computes it beside the chunk it parsed
    (`ingest.chunks.parse_new_file`) and the loader hands it to `Prepared.add`."""
    out: dict[str, tuple[str, str]] = {}
    for row_type, recs in fold(r for r in rows if type(r) in DOCUMENT).items():
        doc_of = DOCUMENT[row_type]
        for row in recs.values():
            doc = doc_of(row)
            if doc not in out:
                out[doc] = ready(doc)
    return out


class Prepared:
    """Documents analysed ahead of the writer: doc text → (search text, symbol lexemes).
    Shared by the parsing thread (`prepare`) and the writer thread (`take`)."""

    def __init__(self) -> None:
        self._ready: dict[str, tuple[str, str]] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def prepare(self, rows: Iterable[Row]) -> None:
        """Analyse the documents of `rows` (folded by natural key first, as the writer will)."""
        for row_type, recs in fold(r for r in rows if type(r) in DOCUMENT).items():
            doc_of = DOCUMENT[row_type]
            for row in recs.values():
                doc = doc_of(row)
                if doc not in self._ready:
                    out = ready(doc)
                    with self._lock:
                        if self._chars >= MAX_PREPARED_CHARS:
                            self._ready.clear()
                            self._chars = 0
                        self._ready[doc] = out
                        self._chars += len(out[0]) + len(out[1])

    def add(self, analysed: dict[str, tuple[str, str]]) -> None:
        """Keep analyses computed elsewhere (`prepare_map` in a parse worker)."""
        with self._lock:
            for doc, out in analysed.items():
                if self._chars >= MAX_PREPARED_CHARS:
                    self._ready.clear()
                    self._chars = 0
                if doc not in self._ready:
                    self._ready[doc] = out
                    self._chars += len(out[0]) + len(out[1])

    def take(self, row: Row) -> tuple[str, str]:
        """The analysis of `row`'s document: prepared (and forgotten), else computed now."""
        doc = DOCUMENT[type(row)](row)
        with self._lock:
            out = self._ready.pop(doc, None)
            if out is not None:
                self._chars -= len(out[0]) + len(out[1])
        return out if out is not None else ready(doc)
