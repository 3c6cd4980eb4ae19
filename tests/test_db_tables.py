"""The writers' table-family modules (`agent_history.db.tables`, docs/design.md §3 "One query
layer"): what the loader's modules rely on when they import them."""

from __future__ import annotations

import subprocess
import sys

from agent_history.db.tables.merges import (
    READY_COLUMNS,
    READY_TSV,
    TERM_LISTS,
    VECTOR_COLUMN,
    assign_terms_sql,
    copy_sql,
    map_terms_sql,
    merge_sql,
    staging_columns,
    term_lists_sql,
)
from agent_history.db.tables.ready_vectors import vectors_copy_sql
from agent_history.ingest.search_ready import READY
from agent_history.model.rows import MessageRow, SessionRow, ToolCallRow


def test_the_merge_sends_ready_vectors_for_the_row_types_the_loader_analyses():
    assert set(READY_TSV) == set(READY) == {MessageRow, ToolCallRow}
    # the positional vector: the merge maps it to term ids (migration 0028_term_ids)
    assert READY_TSV[ToolCallRow] == READY_TSV[MessageRow] == "ah.search_tsv_ready(s.search_text, s.search_symbols)"


def test_copy_names_the_staging_columns_in_the_order_the_writer_sends_them():
    assert (
        copy_sql(SessionRow) == f"COPY stg_session ({', '.join(SessionRow.columns())}, source_id, namespace) FROM STDIN"
    )
    assert staging_columns(MessageRow)[-5:] == ("source_id", "namespace", *READY_COLUMNS, VECTOR_COLUMN)
    assert copy_sql(MessageRow).endswith("source_id, namespace, search_text, search_symbols, tsv) FROM STDIN")
    assert staging_columns(ToolCallRow)[-4:] == (*READY_COLUMNS, *(c for c, _ in TERM_LISTS))
    assert copy_sql(ToolCallRow).endswith("search_text, search_symbols, lexemes, counts) FROM STDIN")


def test_the_merge_stores_a_sent_vector_else_computes_it_from_the_ready_text():
    assert "COALESCE(s.tsv, ah.search_tsv_ready(s.search_text, s.search_symbols))" in merge_sql(MessageRow)
    # a tool call: the staged vectors filled from the ready text first (`assign_terms_sql`), then mapped
    # as the lexemes and their tf (`TERM_LISTS`), the expression the analysis connection runs
    fill = f"SET (lexemes, counts) = ({term_lists_sql('ah.search_tsv_ready(s.search_text, s.search_symbols)')})"
    assert f"{fill} WHERE s.lexemes IS NULL" in assign_terms_sql(ToolCallRow)
    assert term_lists_sql("v") in vectors_copy_sql(ToolCallRow).replace(READY_TSV[ToolCallRow], "v")
    assert "unnest(s.lexemes, s.counts)" in map_terms_sql(ToolCallRow) and "tsv" not in map_terms_sql(ToolCallRow)
    assert f"LEFT JOIN ({map_terms_sql(ToolCallRow)}) m ON m.n = s.staged_n" in merge_sql(ToolCallRow)
    assert "terms, tf)" in merge_sql(ToolCallRow) and " tsv" not in merge_sql(ToolCallRow).split("SELECT")[0]


def test_the_families_a_pass_needs_before_reading_load_no_row_model():
    """The loader imports these at its top (registering files, its run row, the post-pass's
    statements, the bulk path's): they import psycopg only, never the row model — only the
    merges (`merges`, `claims`) need it (issue 18, whole-process time of a no-change pass)."""
    code = (
        "import sys\n"
        "from agent_history.db.tables import parse_issues, purge, runs, search_stats, sessions, source_files\n"
        "print(sorted(m for m in sys.modules if m.startswith('agent_history.') and not m.startswith('agent_history.db')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
