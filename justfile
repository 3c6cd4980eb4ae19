# agent-history developer recipes (just ≥ 1.27: `[doc]` attributes give `just --list` one line per recipe).
# Install first: pip install -e '.[test]' rust-just

set shell := ["bash", "-euo", "pipefail", "-c"]

# Run the whole test suite on every core (pytest-xdist; each worker starts its own embedded
# server). --dist loadgroup keeps a module that shares a module-scoped fixture on one worker
# (tests/conftest.py) and spreads the rest test by test: on 2 cores shared at a load average of 11
# it took 32.9 min where --dist load took 35.6 (module fixtures built on both workers) and loadfile
# was at 96 % after 31 min (a tail of big modules on one worker). pytest exits non-zero on
# failures and when no test ran; --durations=30 lists the slowest tests (the suite has a 15-minute goal).
[doc("Run the whole test suite on every core (one file: just test tests/test_x.py)")]
test *ARGS:
    python -m pytest -q -n auto --dist loadgroup --durations=30 {{ARGS}}

# Build the wheel and sdist of the distribution `agent-history-catalogue` into dist/.
[doc("Build the wheel and sdist of agent-history-catalogue into dist/")]
dist:
    rm -rf dist
    python -m build --outdir dist .

# The built wheel installs into a fresh venv with pip, answers --version and indexes the shared
# corpus (../shared/corpus/home) on a scratch embedded server.
[doc("Install the built wheel into a fresh venv and index the shared corpus with it")]
dist-check: dist
    python .ci/check_wheel.py dist

# Lint with ruff.
[doc("Lint with ruff")]
lint:
    ruff check agent_history tests migrations benchmarks dashboards alerts

# Format with ruff.
[doc("Format with ruff (and apply ruff's fixes)")]
fmt:
    ruff format agent_history tests migrations benchmarks dashboards alerts
    ruff check --fix agent_history tests migrations benchmarks dashboards alerts

# Ingest benchmark on a synthetic home (not timed tests): messages/s, MB/s, peak RSS, no-change
# pass. SCALE = sessions. Then keyword-search latency at 100 k messages (bench-search for 1 M).
[doc("Ingest and keyword-search benchmark on a synthetic home of SCALE sessions")]
bench SCALE="2000":
    python -m benchmarks.ingest --sessions {{SCALE}}
    python -m benchmarks.search --messages 100000

# agent-history beside agentsview (when `pip install agentsview` put it beside python) on the
# shared corpus cloned SCALE times: cold ingest, CPU, store size, no-change pass, search, --version.
[doc("agent-history beside agentsview on the shared corpus cloned SCALE times")]
bench-compare SCALE="10" RUNS="3":
    python -m benchmarks.compare --scale {{SCALE}} --runs {{RUNS}}

# Where the catalogue's bytes are (issue 27 item 4): the shared corpus cloned SCALE times, one cold
# load, per-relation sizes (heap, TOAST, each index), large columns, vector contents, and keyword
# search p50/p95 in process over the eval queries. Tables written into docs/performance.md.
[doc("Where the catalogue's bytes are, per relation (writes docs/performance.md)")]
bench-store SCALE="10" RUNS="5":
    python -m benchmarks.store --scale {{SCALE}} --search-runs {{RUNS}} --write docs/performance.md

# A term dictionary for the tool-call vectors, measured (issue 27 item 4; docs/performance.md
# decision 11): the shared corpus cloned SCALE times, one cold load, the term-id form built in a
# scratch schema; bytes, BM25 equality and server CPU per eval query, prefix queries, ingest cost.
[doc("The term-id form of the tool-call vectors, measured (decision 11)")]
bench-term-ids SCALE="10" RUNS="5":
    python -m benchmarks.term_ids --scale {{SCALE}} --runs {{RUNS}}

# Where a cold ingest's time goes: the shared corpus cloned SCALE times, loaded RUNS times on a
# profiled private server (pg_stat_statements track=all, track_functions, perf when permitted);
# server time per statement/function/code path, client time by phase, the search-text analysis,
# insert shapes, store. Tables written into docs/performance.md.
[doc("Where a cold ingest's time goes, server and client (writes docs/performance.md)")]
bench-profile SCALE="10" RUNS="2":
    python -m benchmarks.profile --scale {{SCALE}} --runs {{RUNS}} --write docs/performance.md

# The catalogue at >= 1 M messages and >= 1 M tool calls (CLONES of the shared corpus with perturbed
# prose, through the loader): cold ingest, store, keyword/hybrid search, why/touched/sessions,
# no-change pass, index --file, peak RSS. Hours on 2 cores: check with CLONES="10" first.
[doc("The catalogue at >= 1 M messages and tool calls (hours; try CLONES=10 first)")]
bench-scale CLONES="770":
    python -m benchmarks.scale --clones {{CLONES}} --write docs/performance.md

# Whole-process p50/p95 of the read commands in process and through the resident query process
# (issue 27 item 5), on the shared corpus in a scratch data dir; writes docs/performance.md.
[doc("Read commands as whole processes, in process and resident (writes docs/performance.md)")]
bench-resident RUNS="15":
    python -m benchmarks.resident --runs {{RUNS}} --write docs/performance.md

# Keyword-search latency percentiles at MESSAGES synthetic messages (1000000 for the target).
[doc("Keyword-search latency percentiles at MESSAGES synthetic messages")]
bench-search MESSAGES="1000000":
    python -m benchmarks.search --messages {{MESSAGES}}

# Search quality per mode (keyword, vector, hybrid; local all-MiniLM-L6-v2 on CPU) on the shared
# corpus: hit@1, hit@5, MRR and latency side by side.
[doc("Search quality per mode (keyword, vector, hybrid) on the shared corpus")]
eval-modes *ARGS:
    python -m agent_history.evaluation.modes {{ARGS}}

# Embedding throughput (local model on CPU) and keyword/vector/hybrid query latency. SCALE = sessions.
[doc("Embedding throughput and keyword/vector/hybrid query latency")]
bench-embed SCALE="2000" EMBED="300":
    python -m benchmarks.embed --sessions {{SCALE}} --embed {{EMBED}}

# CPU cost of metrics collection (issue 13) on HOME, e.g. a 10x corpus home from
# ../shared/tools/scale_home.py ../shared/corpus/home /tmp/b 10 (private temporary server).
[doc("CPU cost of metrics collection on HOME (issue 13)")]
bench-metrics HOME ROUNDS="20":
    python -m benchmarks.telemetry {{HOME}} --rounds {{ROUNDS}}

# Keyword-search evaluation on ../shared/corpus/home (private temporary server): hit@1, hit@5, MRR.
[doc("Keyword-search evaluation on the shared corpus: hit@1, hit@5, MRR")]
eval *ARGS:
    python -m agent_history.evaluation.search {{ARGS}}

# Regenerate the Grafana dashboards (dashboards/*.json) and the Prometheus rule and unit-test
# files (alerts/*.yml) from their Python builders.
[doc("Regenerate the Grafana dashboards and the Prometheus rule files")]
dashboards:
    python -m dashboards.generate

# Generated files match their builders; alert rules are valid and pass their promtool unit tests.
[doc("Generated files match their builders; alert rules pass promtool")]
check:
    python -m dashboards.generate --check
    promtool check rules alerts/agent-history.rules.yml
    promtool test rules alerts/agent-history.test.yml alerts/agent-history.test-10m.yml
