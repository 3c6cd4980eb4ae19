"""CLI start-up stays cheap (issue 18) — asserted structurally, never by timing: which modules a
command imports, that the revision chain known without alembic matches the migration files, and
that the lazy command map names every registered command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.cli.app import COMMAND_MODULES, command_name

REPO = Path(__file__).resolve().parents[1]

# Run `main()` as the console script would, then report which top-level packages were imported.
_WRAPPER = """
import importlib.util, json, sys
from agent_history.cli.app import main
sys.argv = ["agent-history", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
with open(OUT, "w") as fh:
    # a module registered by `agent_history.lazy` but never touched has not run: not imported
    full = {m for m, mod in list(sys.modules.items()) if not isinstance(mod, importlib.util._LazyModule)}
    loaded = {m.split(".")[0] for m in full}
    json.dump({"code": code, "modules": sorted(loaded), "full": sorted(full)}, fh)
"""

HEAVY = {"alembic", "sqlalchemy", "mcp", "torch", "opentelemetry", "sentence_transformers", "httpx", "tenacity"}


def _run(args: list[str], tmp_path: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", f"OUT = {str(out)!r}\n" + _WRAPPER, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert out.exists(), proc.stderr
    return proc, json.loads(out.read_text())


def test_command_map_names_exactly_the_registered_commands():
    from agent_history.cli import app as app_module

    app_module._register()
    root = app_module.app
    names = {c.name or c.callback.__name__ for c in root.registered_commands}
    names |= {g.name for g in root.registered_groups}
    assert names == set(COMMAND_MODULES)
    for command, module in COMMAND_MODULES.items():
        assert module in (*app_module.MODULES, "db"), command


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "pool"], "search"),
        (["--dsn", "postgresql:///x", "sessions", "--json"], "sessions"),
        (["--dsn=postgresql:///x", "db", "status"], "db"),
        (["--help"], None),
        ([], None),
        (["--", "status"], "status"),
    ],
)
def test_command_name_skips_root_options(argv, expected):
    assert command_name(argv) == expected


def test_version_imports_neither_typer_nor_any_database_library(tmp_path):
    proc, seen = _run(["--version"], tmp_path)
    assert proc.stdout == "agent-history 0.1.0\n"
    assert seen["code"] == 0
    assert not (set(seen["modules"]) & (HEAVY | {"typer", "psycopg", "rich", "pydantic"})), seen["modules"]


def test_search_imports_no_migration_mcp_model_or_http_library(tmp_path, cli_env):
    proc, seen = _run(["search", "zyxwvut-not-there", "--json"], tmp_path, env=cli_env)
    assert seen["code"] == 1, proc.stderr  # nothing found, on a migrated empty catalogue
    modules = set(seen["modules"])
    assert {"typer", "psycopg"} <= modules
    assert not (modules & HEAVY), modules & HEAVY


# What a keyword `search` has no use for (issue 18): the row dataclasses (written by the loader), the
# embedding modules and vector branch (only with embeddings on), the warm service's client.
SEARCH_UNUSED = {"agent_history.model.rows", "agent_history.embed.provider", "agent_history.embed.store",
                 "agent_history.embed.chunking", "agent_history.embed.redact", "agent_history.embed.service",
                 "agent_history.search.vector", "agent_history.ingest"}  # fmt: skip


def test_keyword_search_imports_no_row_model_embedding_modules_or_pydantic(tmp_path, cli_env):
    from importlib.metadata import version

    proc, seen = _run(["search", "zyxwvut-not-there", "--json"], tmp_path, env=cli_env)
    assert seen["code"] == 1, proc.stderr
    assert not (set(seen["full"]) & SEARCH_UNUSED), set(seen["full"]) & SEARCH_UNUSED
    # typer ≥ 0.29 validates every parameter through pydantic (typer._adapters, a hard dependency
    # since 0.29.0); pyproject pins typer < 0.29, under which nothing on this path imports it
    if tuple(int(p) for p in version("typer").split(".")[:2]) < (0, 29):
        assert "pydantic" not in seen["modules"]


def test_embed_service_status_loads_no_model(tmp_path, cli_env):
    proc, seen = _run(["embed-service", "status", "--json"], tmp_path, env=cli_env)
    assert seen["code"] == 0, proc.stderr
    assert json.loads(proc.stdout)["running"] is False
    assert not (set(seen["modules"]) & {"torch", "sentence_transformers", "alembic", "sqlalchemy"})


def test_parse_does_not_connect_or_import_psycopg(tmp_path, corpus_home):
    path = next((corpus_home / ".codex" / "sessions").rglob("*.jsonl"))
    proc, seen = _run(["parse", str(path), "--json"], tmp_path)
    assert seen["code"] == 0, proc.stderr
    assert json.loads(proc.stdout)
    assert not (set(seen["modules"]) & (HEAVY | {"psycopg"})), set(seen["modules"]) & (HEAVY | {"psycopg"})


def test_embedded_server_is_tuned_once_for_small_wal(pg_server):
    import psycopg

    from agent_history.db import embedded

    admin = pg_server.dsn()
    with psycopg.connect(admin) as conn:
        # what the start wrote to postgresql.auto.conf (the reload itself is asynchronous)
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_file_settings "
                "WHERE sourcefile LIKE '%%postgresql.auto.conf' AND name = ANY(%s)",
                (list(embedded.SERVER_SETTINGS),),
            ).fetchall()
        )
    assert settings["max_wal_size"] == "64MB"
    assert settings["min_wal_size"] == "32MB"
    # never pglz: its CPU outweighs the WAL it saves (off is the server default, so not written)
    assert settings.get("wal_compression", "off") in ("lz4", "zstd", "off")
    assert settings.get("default_toast_compression", "pglz") in ("lz4", "pglz")  # pglz is the default
    assert embedded._tune(admin) == set()  # already applied at start: nothing to change
