"""A whole `index` pass through the resident query process (`cli.resident`, `cli.resident_server`;
issue 27): real CLI subprocesses, a real server on a real unix socket, real databases.

Each pass runs in process (``AGENT_HISTORY_QUERY_IDLE_S=0``) and through the resident process on
equal catalogues; stdout, stderr and the exit code must be byte for byte the same (a pass's
duration aside); the server's request counter proves which path answered. A pass stopped by
Ctrl-C, a pass that finds another one running (exit 75) and a pass still running when the server
is told to stop behave as in process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from agent_history.cli import resident
from agent_history.cli.resident_control import paths_of, service_status
from agent_history.ingest.pass_locks import INDEX_LOCK
from tests.conftest import clone_database, drop_database
from tests.procinfo import cli_on_pty

PY = sys.executable
SMALL_PROJECT = Path(".claude") / "projects" / "-experiments-ideas"  # two short Claude Code sessions
WAIT_S = 120.0  # an upper bound for a server to preload or a pass to reach a point; polled
INTERRUPTED = "interrupted: the files indexed so far are committed; run index again to finish"


@pytest.fixture(scope="module")
def server_dir():
    """A data dir whose resident process serves every test here (each request brings its own
    environment: its database, its home), stopped afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-resident-index-"))
    (tmp / "config.toml").touch()
    env = _env(tmp, dsn="", reader_dsn="", home=tmp)
    yield tmp
    subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=env, capture_output=True, timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)


def _env(tmp: Path, *, dsn: str, reader_dsn: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_") and k != "COLUMNS"}
    env.update(AGENT_HISTORY_CONFIG=str(tmp / "config.toml"), AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
               HOME=str(home), AGENT_HISTORY_QUERY_IDLE_S="300")  # fmt: skip
    if dsn:
        env.update(AGENT_HISTORY_DSN=dsn, AGENT_HISTORY_READER_DSN=reader_dsn)
    return env


@pytest.fixture
def two_catalogues(pg_server, server_dir, corpus_home, own_tmp):
    """Two databases and one home (a small Claude Code project of the corpus): the first indexed
    once from it in process, the second a copy of it (``CREATE DATABASE … TEMPLATE``, instead of a
    second CLI pass of the same files): equal catalogues for the two ways of a pass."""
    home = own_tmp / "home"
    shutil.copytree(corpus_home / SMALL_PROJECT, home / SMALL_PROJECT)
    dbs = [clone_database(pg_server)]
    started = cli(
        _env(server_dir, dsn=dbs[0].dsn, reader_dsn=dbs[0].reader_dsn, home=home), "service", "start", "--json"
    )
    assert started.returncode == 0, started.stderr
    first = cli(_env(server_dir, dsn=dbs[0].dsn, reader_dsn=dbs[0].reader_dsn, home=home), "index", resident_on=False)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(b"indexed: 2 files scanned, 2 changed")
    dbs.append(clone_database(pg_server, template=dbs[0].name))
    envs = [_env(server_dir, dsn=d.dsn, reader_dsn=d.reader_dsn, home=home) for d in dbs]
    yield home, envs, dbs
    for d in dbs:
        drop_database(d)


def cli(env: dict, *args: str, resident_on: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args],
        env={**env, "AGENT_HISTORY_QUERY_IDLE_S": env["AGENT_HISTORY_QUERY_IDLE_S"] if resident_on else "0"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
    )


def requests(env: dict) -> int | None:
    """Commands the running server has served, None when none runs."""
    status = service_status(Path(env["AGENT_HISTORY_DATA_DIR"]))
    return status.get("requests") if status["running"] else None


def running(env: dict) -> int | None:
    """Commands the server is running now (None: no answer)."""
    status = resident.ask_status(str(paths_of(Path(env["AGENT_HISTORY_DATA_DIR"])).socket))
    return None if status is None else status["running_commands"]


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def without_durations(out: bytes) -> bytes:
    """A pass's output with its durations taken out (the one figure that differs run to run)."""
    out = re.sub(rb"; [0-9.]+ s$", b"", out, flags=re.M)
    return re.sub(rb'"(elapsed|duration|seconds)[a-z_]*": [0-9.]+', b"", out)


def same(inside: subprocess.CompletedProcess, served: subprocess.CompletedProcess) -> None:
    assert (served.returncode, without_durations(served.stdout), served.stderr) == (
        inside.returncode,
        without_durations(inside.stdout),
        inside.stderr,
    )
    assert b"Traceback" not in inside.stderr


@pytest.mark.parametrize("args", [(), ("--json",), ("--verbose",)], ids=["plain", "json", "verbose"])
def test_a_pass_with_no_changes_is_byte_identical_through_the_resident_process(two_catalogues, args):
    _home, envs, _dbs = two_catalogues
    before = requests(envs[0])
    inside = cli(envs[0], "index", *args, resident_on=False)
    assert requests(envs[0]) == before  # in process: the server saw nothing
    served = cli(envs[1], "index", *args)
    assert requests(envs[0]) == before + 1  # this one it ran
    same(inside, served)
    if args == ("--json",):
        summary = json.loads(served.stdout)
        assert (summary["files_scanned"], summary["files_changed"], summary["bytes_read"]) == (2, 0, 0)
    else:
        assert served.stdout.startswith(b"indexed: 2 files scanned, 0 changed, 0.0 MB read; rows: none;")


def test_a_pass_with_one_changed_file_is_byte_identical_through_the_resident_process(two_catalogues):
    home, envs, dbs = two_catalogues
    transcript = sorted((home / SMALL_PROJECT).glob("*.jsonl"))[0]
    lines = transcript.read_bytes().splitlines(keepends=True)
    with transcript.open("ab") as f:  # the session goes on: a copy of its last line, a new uuid
        record = json.loads(lines[-1])
        record["uuid"] = "0d8b6a3e-6a43-4c2b-9d0b-5f2f6f0e7a11"
        f.write(json.dumps(record).encode() + b"\n")
    before = requests(envs[0])
    inside = cli(envs[0], "index", resident_on=False)
    served = cli(envs[1], "index")
    assert requests(envs[0]) == before + 1
    same(inside, served)
    assert served.stdout.startswith(b"indexed: 2 files scanned, 1 changed, ")
    counts = []
    for d in dbs:
        with d.connect() as conn:
            counts.append(conn.execute("SELECT count(*), max(files_changed) FROM ah.index_run").fetchone())
    assert counts[0] == counts[1] == (2, 2)  # the first pass (2 new files) and this one, in each


def _on_pty(env: dict, args: tuple[str, ...], columns: int = 100) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pty of `columns` columns; (exit code, bytes)."""
    return cli_on_pty(args, {**env, "TERM": "xterm-256color"}, columns=columns, timeout=300)


def test_on_a_terminal_the_progress_display_runs_in_the_resident_child_too(two_catalogues):
    """On a terminal a pass shows its progress bar (rich hides the cursor while it draws and
    shows it again at the end: the bar is transient) and then the summary line — through the
    resident process as in process (the frames themselves depend on timing)."""
    _home, envs, _dbs = two_catalogues
    before = requests(envs[0])
    inside = _on_pty({**envs[0], "AGENT_HISTORY_QUERY_IDLE_S": "0"}, ("index",))
    served = _on_pty(envs[1], ("index",))
    assert requests(envs[0]) == before + 1
    for code, out in (inside, served):
        assert code == 0
        assert b"\x1b[?25l" in out and b"\x1b[?25h" in out  # the progress display was on
    last = [re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", out).strip().splitlines()[-1] for _, out in (inside, served)]
    assert without_durations(last[0]) == without_durations(last[1])
    assert last[1].startswith(b"indexed: 2 files scanned, 0 changed, 0.0 MB read; rows: none;")


def test_another_pass_running_exits_75_through_the_resident_process(two_catalogues):
    _home, envs, dbs = two_catalogues
    holders = []
    try:
        for d in dbs:  # the lock every pass shares, held exclusively (as a bulk load or a rebuild)
            holder = psycopg.connect(d.dsn, autocommit=True)
            holder.execute("SELECT pg_advisory_lock(%s)", (INDEX_LOCK,))
            holders.append(holder)
        before = requests(envs[0])
        inside = cli(envs[0], "index", resident_on=False)
        served = cli(envs[1], "index")
        assert requests(envs[0]) == before + 1
    finally:
        for holder in holders:
            holder.close()
    same(inside, served)
    assert served.returncode == 75
    assert served.stdout == b"another index pass is running (a bulk load or rebuild holds every namespace)\n"


def test_every_and_archive_and_help_stay_in_process():
    assert resident.eligible(["index"])
    assert resident.eligible(["index", "--home", "/h", "--json"])
    assert not resident.eligible(["index", "--every", "60"])
    assert not resident.eligible(["index", "--every=60"])
    assert not resident.eligible(["index", "--archive"])
    assert not resident.eligible(["index", "--help"])
    assert not resident.eligible(["rebuild"])


@pytest.fixture
def long_pass(pg_server, server_dir, corpus_home):
    """A fresh database and the whole corpus home read 3 lines per batch: a pass of minutes,
    stopped by the test."""
    database = clone_database(pg_server)
    env = _env(server_dir, dsn=database.dsn, reader_dsn=database.reader_dsn, home=corpus_home)
    env["AGENT_HISTORY_BATCH_LINES"] = "3"
    started = cli(env, "service", "start", "--json")
    assert started.returncode == 0, started.stderr
    yield env, database
    drop_database(database)


def _start_pass(env: dict, database) -> subprocess.Popen:
    """`index` through the resident process, returned once its child has committed rows."""
    proc = subprocess.Popen([PY, "-m", "agent_history", "index"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    wait_for(lambda: running(env) == 1 or proc.poll() is not None, "the pass to run in the server")
    with database.connect(autocommit=True) as conn:
        wait_for(
            lambda: proc.poll() is not None or conn.execute("SELECT count(*) FROM ah.message").fetchone()[0] > 0,
            "the first batch",
        )
    assert proc.poll() is None, "the pass ended before it was interrupted"
    return proc


def _last_run(database) -> str:
    with database.connect() as conn:
        return conn.execute("SELECT status FROM ah.index_run ORDER BY id DESC LIMIT 1").fetchone()[0]


def test_ctrl_c_stops_a_resident_pass_as_in_process(long_pass):
    """SIGINT to the client is forwarded to the pass: it commits what it did, says so on one line
    of stderr and exits 130 (what `index` does in process), and the server keeps no child."""
    env, database = long_pass
    proc = _start_pass(env, database)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert err.decode().splitlines()[-1] == INTERRUPTED
    assert b"Traceback" not in err
    assert out.startswith(b"indexed (interrupted): ")
    assert _last_run(database) == "interrupted"
    wait_for(lambda: running(env) == 0, "the child to be reaped")


def test_sigterm_stops_a_resident_pass_at_a_batch_boundary(long_pass):
    env, database = long_pass
    proc = _start_pass(env, database)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0, err  # SIGTERM: an ordinary end, as in process
    assert b"Traceback" not in err
    assert out.startswith(b"indexed (interrupted): ")
    assert _last_run(database) == "interrupted"


def test_a_server_told_to_stop_lets_a_running_pass_finish_and_still_forwards_signals(long_pass):
    """``service stop`` (SIGTERM to the server) while a pass runs: the server stops listening and
    removes its socket at once, but neither kills nor orphans the pass — Ctrl-C still reaches it,
    its exit code still reaches the client — and exits after it."""
    env, database = long_pass
    proc = _start_pass(env, database)
    pid = service_status(Path(env["AGENT_HISTORY_DATA_DIR"]))["pid"]
    os.kill(pid, signal.SIGTERM)  # what `service stop` sends
    sock = paths_of(Path(env["AGENT_HISTORY_DATA_DIR"])).socket
    wait_for(lambda: not sock.exists(), "the socket to be removed")
    time.sleep(1)  # the server would have stopped its child by now if it were going to
    assert proc.poll() is None and Path(f"/proc/{pid}").exists()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert err.decode().splitlines()[-1] == INTERRUPTED
    assert _last_run(database) == "interrupted"
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2],
             "the server to exit after its last command")  # fmt: skip
    log = paths_of(Path(env["AGENT_HISTORY_DATA_DIR"])).log.read_text()
    assert "stopped (signal SIGTERM)" in log and "waiting for 1 running commands" in log
    assert log.rstrip().endswith("the last running command ended")


def test_the_idle_timeout_never_stops_a_server_with_a_pass_running(pg_server, corpus_home, own_tmp):
    """A server whose idle timeout (3 s) runs out while its pass goes on keeps serving it: the
    pass is neither stopped nor orphaned, Ctrl-C still reaches it, and the server exits idle once
    it has ended."""
    (own_tmp / "config.toml").touch()
    database = clone_database(pg_server)
    env = _env(own_tmp, dsn=database.dsn, reader_dsn=database.reader_dsn, home=corpus_home)
    env.update(AGENT_HISTORY_BATCH_LINES="3", AGENT_HISTORY_QUERY_IDLE_S="3")
    try:
        started = cli(env, "service", "start", "--json")
        assert started.returncode == 0, started.stderr
        pid = json.loads(started.stdout)["pid"]
        proc = _start_pass(env, database)
        time.sleep(5)  # the idle timeout (3 s since the request) runs out while the pass goes on
        assert proc.poll() is None and running(env) == 1
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 130, err
        assert err.decode().splitlines()[-1] == INTERRUPTED
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2],
                 "the idle exit after the pass")  # fmt: skip
        assert "stopped (idle for 3 s) after 1 commands" in paths_of(own_tmp / "data").log.read_text()
    finally:
        subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=env, capture_output=True, timeout=60)
        drop_database(database)
