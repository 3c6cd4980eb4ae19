# agent-history developer recipes. Install first: pip install -e '.[test]' rust-just

set shell := ["bash", "-euo", "pipefail", "-c"]

# Run the whole test suite (pytest exits non-zero on failures and when no test ran).
test *ARGS:
    python -m pytest -q {{ARGS}}

# Lint with ruff.
lint:
    ruff check agent_history tests migrations benchmarks

# Format with ruff.
fmt:
    ruff format agent_history tests migrations benchmarks
    ruff check --fix agent_history tests migrations benchmarks

# Ingest and query benchmarks on a synthetic corpus (not timed tests). SCALE = sessions.
bench SCALE="2000":
    python -m benchmarks.ingest --sessions {{SCALE}}
