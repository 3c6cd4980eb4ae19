"""`just bench-profile`: where a cold ingest's time goes, server and client (issue 27; not a test).

    python -m benchmarks.profile [--scale 10] [--runs 2] [--work DIR] [--no-perf] [--write docs/performance.md]

Builds the shared corpus cloned SCALE times (``../shared/tools/scale_home.py``), then per run: a
fresh private embedded server with ``pg_stat_statements`` preloaded (``track = all``: statements
run inside functions and triggers are counted too), ``track_functions = all`` and
``track_io_timing = on``; a cold `agent-history index` of the home run through
`benchmarks.client_phases` (the real command, its loader timed by phase). Measured:

- CPU seconds of the client (wait4 rusage) and of the server (the postmaster's and its
  children's utime+stime from /proc), wall seconds, the machine's load average;
- server time per statement shape (``pg_stat_statements``: execution time is wall time inside
  the backend, so on a loaded machine it exceeds CPU) and per function
  (``pg_stat_user_functions``; SQL functions the planner inlines do not appear);
- where the server's CPU goes by code path: ``perf record`` samples of the server's processes,
  each symbol put in a category by `CATEGORIES` (skipped when perf is missing or not permitted);
- the client's time by phase (`benchmarks.client_phases`).

After the last run, on its catalogue: the search-text analysis alone, function by function
(backend CPU of one set-based statement each over every document), the store by relation and
by large column, the indexes' use after the `just eval` queries, and ``EXPLAIN (ANALYZE,
BUFFERS, WAL)`` of each insert shape: a sample of rows deleted and merged back from staging, in
a transaction rolled back.

Medians over runs; the tables go to stdout, and with ``--write FILE`` replace the part of FILE
between ``<!-- bench-profile:begin -->`` and ``<!-- bench-profile:end -->``.

Modules: `server` (the profiled server: settings, pids, perf categories, per-statement and
per-function figures), `load` (one cold load: client CPU and phases, server CPU), `catalogue`
(the measurements on the last run's catalogue), `report` (the Markdown tables, the generated
section), `cli` (the entry point).
"""

from __future__ import annotations

from benchmarks.profile.cli import main
from benchmarks.profile.report import git_head, report, write_section

__all__ = ["git_head", "main", "report", "write_section"]
