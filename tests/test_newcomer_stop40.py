"""Newcomer stop 40: what a new user found by putting symlink loops, odd data dirs and odd paths
in front of `index`, the commands that start the embedded server, `service start` and `blame`
(installed from the README into a fresh venv, a copy of the shared corpus as HOME). Each finding
is pinned with its exact output:

- A symlink loop below an agent home (``a -> b``, ``b -> a``) made `index` fail with exit 2,
  "[Errno 40] Too many levels of symbolic links", indexing nothing (`os.DirEntry.is_dir` raises
  ELOOP where it answers False for a dangling link): now each link is named like any symlink
  ("symlink (not followed)") and the rest of the home is indexed.
- ``index --source claude-x=LOOP`` (the home itself a loop) was a RuntimeError traceback from
  `Path.resolve`: now "warning: skipped claude-x: LOOP is a symlink loop", the rest indexed.
- ``AGENT_HISTORY_DATA_DIR`` naming a symlink loop was a RuntimeError traceback from every
  command; one naming a file said "cannot be created: File exists". Now one line, exit 2: "data
  dir LOOP: a symlink loop" / "data dir FILE is not a directory"; ``service status`` answers.
- ``service start`` over a data dir it cannot use (a file, a loop) or whose socket path is past
  the AF_UNIX limit waited its whole 60 s and then pointed at a log that cannot exist: now it
  says why at once (exit 2, a configuration problem).
- ``blame NAME`` with a name past the file system's limit said "[Errno 36] File name too long"
  from the CLI and logged a traceback from the MCP tool; a symlink loop said "no such file".
  Now "cannot read NAME: <the system's reason>" from both, exit 2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_history.cli.resident_control import ServiceCannotStart, start_service
from agent_history.echo import ECHO_LIMIT, clip_echoes
from agent_history.ingest.discovery import Source, iter_files, missing_home_reason
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.mcp_client import call, server_env

PY = sys.executable
TRANSCRIPT = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl"  # a one-session Claude Code transcript


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120)


def _loop(a: Path, b: Path) -> None:
    """Two symlinks naming each other (resolving either is ELOOP)."""
    a.symlink_to(b)
    b.symlink_to(a)


def _no_server_env(tmp: Path, data_dir: Path) -> dict[str, str]:
    """A CLI environment with no DSN (the embedded server's path), `data_dir` as the data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_") and k != "COLUMNS"}
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "config.toml").write_text("")
    env.update(
        HOME=str(tmp / "home"),
        AGENT_HISTORY_CONFIG=str(tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(data_dir),
        AGENT_HISTORY_QUERY_IDLE_S="0",
    )
    return env


def test_walking_a_home_names_a_symlink_loop_and_yields_the_rest(tmp_path, corpus_home):
    projects = tmp_path / ".claude" / "projects"
    (projects / "-p").mkdir(parents=True)
    shutil.copy(next((corpus_home / ".claude" / "projects").rglob(TRANSCRIPT)), projects / "-p" / TRANSCRIPT)
    _loop(projects / "loopa", projects / "loopb")
    skipped: list[str] = []
    refs = list(iter_files(Source("claude-local", "claude", tmp_path / ".claude"), skipped))
    assert [r.rel_path for r in refs] == [f"projects/-p/{TRANSCRIPT}"]
    assert skipped == [
        f"{projects / 'loopa'}: symlink (not followed)",
        f"{projects / 'loopb'}: symlink (not followed)",
    ]


def test_missing_home_reason_tells_a_loop_from_a_missing_path(tmp_path):
    _loop(tmp_path / "a", tmp_path / "b")
    assert missing_home_reason(tmp_path / "a") == "is a symlink loop"
    assert missing_home_reason(tmp_path / "nothing") == "does not exist"
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    assert missing_home_reason(tmp_path / "dangling") == "does not exist"


def test_index_over_a_home_with_a_symlink_loop_indexes_the_rest_and_names_the_links(db, own_tmp, corpus_home):
    env = cli_environment(own_tmp, db.dsn, db.reader_dsn, columns=200)
    projects = own_tmp / "copy" / ".claude" / "projects"
    (projects / "-p").mkdir(parents=True)
    shutil.copy(next((corpus_home / ".claude" / "projects").rglob(TRANSCRIPT)), projects / "-p" / TRANSCRIPT)
    _loop(projects / "loopa", projects / "loopb")
    r = cli(env, "index", "--home", str(own_tmp / "copy"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("indexed: 1 file scanned, 2 skipped, 1 changed"), r.stdout
    assert r.stderr.splitlines() == [
        f"skipped {projects / 'loopa'}: symlink (not followed)",
        f"skipped {projects / 'loopb'}: symlink (not followed)",
    ]


def test_a_source_that_is_a_symlink_loop_is_a_warning_and_the_rest_is_indexed(db, own_tmp, corpus_home):
    env = cli_environment(own_tmp, db.dsn, db.reader_dsn, columns=200)
    projects = own_tmp / "copy" / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    shutil.copy(next((corpus_home / ".claude" / "projects").rglob(TRANSCRIPT)), projects / TRANSCRIPT)
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    r = cli(env, "index", "--home", str(own_tmp / "copy"), "--source", f"claude-x={own_tmp / 'loopa'}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("indexed: 1 file scanned, 1 changed"), r.stdout
    assert r.stderr.splitlines() == [f"warning: skipped claude-x: {own_tmp / 'loopa'} is a symlink loop"]


@pytest.mark.parametrize("command", [("status",), ("search", "x"), ("index",), ("db", "status"), ("db", "stop")])
def test_a_data_dir_that_is_a_symlink_loop_is_one_line_exit_2(own_tmp, command):
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    r = cli(_no_server_env(own_tmp, own_tmp / "loopa"), *command)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: data dir {own_tmp / 'loopa'}: a symlink loop\n")


def test_a_data_dir_that_is_a_file_says_so(own_tmp):
    (own_tmp / "data").write_text("not a directory\n")
    r = cli(_no_server_env(own_tmp, own_tmp / "data"), "status")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: data dir {own_tmp / 'data'} is not a directory\n")


def test_service_status_over_a_data_dir_that_is_a_symlink_loop_answers(own_tmp):
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    r = cli(_no_server_env(own_tmp, own_tmp / "loopa"), "service", "status")
    log = own_tmp / "loopa" / "query-service" / "service.log"
    assert (r.returncode, r.stdout, r.stderr) == (0, f"resident query process not running; log {log}\n", "")


def test_service_start_says_at_once_why_it_cannot_start_in_a_file_or_a_loop(own_tmp):
    (own_tmp / "file").write_text("x")
    with pytest.raises(ServiceCannotStart) as err:
        start_service(own_tmp / "file", 60.0)
    assert (
        str(err.value)
        == f"the resident query process cannot start: {own_tmp / 'file' / 'query-service'}: Not a directory"
    )
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    with pytest.raises(ServiceCannotStart) as err:
        start_service(own_tmp / "loopa", 60.0)
    where = own_tmp / "loopa" / "query-service"
    assert str(err.value) == f"the resident query process cannot start: {where}: Too many levels of symbolic links"


def test_service_start_says_at_once_that_a_socket_path_is_too_long(own_tmp):
    deep = own_tmp / ("d" * 100)
    size = len(os.fsencode(deep / "query-service" / "service.sock"))
    with pytest.raises(ServiceCannotStart) as err:
        start_service(deep, 60.0)
    assert str(err.value) == (
        f"the resident query process cannot listen in {deep}: its socket path would be {size} bytes, past the "
        "limit of 107 (commands run in process; a shorter AGENT_HISTORY_DATA_DIR lets it start)"
    )
    assert not deep.exists()  # nothing created where nothing can run


def test_service_start_from_the_cli_is_exit_2_over_a_data_dir_that_is_a_file(own_tmp):
    (own_tmp / "data").write_text("x")
    env = _no_server_env(own_tmp, own_tmp / "data") | {"AGENT_HISTORY_QUERY_IDLE_S": "60"}  # nothing can start there
    r = cli(env, "service", "start")
    where = own_tmp / "data" / "query-service"
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"error: the resident query process cannot start: {where}: Not a directory\n"


def test_blame_of_a_name_too_long_a_loop_or_a_file_as_directory_is_one_line(corpus_db, own_tmp):  # noqa: F811
    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=200)
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    (own_tmp / "file").write_text("x\n")
    long = "a" * 300
    shown = f"{'a' * 200}… (300 bytes)"  # an echoed value past 200 characters is cut (cli.echo, stop 41)
    for target, said in [
        (long, f"cannot read {shown}: File name too long"),
        (f"{long}:3", f"cannot read {shown}: File name too long"),
        (str(own_tmp / "loopa"), f"cannot read {own_tmp / 'loopa'}: Too many levels of symbolic links"),
        (str(own_tmp / "file" / "x.py"), f"cannot read {own_tmp / 'file' / 'x.py'}: Not a directory"),
        (str(own_tmp / "missing.py"), f"no such file: {own_tmp / 'missing.py'}"),
    ]:
        r = cli(env, "blame", target)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {said}\n"), target


def test_the_mcp_blame_tool_answers_a_name_too_long_with_one_line(corpus_db, own_tmp):  # noqa: F811
    env = server_env(corpus_db.dsn, corpus_db.reader_dsn, own_tmp)
    bad = call(env, "blame", {"path": "/" + "a" * 300})
    assert bad.is_error
    # the path cut past 200 characters as the CLI's blame line cuts it (one rule, stop 42)
    assert bad.text.endswith(f"cannot read {('/' + 'a' * 300)[:ECHO_LIMIT]}… (301 bytes): File name too long"), bad.text


def test_an_mcp_error_quoting_a_huge_argument_is_clipped_saying_how_long_it_was(corpus_db, own_tmp):  # noqa: F811
    from agent_history.mcp.tools import ToolFailure, validate_arguments
    from agent_history.mcp.tools.search import TOOLS

    huge = "a" * 100_000
    with pytest.raises(ToolFailure) as err:  # the whole message, as the tool's check words it
        validate_arguments(next(t for t in TOOLS if t.name == "search"), {"query": "x", "mode": huge})
    full = str(err.value)
    assert full.startswith("invalid mode for search: 'aaa") and len(full) > 100_000
    bad = call(server_env(corpus_db.dsn, corpus_db.reader_dsn, own_tmp), "search", {"query": "x", "mode": huge})
    assert bad.is_error
    assert bad.text == clip_echoes(full)  # the CLI's rule (stop 42; was: its first 1,000 characters)
    assert bad.text.startswith(f"invalid mode for search: '{'a' * (ECHO_LIMIT - 1)}…' (100,000 bytes) is not one of ")
    assert len(bad.text) < 500


@pytest.mark.parametrize(
    ("command", "value", "shown"),
    [("index", "nan", "nan"), ("index", "1e400", "inf"), ("archive", "inf", "inf"), ("collect", "nan", "nan"),
     ("embed", "nan", "nan"), ("journal-sync", "inf", "inf")],
)  # fmt: skip
def test_every_nan_or_inf_is_a_usage_error_not_a_loop_that_never_waits(own_tmp, command, value, shown):
    r = cli(_no_server_env(own_tmp, own_tmp / "data"), command, "--every", value)
    assert (r.returncode, r.stdout) == (2, "")
    usage, hint, blank, error = r.stderr.splitlines()  # click's usage error (the program named as run)
    assert (
        usage.startswith("Usage: ")
        and f" {command} [OPTIONS]" in usage
        and hint.endswith(f" {command} --help' for help.")
    )
    assert (blank, error) == ("", f"Error: Invalid value for '--every': {shown} is not a number of seconds (1 or more)")
    assert not (own_tmp / "data").exists()  # refused before anything started


def test_every_still_takes_a_finite_number_of_seconds():
    from agent_history.cli.loop import every_seconds

    assert (every_seconds(None), every_seconds(1.0), every_seconds(86_400.0)) == (None, 1.0, 86_400.0)


def test_claude_export_that_cannot_be_an_export_is_one_line_before_anything_starts(own_tmp):
    import zipfile

    env = _no_server_env(own_tmp, own_tmp / "data")
    (own_tmp / "unzipped" / "nested").mkdir(parents=True)  # conversations.json one level too deep
    (own_tmp / "unzipped" / "nested" / "conversations.json").write_text("[]")
    with zipfile.ZipFile(own_tmp / "export.zip", "w") as z:
        z.writestr("conversations.json", "[]")
    os.mkfifo(own_tmp / "fifo")
    for given, said in [
        ("unzipped", "holds no conversations.json (give the unzipped export's folder, or the file)"),
        ("export.zip", "is a zip archive: unzip it and give its folder (or its conversations.json)"),
        ("fifo", "is not a regular file"),
    ]:
        r = cli(env, "index", "--claude-export", str(own_tmp / given))
        assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: --claude-export {own_tmp / given} {said}\n")
    assert not (own_tmp / "data").exists()  # refused before the server started


def test_claude_export_folder_or_file_is_still_indexed(db, own_tmp):
    env = cli_environment(own_tmp, db.dsn, db.reader_dsn, columns=200)
    (own_tmp / "export").mkdir()
    (own_tmp / "export" / "conversations.json").write_text("[]")
    for given in (own_tmp / "export", own_tmp / "export" / "conversations.json"):
        r = cli(env, "index", "--claude-export", str(given))
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("indexed: 1 file scanned"), r.stdout


EXPORTED = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"  # a corpus session (Claude Code, JSSoundRecorder)


def test_export_out_through_a_symlink_writes_the_file_it_names_and_keeps_the_link(corpus_db, own_tmp):  # noqa: F811
    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=200)
    dots = own_tmp / "dotfiles"
    dots.mkdir()
    (dots / "notes.md").write_text("old\n")
    (dots / "notes.md").chmod(0o644)
    (own_tmp / "notes.md").symlink_to(dots / "notes.md")
    stdout = cli(env, "export", EXPORTED).stdout
    r = cli(env, "export", EXPORTED, "--out", str(own_tmp / "notes.md"), "--force")
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"wrote {own_tmp / 'notes.md'} ({len(stdout.encode()):,} bytes)\n"
    assert (own_tmp / "notes.md").is_symlink() and (own_tmp / "notes.md").resolve() == dots / "notes.md"
    assert (dots / "notes.md").read_text() == stdout
    assert oct((dots / "notes.md").stat().st_mode & 0o777) == "0o644"  # its mode kept
    assert sorted(p.name for p in dots.iterdir()) == ["notes.md"]  # no temporary file left


def test_export_out_onto_a_symlink_loop_is_refused_and_the_links_stay(corpus_db, own_tmp):  # noqa: F811
    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=200)
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    r = cli(env, "export", EXPORTED, "--out", str(own_tmp / "loopa"))
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        "",
        f"error: cannot write --out {own_tmp / 'loopa'}: a symlink loop\n",
    )
    assert os.readlink(own_tmp / "loopa") == str(own_tmp / "loopb")  # before: replaced by the export


def test_journal_sync_says_what_a_source_that_is_not_a_file_is(db, own_tmp):
    env = cli_environment(own_tmp, db.dsn, db.reader_dsn, columns=200)
    (own_tmp / "journal-dir").mkdir()
    _loop(own_tmp / "loopa", own_tmp / "loopb")
    os.mkfifo(own_tmp / "fifo")
    for given, said in [
        ("journal-dir", "is a directory"),  # before: "does not exist" for all three
        ("loopa", "is a symlink loop"),
        ("fifo", "is not a regular file"),
        ("missing.db", "does not exist"),
    ]:
        r = cli(env, "journal-sync", "--source", str(own_tmp / given))
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        assert r.stderr == f"journal-sync skipped (source_missing): journal file {own_tmp / given} {said}\n"


BUSY_THEN_DONE = """
import sys
from pathlib import Path
tries = Path(sys.argv[1])
n = int(tries.read_text() or 0) + 1 if tries.exists() else 1
tries.write_text(str(n))
print("another index pass is running (it is indexing claude-local)")  # stdout: nobody reads it
if n <= int(sys.argv[2]):
    sys.exit(75)
print(f"indexed on try {n}", file=sys.stderr)
"""


def test_the_hook_relay_runs_a_busy_index_again_until_it_is_done(tmp_path):
    from agent_history.connect.relay import relay

    log = tmp_path / "hook.log"
    command = [PY, "-c", BUSY_THEN_DONE, str(tmp_path / "tries"), "2"]
    assert relay("claude", str(log), command, waits=(0.01, 0.01, 0.01)) == 0
    assert (tmp_path / "tries").read_text() == "3"  # busy, busy, done: before, the first 75 was the end
    (line,) = log.read_text().splitlines()
    assert line.endswith(" hook claude: indexed on try 3")


def test_the_hook_relay_says_in_the_log_when_it_gives_up_on_a_busy_namespace(tmp_path):
    from agent_history.connect.relay import relay

    log = tmp_path / "hook.log"
    command = [PY, "-c", BUSY_THEN_DONE, str(tmp_path / "tries"), "99", "/home/me/.claude/projects/-p/s.jsonl"]
    assert relay("claude", str(log), command, waits=(0.01, 0.02)) == 75
    assert (tmp_path / "tries").read_text() == "3"
    (line,) = log.read_text().splitlines()
    assert line.endswith(
        " hook claude: another index pass kept the namespace busy for 0.03 s: /home/me/.claude/projects/-p/s.jsonl "
        "not indexed now (the session's next turn or the next `index` indexes it)"
    )


def test_verify_over_a_wrong_archive_path_refuses_and_marks_no_copy_bad(db, own_tmp, corpus_home):
    env = cli_environment(own_tmp, db.dsn, db.reader_dsn, columns=200)
    projects = own_tmp / "copy" / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    shutil.copy(next((corpus_home / ".claude" / "projects").rglob(TRANSCRIPT)), projects / TRANSCRIPT)
    config = Path(env["AGENT_HISTORY_CONFIG"])
    config.write_text(f'[archive]\npath = "{own_tmp / "archive"}"\n')
    made = cli(env, "archive", "--home", str(own_tmp / "copy"))
    assert made.returncode == 0, made.stderr
    config.write_text(f'[archive]\npath = "{own_tmp / "unmounted"}"\n')  # a typo, a disk not mounted
    r = cli(env, "archive", "--verify")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        f"error: archive path {own_tmp / 'unmounted'} does not exist: nothing verified or recorded (1 copy is "
        "listed under it: is [archive] path the one they were written to, and is it mounted?)\n"
    )
    config.write_text(f'[archive]\npath = "{own_tmp / "archive"}"\n')
    status = cli(env, "status")
    assert " bad (run" not in status.stdout  # before: "1 bad (run `archive --verify`)"
    ok = cli(env, "archive", "--verify")
    assert (ok.returncode, ok.stdout.splitlines()[0]) == (0, "verified 1 copy (0.0 MB hashed): 0 bad"), ok.stderr


def test_a_client_in_the_c_locale_is_answered_in_process_not_by_a_server_in_another_text_mode(corpus_db, own_tmp):  # noqa: F811
    """``LC_ALL=C`` (cron, ssh, containers) starts Python in UTF-8 mode; the resident child of a
    server started in a UTF-8 locale took the client's locale and read the package's SQL files
    as ASCII: a UnicodeDecodeError traceback from every read command. The server now refuses a
    client of another UTF-8 mode (it runs in process, as it does for any refusal)."""
    from agent_history.cli.resident_control import service_status

    env = cli_environment(own_tmp, corpus_db.dsn, corpus_db.reader_dsn, columns=200)
    env.pop("LC_ALL", None)
    server_env = {**env, "LANG": "C.UTF-8", "PYTHONUTF8": "0", "AGENT_HISTORY_QUERY_IDLE_S": "120"}
    client_env = {k: v for k, v in server_env.items() if k != "PYTHONUTF8"} | {"LC_ALL": "C"}
    expected = cli(env, "search", "tokenizer", "--limit", "2")  # in process (idle 0)
    assert expected.returncode == 0, expected.stderr
    try:
        started = cli(server_env, "service", "start")
        assert started.returncode == 0, started.stderr
        got = cli(client_env, "search", "tokenizer", "--limit", "2")
        assert (got.returncode, got.stdout, got.stderr) == (0, expected.stdout, expected.stderr)
        assert service_status(own_tmp / "data")["requests"] == 0  # refused: answered in process
        same_mode = cli(server_env, "search", "tokenizer", "--limit", "2")
        assert same_mode.stdout == expected.stdout
        assert service_status(own_tmp / "data")["requests"] == 1
    finally:
        cli(server_env, "service", "stop")


def test_the_schema_files_are_read_as_utf8_whatever_the_locale():
    """`sql/40_search.sql` holds non-ASCII comments (``Français``): read in a Latin-1 or ASCII
    locale, its text and so its recorded hash differed, and every command re-applied the SQL."""
    code = "from agent_history.db import migrate; migrate._sql_files(); migrate.revision_graph()"
    r = subprocess.run(
        [PY, "-X", "warn_default_encoding", "-W", "error::EncodingWarning", "-c", code],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
    )  # fmt: skip
    assert (r.returncode, r.stderr) == (0, "")
