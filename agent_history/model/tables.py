"""Names of the catalogue's tables in schema ``ah``, declared once for the modules that list them
(`db status` row counts, the ``table`` label of the ``ah_catalogue_rows`` metric), and its large
columns (migration 0015_store, `benchmarks.store`). Pure data."""

from __future__ import annotations

#: Tables an index pass fills from transcripts (migration 0001_core), in the order `db status`
#: lists them.
PARSED_TABLES: tuple[str, ...] = (
    "source_file",
    "session",
    "turn",
    "message",
    "model_call",
    "tool_call",
    "subagent_spawn",
    "compaction",
    "file_touch",
    "git_event",
    "parse_issue",
    "record_type_seen",
)

#: Bookkeeping tables of the catalogue (migration 0001_core): the post-pass queue, repositories,
#: the price list and key/value metadata.
BOOKKEEPING_TABLES: tuple[str, ...] = ("dirty_session", "repo", "model_pricing", "meta")

#: Tables derived after parsing: chunks and vectors (0003_embeddings), loops and lanes
#: (0007_loops), journal summaries (0008_journal).
DERIVED_TABLES: tuple[str, ...] = ("chunk", "embedding", "loops", "lane", "session_summary")

#: (table, column) of the values large enough to be compressed or moved to TOAST (transcript
#: text, tool input and output, their search vectors): the columns migration 0015_store gives lz4
#: compression where the server has it, read there and by `benchmarks.store` (the catalogue cannot
#: tell them apart on a server without lz4: there they keep the default, as every other column).
#: 0015 keeps its own copy (a migration is frozen in time and imports nothing of the package);
#: tests/test_store.py checks the two are equal. A large column added later is set by its own
#: migration and listed in a tuple of its own beside this one. ``tool_call.tsv`` was dropped by
#: migration 0028_term_ids (its term ids, ``terms``/``tf``, are small and stay uncompressed): the
#: readers skip a column that is no longer there.
LARGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("message", "text"),
    ("message", "tsv"),
    ("message", "attachments"),
    ("tool_call", "input"),
    ("tool_call", "output"),
    ("tool_call", "tsv"),
    ("tool_call", "error_excerpt"),
)
