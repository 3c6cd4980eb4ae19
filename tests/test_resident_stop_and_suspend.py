"""The resident query process stopped while a command runs in it, and a command suspended with
Ctrl-Z (`cli.resident`, `cli.resident_server`). Real CLI subprocesses, a real server process;
`statusline`, which blocks reading its stdin, stands for a long command (an `index` pass).

- `service stop` returns at once saying what the process is still finishing, `service status`
  says "stopping: …" (not "not running") until it exits, and `service stop --wait` waits for it.
- SIGTSTP (Ctrl-Z) to the client stops the command in the server (SIGSTOP: the child's process
  group is orphaned) and the client; SIGCONT (``fg``) continues both, and the command ends as it
  would have.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from agent_history.cli import resident
from agent_history.cli.resident_control import paths_of, service_status, stopping_line
from tests.procinfo import signal_state

PY = sys.executable
WAIT_S = 90.0


@pytest.fixture
def env(db):
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-stop-"))
    (tmp / "config.toml").touch()
    (tmp / "home").mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_HISTORY_")}
    out.update(
        AGENT_HISTORY_DSN=db.dsn,
        AGENT_HISTORY_READER_DSN=db.reader_dsn,
        AGENT_HISTORY_CONFIG=str(tmp / "config.toml"),
        AGENT_HISTORY_DATA_DIR=str(tmp / "data"),
        HOME=str(tmp / "home"),
        AGENT_HISTORY_QUERY_IDLE_S="300",
    )
    yield out
    subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=out, capture_output=True, timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=120)


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _state(pid: int) -> str:
    """The one-letter state of process `pid` (R, S, T …; "" when gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc)."""
    try:
        line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)


def _blocked_command(env: dict) -> tuple[subprocess.Popen, int, int]:
    """(client, server pid, child pid): `statusline` running in the server, blocked on stdin."""
    r = cli(env, "service", "start", "--json")
    assert r.returncode == 0, r.stderr
    server = json.loads(r.stdout)["pid"]
    client = subprocess.Popen([PY, "-m", "agent_history", "statusline"], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0)  # fmt: skip
    sock = str(paths_of(Path(env["AGENT_HISTORY_DATA_DIR"])).socket)
    wait_for(lambda: (resident.ask_status(sock) or {}).get("running_commands") == 1, "the command in the server")
    (child,) = _children(server)
    # the client forwards signals once it has heard the child's pid (`resident._await`)
    wait_for(lambda: _catches(client.pid, signal.SIGTSTP), "the client's signal handlers")
    return client, server, child


def test_stopping_line_names_a_pass_or_the_commands():
    assert stopping_line({"pid": 4242, "commands": ["index"]}) == "stopping: finishing a pass (pid 4242)"
    assert stopping_line({"pid": 7, "commands": ["index", "index"]}) == "stopping: finishing 2 passes (pid 7)"
    assert stopping_line({"pid": 7, "commands": ["search", "usage"]}) == (
        "stopping: finishing 2 commands (search, usage) (pid 7)"
    )


def test_stop_while_a_command_runs_says_stopping_until_it_ends(env):
    client, server, _child = _blocked_command(env)
    try:
        started = time.monotonic()
        stop = cli(env, "service", "stop")
        assert time.monotonic() - started < 25  # not the 30 s wait for an exit that is not coming
        line = f"stopping: finishing 1 command (statusline) (pid {server})"
        assert stop.returncode == 0, stop.stderr
        assert stop.stdout.split("\n")[0].startswith(f"resident query process {line}; it exits when that ends")
        assert "service stop --wait" in stop.stdout
        status = cli(env, "service", "status")
        assert status.stdout.splitlines()[0] == line
        assert "not running" not in status.stdout
        data = json.loads(cli(env, "service", "status", "--json").stdout)
        assert (data["running"], data["stopping"]) == (
            False,
            {"pid": server, "commands": ["statusline"], "reason": "signal SIGTERM"},
        )
        again = json.loads(cli(env, "service", "stop", "--json").stdout)
        assert again == {"stopped": False, "stopping": data["stopping"]}
        waiting = subprocess.Popen([PY, "-m", "agent_history", "service", "stop", "--wait"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert waiting.stderr.readline() == f"waiting: {line}\n"  # it waits while the command runs
        assert waiting.poll() is None
        client.stdin.close()  # the command ends (end of its input) …
        client.wait(timeout=60)
        out, err = waiting.communicate(timeout=60)  # … and so does the wait, with the server
        assert (waiting.returncode, out, err) == (0, "resident query process stopped\n", "")
        wait_for(lambda: _state(server) in ("", "Z"), "the server to exit")
        assert "stopping" not in service_status(Path(env["AGENT_HISTORY_DATA_DIR"]))
        assert cli(env, "service", "status").stdout.startswith("resident query process not running")
    finally:
        if client.poll() is None:
            client.kill()


def test_ctrl_z_suspends_the_command_in_the_server_and_fg_continues_it(env):
    expected = subprocess.run([PY, "-m", "agent_history", "statusline"], env={**env, "AGENT_HISTORY_QUERY_IDLE_S": "0"},
                              input=b"", capture_output=True, timeout=120)  # fmt: skip
    client, _server, child = _blocked_command(env)
    try:
        client.send_signal(signal.SIGTSTP)
        wait_for(lambda: _state(client.pid) == "T", "the client to stop")
        wait_for(lambda: _state(child) == "T", "the command in the server to stop")
        client.send_signal(signal.SIGCONT)
        wait_for(lambda: _state(client.pid) in ("S", "R"), "the client to go on")
        wait_for(lambda: _state(child) in ("S", "R"), "the command in the server to go on")
        out, err = client.communicate(input=b"", timeout=60)
    except AssertionError:
        raise AssertionError(f"{signal_state(client.pid)}; {signal_state(child)}") from None
    finally:
        if client.poll() is None:
            client.kill()
    assert (client.returncode, out, err) == (expected.returncode, expected.stdout, expected.stderr)
