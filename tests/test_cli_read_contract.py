"""The read commands' contract on the real corpus, in subprocesses (issue 10): exit codes (0 found,
1 nothing found, 2 usage/config/database), one-line errors and warnings on stderr that never
wrap, and tables legible on an 80-column console (identifiers whole, paths cut in the middle)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.harnesses import ALIASES, NAMES
from tests.corpus_db import cli_environment, corpus_db, corpus_resident, served  # noqa: F401 - fixtures

PY = sys.executable
SESSION = "9e953218-585f-4692-89df-9e0747a31c68"  # claude-local: the tokenizer/submodule session
RELATIVE_RANGE = "a relative time reaches back at most 100 years (36525d, 876600h or 5217w)"


@pytest.fixture
def env(corpus_db, own_tmp, corpus_resident) -> dict[str, str]:  # noqa: F811
    """The test's own config over the module's catalogue; its read commands answered by the
    module's resident query process (`served`: output and exit codes those of the in-process
    path, tests/test_query_service.py)."""
    config = '[contexts]\ncorpus = ["claude-local", "codex-wrok"]\n'
    return served(
        cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, config=config, columns=80), corpus_resident
    )


def cli(*args: str, env: dict, columns: int = 80) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args],
        env={**env, "COLUMNS": str(columns)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def a_commit(db) -> str:
    with db.connect() as conn:
        return conn.execute("SELECT sha FROM ah.git_event WHERE op = 'commit' ORDER BY id LIMIT 1").fetchone()[0]


def test_every_read_command_exits_0_when_it_finds_something_and_1_when_not(env, corpus_db):  # noqa: F811
    sha = a_commit(corpus_db)
    cases = [
        (("search", "tokenizer submodule"), ("search", "zqxjvwq")),
        (("sessions",), ("sessions", "--since", "2099-01-01")),
        (("session", SESSION[:8], "--to", "1"), ("session", "ffffff0")),
        (("why", sha), ("why", "1234567")),
        (("touched", "**/*.py"), ("touched", "/nonexistent/**")),
    ]
    for found, nothing in cases:
        for extra in ((), ("--json",)):
            hit = cli(*found, *extra, env=env)
            assert hit.returncode == 0, (found, extra, hit.stdout[-300:], hit.stderr)
            miss = cli(*nothing, *extra, env=env)
            assert miss.returncode == 1, (nothing, extra, miss.stdout[-300:], miss.stderr)
            assert "Traceback" not in hit.stderr + miss.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sessions", "--since", "1000000d"), f"--since 1000000d is out of range: {RELATIVE_RANGE}"),
        (("search", "build", "--since", "1000000000h"), f"--since 1000000000h is out of range: {RELATIVE_RANGE}"),
        (("touched", "*", "--since", "1000000d"), f"--since 1000000d is out of range: {RELATIVE_RANGE}"),
        (
            ("search", "build", "--until", "9999-12-31"),
            "--until 9999-12-31 is out of range: dates and timestamps go from 0001-01-02 to 9999-12-30",
        ),
        (
            ("sessions", "--agent", "claud"),
            f"unknown agent 'claud' (accepted: {', '.join([*NAMES, *ALIASES])})",
        ),
    ],
)
def test_a_usage_error_is_one_unwrapped_line_and_exit_2(env, args, message):
    out = cli(*args, env=env)
    assert out.returncode == 2
    assert out.stderr == f"error: {message}\n"  # longer than 80 characters, still one line
    assert out.stdout == ""


def test_a_click_usage_error_is_not_a_wrapped_panel_off_a_terminal(env):
    out = cli("sessions", "--limit", "many", env=env)
    assert out.returncode == 2
    (error,) = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    # "valid int." is typer < 0.29's (click's) wording, "valid integer." typer 0.29's (pydantic's)
    assert error.removesuffix("eger.").removesuffix(
        "."
    ) == "Error: Invalid value for '--limit' / '-n': 'many' is not a valid int" or (
        "Invalid value for '--limit'" in error and len(error) > 80
    )
    assert "╭" not in out.stderr and "│" not in out.stderr


def test_config_mistakes_are_an_error_or_a_one_line_warning(env):
    config = Path(env["AGENT_HISTORY_CONFIG"])
    config.write_text('[database]\ndsnn = "host=/nowhere"\n')
    bad_key = cli("sessions", env=env)
    assert bad_key.returncode == 2
    assert bad_key.stderr == (
        f"error: config {config}: unknown key database.dsnn "
        "(known: dsn, reader_dsn, reader_password, writer_password, statement_timeout_ms, idle_stop_s)\n"
    )
    config.write_text('[databse]\ndsn = "host=/nowhere"\n')
    bad_section = cli("sessions", "-n", "1", env=env)
    assert bad_section.returncode == 0, bad_section.stderr
    assert bad_section.stderr == (
        f"warning: config {config}: unknown section [databse] ignored "
        "(known: database, sources, cold_sources, contexts, embedding, metrics, journal, web, litellm, memories, repos, identity, aider, crush, archive, index, host, plans, service)\n"
    )
    missing = cli("sessions", env={**env, "AGENT_HISTORY_CONFIG": str(config.parent / "nope.toml")})
    assert missing.returncode == 2
    assert missing.stderr == f"error: config file {config.parent / 'nope.toml'} (AGENT_HISTORY_CONFIG) does not exist\n"


def test_a_context_naming_a_namespace_without_files_warns_once_per_namespace(env):
    config = Path(env["AGENT_HISTORY_CONFIG"])
    out = cli("search", "tokenizer submodule", "--context", "corpus", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stderr == (
        f"warning: config {config}: contexts.corpus names namespace 'codex-wrok', which has no files in the catalogue\n"
    )
    assert json.loads(out.stdout)["hits"][0]["session_uid"] == SESSION  # the other namespace is still searched
    plain = cli("search", "tokenizer submodule", "--namespace", "claude-local", env=env)
    assert plain.stderr == ""


def _lines(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, out.stdout
    return lines


def test_sessions_at_80_columns_keep_each_uid_and_namespace_whole(env):
    rows = json.loads(cli("sessions", "-n", "10", "--json", env=env).stdout)
    lines = _lines(cli("sessions", "-n", "10", env=env))
    assert lines[0].split() == ["started", "agent", "session", "tokens", "cost", "duration", "subs", "tools", "hl"]
    firsts = [line for line in lines[1:] if not line.startswith("  ")]
    assert len(firsts) == len(rows) == 10
    for line, row in zip(firsts, rows, strict=True):
        assert line.split()[2:4] == [row["namespace"], row["session_uid"][:13]]
    titles = [line for line in lines[1:] if line.startswith("  ")]
    assert len(titles) == 10  # one line each, not four
    wide = cli("sessions", "-n", "10", env=env, columns=200).stdout.splitlines()
    assert wide[0].split()[:4] == ["started", "agent", "session", "title"]


def test_touched_at_80_columns_shows_every_path_on_its_own_line(env):
    data = json.loads(cli("touched", "**/*.py", "-n", "5", "--json", env=env).stdout)["sessions"]
    lines = _lines(cli("touched", "**/*.py", "-n", "5", env=env))
    assert lines[0].split() == ["last", "agent", "session", "ops"]
    shown = [line.strip() for line in lines if line.startswith("  ")]
    for session in data:
        for path in session["paths"][:5]:
            assert any(_is_path_or_its_shortening(s, path) for s in shown), path


def _is_path_or_its_shortening(shown: str, path: str) -> bool:
    if shown == path:
        return True
    head, sep, tail = shown.partition("…")
    return bool(sep) and path.startswith(head) and path.endswith(tail) and len(shown) < len(path)


def test_issues_at_80_columns_keep_the_kind_and_the_file_name(env):
    data = json.loads(cli("issues", "--json", env=env).stdout)
    # newest first: the post-pass's informational rows_shared (a resume's copy of one message
    # its original owns, db.tables.claims), then the parser's fused_line
    assert [r["kind"] for r in data] == ["rows_shared", "fused_line"]
    fused = data[1]
    lines = _lines(cli("issues", env=env))
    assert lines[0].split() == ["kind", "byte", "line"]
    i = next(n for n, line in enumerate(lines) if line.split()[:1] == ["fused_line"])
    assert lines[i].split() == ["fused_line", str(fused["byte_offset"]), str(fused["line_number"])]
    assert lines[i + 1].strip() == fused["detail"]
    assert _is_path_or_its_shortening(lines[i + 2].strip(), fused["path"])
    assert lines[i + 2].endswith(Path(fused["path"]).name[-40:])  # the session file's name survives


def test_status_at_80_columns_keeps_namespaces_and_issue_kinds_whole(env):
    out = cli("status", env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()  # the server line and the embeddings line are sentences (soft-wrapped)
    start = lines.index(next(x for x in lines if x.startswith("namespace")))
    table = lines[start : start + 5]
    assert max(len(line) for line in table) <= 80, out.stdout
    assert table[0].split() == ["namespace", "files", "sessions", "messages", "model", "calls", "tokens", "issues"]
    names = [line.split()[0] for line in table[2:5]]
    assert names == ["claude-local", "codex-local", "pi-local"]
    assert table[4].split()[-2:] == ["fused_line", "1"]
