"""The kinds of parse issue (`ah.parse_issue.kind`, `rows.ParseIssueRow`): what can go wrong in a
source file while the rest of it is still read. Declared once here, so `issues --kind` can name
them; tests/test_issue_kinds.py fails when the code records a kind this list does not hold.
"""

from __future__ import annotations

PARSER_KINDS: tuple[str, ...] = (
    "blank_line",  # a whitespace-only line (parsers/common/lines.py)
    "invalid_json",  # a line (or document) that is not JSON
    "invalid_utf8",  # bytes that are not UTF-8, replaced by U+FFFD
    "lone_surrogate",  # NUL or a lone surrogate in a string, replaced by U+FFFD
    "non_object",  # a JSON value that is not an object where a record was expected
    "line_too_long",  # a line over the parser's byte limit, skipped
    "fused_line",  # two or more JSON values on one line (an unterminated append), all read
    "recovered_object",  # values recovered around a torn object
    "record_before_header",  # a record before the session header it needs
    "unknown_record_type",  # a record type (or content type) this parser does not know
    "bad_record",  # a known record missing what identifies it, or of a shape that cannot be read
    "too_deep",  # JSON nested deeper than model.values.MAX_JSON_DEPTH (values null) or than any decoder
    "non_finite_number",  # NaN, Infinity or a number no float holds, read as null
    "parser_error",  # the parser failed on one record; that record is skipped (parsers/driver.py)
    "key_too_long",  # a key or path over its column's byte limit, stored in digest form (model/limits.py)
    "value_out_of_range",  # a count, duration, position or cost outside its column's range, stored NULL
    "bad_value",  # a value of the wrong type for its column, stored NULL (or its row dropped)
)
"""Kinds the pure parsers record."""

LOADER_KINDS: tuple[str, ...] = (
    "source_rewritten",  # the file's indexed prefix changed: its rows purged, read again
    "parser_upgraded",  # read by an older parser version; `rebuild` reads it again
    "load_error",  # a batch of the file failed to load (rolled back, the pass went on)
    "document_too_large",  # a whole-document source over the size limit, not read (ingest/documents.py)
    "bad_database",  # a database source (opencode.db, state.vscdb) that cannot be opened or read
    "postpass_error",  # the post-passes could not roll up this file's session (ingest/postpass.py)
    "uid_conflict",  # a record reusing another session's uid with other content: the stored row kept (db/tables/merges.py)
    "rows_shared",  # informational: a session's copies of rows another session owns, counted there (db/tables/claims.py)
)
"""Kinds the loader records (for whole files)."""

KINDS: tuple[str, ...] = PARSER_KINDS + LOADER_KINDS
"""Every kind of parse issue, parsers' first."""
