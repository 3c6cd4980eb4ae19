"""Search text computed by the loader and sent with the rows (issue 27; migration 0016).

For the row types declared in `READY`, the writer adds two staging columns — the document's
search text and symbol lexemes (`agent_history.analysis.search_text`, the Python twin of
``ah.search_text`` / ``ah.script_lexemes``) — and the merge stores
``ah.search_tsv_ready(search_text, search_symbols)`` as the new row's ``tsv`` (a tool call: that
vector mapped to term ids, ``terms``/``tf``, migration 0028_term_ids): the vector the SQL
functions would compute, without the server's regular-expression work. A re-observed row
(``ON CONFLICT DO UPDATE``) gets its vector from the table's trigger, through the SQL functions.
During a bulk pass the same expressions run on a second connection over the batch's distinct
ready texts and the rows carry the vector instead of the text (`ingest.vectors_stage`).

The analysis is part of encoding a batch (`ingest.writer.encode_parts`), which the loader runs in
the thread that parsed the batch, never in its writer thread: each distinct document of a batch
is analysed once (`analysis_of` with the batch's memo). When parse workers run, each worker
analyses the documents of the chunks it parsed (`prepare_map`) and the encoding takes those
results, computing only what was not prepared (e.g. a tool call whose result came in a later
chunk, or a text changed by ``[index] redact``).
"""

from __future__ import annotations

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


def ready_of(row: Row) -> tuple[str, str]:
    """(search text, symbol lexemes) of `row`'s document, computed now."""
    return ready(DOCUMENT[type(row)](row))


def analysis_of(row: Row, analysed: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(search text, symbol lexemes) of `row`'s document: from `analysed` (doc text → analysis,
    a batch's memo, seeded with what parse workers computed), else computed now and kept there,
    so a document repeated in a batch (a clone, a resumed session's copy) is analysed once."""
    doc = DOCUMENT[type(row)](row)
    out = analysed.get(doc)
    if out is None:
        out = analysed[doc] = ready(doc)
    return out


def prepare_map(rows: Iterable[Row]) -> dict[str, tuple[str, str]]:
    """Doc text → (search text, symbol lexemes) of the documents of `rows` (folded by natural
    key first, as the batch's encoding will). Pure: a parse worker computes it beside the chunk it
    parsed (`ingest.chunks.parse_new_file`); the loader hands it on with the chunk
    (`ingest.writer.Part.ready`)."""
    out: dict[str, tuple[str, str]] = {}
    for row_type, recs in fold(r for r in rows if type(r) in DOCUMENT).items():
        doc_of = DOCUMENT[row_type]
        for row in recs.values():
            doc = doc_of(row)
            if doc not in out:
                out[doc] = ready(doc)
    return out
