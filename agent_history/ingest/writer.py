"""Write one batch of parsed rows: fold, encode as COPY data, COPY into staging, merge per table.

Two halves, so that a pipelined pass keeps the Python side and the server busy at once
(docs/performance.md, decision 7):
- `encode_parts` — pure Python, no connection: redaction, the fold across the batch's parts,
  the search text of messages and tool calls (`search_ready`), each row's values and their
  COPY text encoding (psycopg's own text formatter, so the bytes are those ``Copy.write_row``
  would send). The loader runs it in the thread that parsed the batch.
- `send` — the server half: COPY the encoded tables into staging, merge per table, count uid
  conflicts, mark sessions dirty, record claims. The loader's writer thread runs only this
  (psycopg releases the GIL while it waits on the server).
`write_parts` is both in one call (the strategies that write whole documents or databases).

During a bulk pass a third stage sits between them (docs/performance.md, decision 9):
`encode_parts(…, vectors_apart=True)` leaves the message and tool-call tables `Pending` — each
row's other values encoded, and the batch's distinct ready texts apart — the loader's vectors
thread computes their vectors on a second connection (`db.tables.ready_vectors`) and `complete`
splices them into the rows' COPY lines; the merge stores them as sent. Without vectors (no such
stage, or it failed) `complete` puts the ready text in the lines instead and the merge computes
the vector from it, as it always did.

The statements are the row-merge family's (`db.tables.merges`: staging, COPY, merges, uid
conflicts; `db.tables.claims`: rows two sessions share).

`send` runs inside the caller's transaction (the loader's one-transaction-per-batch rule); raises
psycopg errors unchanged so the caller can roll back and record a `load_error`
(`ingest.isolate`). The rows arrive within the columns' limits (`model.limits`, checked on the
parse side). The temp staging tables are created once per database session, outside the
batches' transactions (`prepare_staging`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import psycopg
from psycopg.adapt import Transformer
from psycopg.types.json import Jsonb

try:  # psycopg's COPY text encoder (C with psycopg[binary]); psycopg ≥ 3.2 keeps it here
    from psycopg._copy_base import format_row_text
except ImportError:  # pragma: no cover - psycopg 3.1
    from psycopg.copy import format_row_text  # type: ignore[attr-defined,no-redef]

from agent_history.db.tables.claims import claim_params, claim_sql, fold_claim_sql
from agent_history.db.tables.merges import (
    CONTENT_COLUMNS,
    EVENT_TYPES,
    READY_TSV,
    TERM_IDS,
    TERM_MAP_SETTINGS,
    assign_terms_sql,
    copy_sql,
    count_sql,
    dirty_sql,
    merge_sql,
    pg_type,
    staging_ddl,
    uid_conflict_sql,
    vector_columns,
)
from agent_history.db.tables.merges import purge_source as purge_source  # its callers' name (curation, loader)
from agent_history.ingest.search_ready import READY, analysis_of
from agent_history.model.merge import fold, merge_pair
from agent_history.model.redaction import redact_rows
from agent_history.model.rows import ROW_TYPES, ParseIssueRow, Row, SessionRow


@cache
def _json_positions(row_type: type[Row]) -> tuple[int, ...]:
    return tuple(i for i, f in enumerate(dataclasses.fields(row_type)) if pg_type(str(f.type)) == "jsonb")  # type: ignore[arg-type]


_STAGING_MARK = "_ah_staging_ready"
"""Attribute on a connection: the backend pid whose session holds committed staging tables."""


def prepare_staging(conn: psycopg.Connection) -> None:
    """Create the temp staging tables of this connection's session if they may be missing.

    Outside a transaction (autocommit) the ``CREATE``s commit at once and the connection is
    marked, so later calls cost nothing. Inside one they would vanish with a rollback, so the
    mark is not set and the next call creates them again (``IF NOT EXISTS``): a failed first
    batch can never leave the retry without its tables (issue 25, "relation stg_session does not
    exist" on every file). Callers that open a transaction call this first.
    """
    info = conn.info
    if getattr(conn, _STAGING_MARK, None) == info.backend_pid:
        return
    for row_type in ROW_TYPES:
        conn.execute(staging_ddl(row_type))
    if info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        setattr(conn, _STAGING_MARK, info.backend_pid)


def forget_staging(conn: psycopg.Connection) -> None:
    """Forget that this connection's staging tables exist (after a rolled-back write): the next
    `prepare_staging` checks them again."""
    if getattr(conn, _STAGING_MARK, None) is not None:
        setattr(conn, _STAGING_MARK, None)


@dataclass(frozen=True, slots=True)
class Written:
    """Rows one write added per table: `new` rows inserted, `merged` existing rows changed by
    their merge policy (a re-observed row that changes nothing is in neither)."""

    new: Counter[str]
    merged: Counter[str]
    issues: Counter[str] = dataclasses.field(default_factory=Counter)
    """Parse issues the write itself recorded, per kind (`uid_conflict`)."""


@dataclass(frozen=True, slots=True)
class Part:
    """Rows parsed from one source file in one batch."""

    source_id: int
    namespace: str
    rows: list[Row]
    ready: dict[str, tuple[str, str]] | None = None
    """Search-text analyses of these rows' documents computed ahead (a parse worker's
    `search_ready.prepare_map`), if any: doc text → (search text, symbol lexemes)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A message or tool-call staging table whose rows wait for their vectors (`complete`).

    `rows` holds each row's COPY line without its ready columns (the row's values, ``source_id``,
    ``namespace``; ``\\n``-ended), `ends` the offset after each line; `doc_of` each row's index
    among the batch's distinct ready texts, whose COPY lines (search text, symbol lexemes) are
    `texts`, `text_ends` the offset after each — the data the analysis connection copies
    (`db.tables.ready_vectors.compute_vectors`)."""

    rows: bytearray
    ends: list[int]
    doc_of: list[int]
    texts: bytearray
    text_ends: list[int]
    no_vector: bytes = b"\t\\N"
    """COPY text after a line's ready text when it is sent without a vector: one ``\\N`` per
    staging vector column (`merges.vector_columns`; a tool call has two)."""

    @property
    def nbytes(self) -> int:
        """Bytes held (rows and texts)."""
        return len(self.rows) + len(self.texts)


_NO_TEXT = b"\t\\N\t\\N\t"
"""COPY text between a row's values and its vector: no search text, no symbols (the merge takes
the vector as sent; a tool call's is two fields, `merges.TERM_LISTS`)."""


def complete(pending: Pending, vectors: list[bytes] | None) -> bytearray:
    """The COPY data of a `Pending` table: each row's line with its vector (`vectors`, one
    COPY-escaped ``tsvector`` text per distinct ready text, `db.tables.ready_vectors`) and no
    ready text, or, with `vectors` None, with its ready text and no vector (the merge computes
    it) — the lines `encode_parts` writes without `vectors_apart`. Raises ValueError when
    `vectors` does not hold one vector per text."""
    out = bytearray()
    rows = memoryview(pending.rows)
    start = 0
    if vectors is not None:
        if len(vectors) != len(pending.text_ends):
            raise ValueError(f"{len(vectors)} vectors for {len(pending.text_ends)} texts")
        for end, doc in zip(pending.ends, pending.doc_of, strict=True):
            out += rows[start : end - 1]
            out += _NO_TEXT
            out += vectors[doc]
            out += b"\n"
            start = end
    else:
        texts = memoryview(pending.texts)
        lines, begin = [], 0
        for end in pending.text_ends:
            lines.append(texts[begin : end - 1])
            begin = end
        for end, doc in zip(pending.ends, pending.doc_of, strict=True):
            out += rows[start : end - 1]
            out += b"\t"
            out += lines[doc]
            out += pending.no_vector
            out += b"\n"
            start = end
        texts.release()
    rows.release()
    return out


@dataclass(frozen=True, slots=True)
class Encoded:
    """A batch ready to send (`encode_parts`): what `send` needs and nothing to compute."""

    source_ids: tuple[int, ...]
    """The parts' source files, one per part in part order (a file with two chunks in the batch
    is there twice)."""
    tables: tuple[tuple[type[Row], bytearray | Pending], ...]
    """(row type, COPY text data of its staging table: one ``\\n``-ended line per folded row — or,
    encoded with `vectors_apart`, a message or tool-call table `Pending` until `with_vectors`), in
    `ROW_TYPES` order, tables without rows left out."""
    shared: dict[type[Row], list[tuple]]
    """Rows two sessions of this batch share: `claims.claim_params` of each copy, per type."""
    issues: Counter[str]
    """Parse issues the fold recorded (`uid_conflict` within the batch), per kind."""

    @property
    def nbytes(self) -> int:
        """Bytes of COPY data (the bulk of the batch's memory once encoded)."""
        return sum(data.nbytes if isinstance(data, Pending) else len(data) for _, data in self.tables)

    def texts(self) -> dict[type[Row], tuple[bytearray, int]]:
        """Row type → (COPY data of the distinct ready texts, their number) of the `Pending`
        tables: what `db.tables.ready_vectors.compute_vectors` takes."""
        return {t: (d.texts, len(d.text_ends)) for t, d in self.tables if isinstance(d, Pending)}

    def with_vectors(self, vectors: dict[type[Row], list[bytes]] | None) -> Encoded:
        """This batch with every `Pending` table completed (`complete`): with its vectors from
        `vectors` (row type → vectors, as `texts` ordered them), else with the ready text."""
        if not any(isinstance(d, Pending) for _, d in self.tables):
            return self
        tables = tuple(
            (t, complete(d, None if vectors is None else vectors[t]) if isinstance(d, Pending) else d)
            for t, d in self.tables
        )
        return dataclasses.replace(self, tables=tables)


def _fold_parts(
    parts: list[Part], issues: Counter[str], shared: dict[type[Row], list[tuple]] | None = None
) -> dict[type[Row], dict[tuple, tuple[Row, int, str]]]:
    """Fold rows across parts in order → {type: {key: (row, source_id, namespace)}}.

    The first part to contribute a row owns it (keep-first ``source_id``); per-source rows are
    keyed with their ``source_id``. A row reusing another session's key with other content
    (`db.tables.merges.CONTENT_COLUMNS`) is not merged: a `uid_conflict` issue of its part takes its
    place (counted in `issues`). Rows of two sessions that do merge are listed in `shared` as
    `claims.claim_params` of each copy (their owner is decided after the pass, `db.tables.claims`). Every session an event names gets at least a stub
    SessionRow, so the event merges can join it.
    """
    out: dict[type[Row], dict[tuple, tuple[Row, int, str]]] = {}
    for part in parts:
        for row_type, recs in fold(part.rows).items():
            table = out.setdefault(row_type, {})
            for key, row in recs.items():
                k = (part.source_id, *key) if row_type.PER_SOURCE else key
                prev = table.get(k)
                if prev is None:
                    table[k] = (row, part.source_id, part.namespace)
                elif row_type in CONTENT_COLUMNS and _conflicts(prev[0], row):
                    issue = _uid_conflict(prev[0], row)
                    ikey = (part.source_id, *issue.natural_key())
                    recorded = out.setdefault(ParseIssueRow, {})
                    if ikey not in recorded:
                        recorded[ikey] = (issue, part.source_id, part.namespace)
                        issues[issue.kind] += 1
                else:
                    if shared is not None and not row_type.PER_SOURCE and _session_of(prev[0]) != _session_of(row):
                        shared.setdefault(row_type, []).extend(
                            [claim_params(prev[0], prev[1]), claim_params(row, part.source_id)]
                        )
                    table[k] = (merge_pair(prev[0], row), prev[1], prev[2])
    sessions = out.setdefault(SessionRow, {})
    for row_type, table in out.items():
        if row_type is SessionRow or row_type.PER_SOURCE:
            continue
        for row, source_id, namespace in table.values():
            skey = (row.agent, row.session_uid, row.agent_id)  # type: ignore[attr-defined]
            if skey not in sessions:
                sessions[skey] = (
                    SessionRow(agent=skey[0], session_uid=skey[1], agent_id=skey[2]),
                    source_id,
                    namespace,
                )
    return out


def _session_of(row: Row) -> tuple:
    return (row.agent, row.session_uid, row.agent_id)  # type: ignore[attr-defined]


def _conflicts(old: Row, new: Row) -> bool:
    """True when `new` reuses `old`'s natural key for another session with other content
    (`db.tables.merges.CONTENT_COLUMNS`: the rule the SQL merge applies to stored rows)."""
    if (old.agent, old.session_uid, old.agent_id) == (new.agent, new.session_uid, new.agent_id):  # type: ignore[attr-defined]
        return False
    return any(getattr(old, c) != getattr(new, c) for c in CONTENT_COLUMNS[type(old)])


def _uid_conflict(old: Row, new: Row) -> ParseIssueRow:
    uid = type(new).key_columns()[-1]
    return ParseIssueRow(
        "uid_conflict",
        new.byte_offset or 0,  # type: ignore[attr-defined]
        new.line_number,  # type: ignore[attr-defined]
        f"{uid} {getattr(new, uid)} of session {new.session_uid} was already stored for session "  # type: ignore[attr-defined]
        f"{old.session_uid} with other content: kept the stored one",  # type: ignore[attr-defined]
    )


def encode_parts(
    parts: list[Part], *, redact: Callable[[str], str] | None = None, vectors_apart: bool = False
) -> Encoded:
    """The Python half of a write, pure (no connection): fold the parts' rows across the batch,
    compute their values and search text, encode them as COPY text data per staging table.

    With `redact` (``[index] redact``), the free-text fields (`model.redaction.FREE_TEXT`) are
    encoded as `redact` returns them, before their search text is computed, so neither the text
    nor its vector holds a secret. Messages and tool calls carry their search text
    (`search_ready.analysis_of`): taken from the parts' `ready` analyses when computed ahead,
    else computed here — once per distinct document of the batch. Their lines end with the ready
    text and no vector (the merge computes it); with `vectors_apart` their tables are left
    `Pending` (the distinct ready texts apart) for `Encoded.with_vectors`.
    """
    if redact is not None:
        parts = [dataclasses.replace(p, rows=redact_rows(p.rows, redact)) for p in parts]
    issues: Counter[str] = Counter()
    shared: dict[type[Row], list[tuple]] = {}
    folded = _fold_parts(parts, issues, shared)
    analysed: dict[str, tuple[str, str]] = {}
    for part in parts:
        if part.ready:
            analysed.update(part.ready)
    tx = Transformer()  # no connection: the default adapters, text as UTF-8 (`send` sets that encoding)
    tables = []
    for row_type in ROW_TYPES:
        recs = folded.get(row_type)
        if not recs:
            continue
        jpos = _json_positions(row_type)
        doc_analysed = row_type in READY
        apart = vectors_apart and row_type in READY_TSV
        no_vector = [None] * len(vector_columns(row_type)) if row_type in READY_TSV else []
        data = bytearray()
        ends: list[int] = []
        doc_of: list[int] = []
        text_index: dict[tuple[str, str], int] = {}
        texts = bytearray()
        text_ends: list[int] = []
        for row, source_id, namespace in recs.values():
            values = list(row.values())
            for i in jpos:
                if values[i] is not None:
                    values[i] = Jsonb(values[i])
            values += [source_id, namespace]
            if apart:
                ready = analysis_of(row, analysed)
                doc = text_index.get(ready)
                if doc is None:
                    doc = text_index[ready] = len(text_ends)
                    format_row_text(ready, tx, texts)
                    text_ends.append(len(texts))
                format_row_text(values, tx, data)
                ends.append(len(data))
                doc_of.append(doc)
                continue
            if doc_analysed:  # no vector: the merge computes it
                values += [*analysis_of(row, analysed), *no_vector]
            format_row_text(values, tx, data)
        tables.append(
            (row_type, Pending(data, ends, doc_of, texts, text_ends, b"\t\\N" * len(no_vector)) if apart else data)
        )
    return Encoded(tuple(p.source_id for p in parts), tuple(tables), shared, issues)


def send(conn: psycopg.Connection, encoded: Encoded) -> Written:
    """The server half of a write: COPY each encoded table into staging and merge it into the
    catalogue, sessions first; returns new and merged rows per table.

    Must be called inside a transaction (the caller's batch). One COPY and one merge per table
    whatever the number of files; affected sessions are marked dirty; rows two sessions share
    are recorded as claims (`db.tables.claims`). No Python work beyond the statements: the
    loader's writer thread runs it while the next batch is parsed and encoded. Tables still
    `Pending` are completed with their ready text (the merge computes the vectors).
    """
    encoded = encoded.with_vectors(None)
    prepare_staging(conn)
    if conn.info.encoding != "utf-8":  # the data was encoded as UTF-8 (`encode_parts`)
        conn.execute("SET client_encoding TO 'UTF8'")
    written = Written(Counter(), Counter(), Counter(encoded.issues))
    shared = encoded.shared
    with conn.cursor() as cur:
        for row_type, data in encoded.tables:
            with cur.copy(copy_sql(row_type)) as copy:
                copy.write(data)
            if row_type in CONTENT_COLUMNS:
                cur.execute(uid_conflict_sql(row_type))
                conflicts = cur.fetchone()[0]
                if conflicts:
                    written.issues["uid_conflict"] += conflicts
            if row_type in TERM_IDS:
                cur.execute(assign_terms_sql(row_type))
                cur.execute(TERM_MAP_SETTINGS)
            merge = merge_sql(row_type)
            cur.execute(count_sql(merge) if row_type.PER_SOURCE else dirty_sql(merge))
            new, merged = cur.fetchone()
            written.new[row_type.TABLE] += new
            written.merged[row_type.TABLE] += merged
            if row_type in EVENT_TYPES:  # rows another session also holds: claims (`db.tables.claims`)
                cur.execute(claim_sql(row_type))
                if shared.get(row_type):
                    cur.executemany(fold_claim_sql(row_type), shared[row_type])
    return written


def write_parts(conn: psycopg.Connection, parts: list[Part], *, redact: Callable[[str], str] | None = None) -> Written:
    """Merge the rows of several parts into the catalogue (`encode_parts` then `send`, in the
    caller's transaction); returns new and merged rows per table."""
    return send(conn, encode_parts(parts, redact=redact))


def write_rows(conn: psycopg.Connection, source_id: int, namespace: str, rows: Iterable[Row]) -> Written:
    """Merge the rows of one source file (see `write_parts`)."""
    return write_parts(conn, [Part(source_id, namespace, list(rows))])
