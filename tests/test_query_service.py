"""The resident query process (`agent_history.cli.resident` client, `cli.resident_server`): real
CLI subprocesses against the real corpus catalogue, a real server process on a real unix socket,
a pty where the terminal matters.

Each command runs twice — once in process (``AGENT_HISTORY_QUERY_IDLE_S=0``), once through the
resident process — and stdout, stderr and the exit code must be byte for byte the same; the
server's request counter proves which path answered.
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

import pytest

from agent_history.cli import resident
from agent_history.cli.resident_control import paths_of, service_status
from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.procinfo import cli_on_pty, reading_stdin, signal_state

PY = sys.executable
SESSION = "9e953218-585f-4692-89df-9e0747a31c68"  # claude-local: the tokenizer/submodule session
STATUS_SESSION = "0fae0449-64d3-4788-8622-d3a47d82c14b"  # the Sonnet 4 session of 2025-09-20
NOW = "2025-09-20T05:30:00+00:00"
CORPUS_FILE = (
    ".claude/projects/-Users-user1-workspace-claude-code-log-sample/07f2e15c-a38b-454b-9148-60edc06de401.jsonl"
)
WAIT_S = 90.0  # an upper bound for a server to preload or exit; polled, never slept out


def _payload() -> str:
    return json.dumps({"session_id": STATUS_SESSION, "model": {"id": "claude-sonnet-4-20250514"}})


def _hostile_payload() -> str:
    """A model name with a right-to-left override, an escape sequence and a newline."""
    return json.dumps({"session_id": STATUS_SESSION, "model": {"display_name": "Sonnet\u202e4\u001b]0;x\u0007\n"}})


@pytest.fixture(scope="module")
def base_env(corpus_db) -> dict[str, str]:  # noqa: F811
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-resident-"))
    env = cli_environment(tmp, corpus_db.dsn, corpus_db.reader_dsn)
    env["AGENT_HISTORY_QUERY_IDLE_S"] = "300"  # this module's commands go through the resident process
    yield env
    subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=env, capture_output=True, timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)


def cli(
    env: dict, *args: str, stdin: str = "", resident_on: bool = True, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "agent_history", *args],
        env={**env, "AGENT_HISTORY_QUERY_IDLE_S": env["AGENT_HISTORY_QUERY_IDLE_S"] if resident_on else "0"},
        input=stdin.encode(),
        capture_output=True,
        timeout=120,
        cwd=cwd,
    )


def data_dir(env: dict) -> Path:
    return Path(env["AGENT_HISTORY_DATA_DIR"])


def requests(env: dict) -> int | None:
    """Commands the running server has served, None when none runs."""
    status = service_status(data_dir(env))
    return status.get("requests") if status["running"] else None


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def started(base_env) -> dict[str, str]:
    r = cli(base_env, "service", "start", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["running"] is True
    return base_env


def a_commit(db) -> str:
    with db.connect() as conn:
        return conn.execute("SELECT sha FROM ah.git_event WHERE op = 'commit' ORDER BY id LIMIT 1").fetchone()[0]


CASES: list[tuple[str, tuple[str, ...], str]] = [
    ("search", ("search", "tokenizer", "--limit", "3"), ""),
    ("search --json", ("search", "tokenizer", "--limit", "3", "--json"), ""),
    ("search nothing", ("search", "zqxjvwq"), ""),
    ("search bad option", ("search", "build", "--since", "1000000000h"), ""),
    ("sessions", ("sessions", "--limit", "5"), ""),
    ("sessions --json", ("sessions", "--limit", "5", "--json"), ""),
    ("sessions nothing", ("sessions", "--since", "2099-01-01"), ""),
    ("session", ("session", SESSION[:8], "--to", "3"), ""),
    ("session --json", ("session", SESSION[:8], "--to", "3", "--json"), ""),
    ("session unknown", ("session", "ffffff0"), ""),
    ("why", ("why", "{sha}"), ""),
    ("why --json", ("why", "{sha}", "--json"), ""),
    ("why unknown", ("why", "1234567"), ""),
    ("touched", ("touched", "**/*.py"), ""),
    ("touched --json", ("touched", "**/*.py", "--json"), ""),
    ("touched bad since", ("touched", "*", "--since", "1000000d"), ""),
    ("status", ("status",), ""),
    ("status --json", ("status", "--json"), ""),
    ("usage daily", ("usage", "daily", "--timezone", "UTC"), ""),
    ("usage daily --json", ("usage", "daily", "--timezone", "UTC", "--json"), ""),
    ("usage unknown view", ("usage", "fortnightly"), ""),
    ("statusline", ("statusline", "--timezone", "UTC", "--now", NOW), "payload"),
    ("statusline bad payload", ("statusline", "--timezone", "UTC"), "{not json"),
    ("statusline hostile model", ("statusline", "--timezone", "UTC", "--now", NOW), "hostile"),
    ("index --file unchanged", ("index", "--home", "{home}", "--file", "{file}", "--json"), ""),
    ("sql", ("sql", "SELECT agent, count(*) FROM ah.session GROUP BY 1 ORDER BY 1"), ""),
    ("sql --json", ("sql", "--json", "SELECT agent, count(*) AS n FROM ah.session GROUP BY 1 ORDER BY 1"), ""),
    ("sql refused write", ("sql", "DELETE FROM ah.session"), ""),  # the reader role's guard, resident too
    ("recall", ("recall", "tokenizer", "--hits", "1"), ""),
    ("efficiency --json", ("efficiency", "--json"), ""),
    ("loops", ("loops",), ""),
    ("loop unknown", ("loop", "nosuch"), ""),
    ("pricing", ("pricing",), ""),
    ("issues --json", ("issues", "--json"), ""),
    ("tasks", ("tasks",), ""),
    ("task unknown", ("task", "task-999"), ""),
    ("blame unknown file", ("blame", "nosuch/file.py"), ""),
    ("skills", ("skills",), ""),
    ("permissions --json", ("permissions", "--json"), ""),
    ("closeouts", ("closeouts",), ""),
    ("rebuild-check --json", ("rebuild-check", "--json"), ""),
]


EXIT = {"sql": 0, "sql --json": 0, "sql refused write": 2, "recall": 0, "pricing": 0, "efficiency --json": 0}
"""The exit code some cases must give (a comparison of two failures to start would pass too)."""


@pytest.mark.parametrize(("name", "args", "stdin"), CASES, ids=[c[0] for c in CASES])
def test_resident_output_is_byte_identical_to_in_process(started, corpus_db, corpus_home, name, args, stdin):  # noqa: F811
    fill = {"sha": a_commit(corpus_db), "home": str(corpus_home), "file": str(corpus_home / CORPUS_FILE)}
    argv = tuple(a.format(**fill) for a in args)
    text = {"payload": _payload(), "hostile": _hostile_payload()}.get(stdin, stdin)
    before = requests(started)
    inside = cli(started, *argv, stdin=text, resident_on=False)
    assert requests(started) == before  # in process: the server saw nothing
    served = cli(started, *argv, stdin=text)
    assert requests(started) == before + 1  # this one it ran
    if argv[0] == "index":  # a pass's duration is the one figure that differs run to run
        inside.stdout, served.stdout = (
            re.sub(rb'"(elapsed|duration|seconds)[a-z_]*": [0-9.]+', b"", p.stdout) for p in (inside, served)
        )
    assert (served.returncode, served.stdout, served.stderr) == (inside.returncode, inside.stdout, inside.stderr)
    assert b"Traceback" not in inside.stderr
    if name in EXIT:
        assert inside.returncode == EXIT[name] and (inside.stdout or inside.stderr), inside.stderr


def test_status_lines_wrap_at_80_columns_and_json_keeps_them_whole(started):
    """Piped, `status` prose wraps between words at 80 columns, continuation lines indented; no
    word is cut (a longer one stands alone); ``--json`` carries each value whole."""
    out = cli(started, "status", resident_on=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    table = {i for i, line in enumerate(lines) if line.startswith(("namespace", "─")) or "-local" in line}
    for i, line in enumerate(lines):
        if i not in table:
            assert len(line) <= 80 or " " not in line.strip(), line
    data = json.loads(cli(started, "status", "--json", resident_on=False).stdout)
    prose = " ".join(" ".join(lines[i] for i in range(len(lines)) if i not in table).split())
    assert data["database"]["server"] in prose  # the server line, rejoined, is the JSON's value
    assert f"archive: no copies yet in {data['archive']['path']} (run `agent-history archive`)" in prose
    assert any(line.startswith("  ") for line in lines)  # at least one line did wrap


def test_wrapped_breaks_between_words_and_never_inside_one():
    from agent_history.cli.output import wrapped

    assert wrapped("a bb ccc dddd", 6) == ["a bb", "  ccc", "  dddd"]
    long = "/" + "x" * 90
    assert wrapped(f"copies in {long} (run it)", 20) == ["copies in", f"  {long}", "  (run it)"]
    assert wrapped("fits", 80) == ["fits"]
    assert wrapped("日本語 日本語 日本語", 14) == ["日本語 日本語", "  日本語"]  # wide characters: 2 cells each


def _on_pty(env: dict, args: tuple[str, ...], columns: int) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pty of `columns` columns; (exit code, bytes)."""
    return cli_on_pty(args, env, columns=columns)


@pytest.mark.parametrize("columns", [60, 160])
def test_on_a_terminal_colours_and_width_are_the_in_process_ones(started, columns):
    env = {**started, "TERM": "xterm-256color"}
    before = requests(started)
    inside = _on_pty({**env, "AGENT_HISTORY_QUERY_IDLE_S": "0"}, ("search", "tokenizer", "--limit", "2"), columns)
    served = _on_pty(env, ("search", "tokenizer", "--limit", "2"), columns)
    assert requests(started) == before + 1
    assert served == inside
    assert b"\x1b[" in inside[1]  # colour on a terminal: the comparison covers it
    error_inside = _on_pty({**env, "AGENT_HISTORY_QUERY_IDLE_S": "0"}, ("usage", "fortnightly"), columns)
    assert _on_pty(env, ("usage", "fortnightly"), columns) == error_inside


def test_write_commands_and_help_never_go_to_the_resident_process(started):
    before = requests(started)
    assert cli(started, "search", "--help").returncode == 0
    assert cli(started, "sessions", "exclusions", "export").returncode in (0, 1)
    assert cli(started, "index", "--help").returncode == 0
    assert requests(started) == before
    assert not resident.eligible(["sessions", "delete", "abc"])
    assert resident.eligible(["index"])  # a pass (tests/test_resident_index.py) …
    assert not resident.eligible(["index", "--every", "5"])  # … but not a loop
    assert not resident.eligible(["index", "--file", "x", "--every=5"])
    assert resident.eligible(["index", "--file=x"])
    assert not resident.eligible(["--dsn", "x", "search", "q"])
    assert resident.eligible(["sql", "SELECT 1"]) and not resident.eligible(["sql", "--help"])
    assert not resident.eligible(["export", "abc"])  # writes files: in process


def test_ctrl_c_in_the_client_stops_the_command_as_in_process(started):
    """`statusline` blocks reading stdin: SIGINT to the client ends it the way it ends in process
    (KeyboardInterrupt, death by SIGINT), and the server keeps no child."""
    results = []
    for on in (False, True):
        env = {**started, "AGENT_HISTORY_QUERY_IDLE_S": started["AGENT_HISTORY_QUERY_IDLE_S"] if on else "0"}
        proc = subprocess.Popen([PY, "-m", "agent_history", "statusline"], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        if on:
            wait_for(lambda: (resident.ask_status(str(paths_of(data_dir(started)).socket)) or {}).get("running_commands") == 1,
                     "the command to run in the server")  # fmt: skip
        else:  # the in-process command imports before it reads stdin
            wait_for(lambda pid=proc.pid: reading_stdin(pid), "the in-process command to read stdin")
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)  # stdin stays open: the command ends by the signal, not by EOF
        except subprocess.TimeoutExpired:
            state = signal_state(proc.pid)
            proc.kill()
            raise AssertionError(f"SIGINT did not end the command (resident {on}): {state}") from None
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdin.close()
        results.append((proc.returncode, out, err.strip().splitlines()[-1:]))
    assert results[0] == results[1] == (-signal.SIGINT, b"", [b"KeyboardInterrupt"])
    status = resident.ask_status(str(paths_of(data_dir(started)).socket))
    assert status is not None and status["running_commands"] == 0


def _private_env(idle_s: str) -> tuple[dict[str, str], Path]:
    tmp = Path(tempfile.mkdtemp(prefix="ah-test-resident-"))
    (tmp / "config.toml").touch()
    (tmp / "home").mkdir()
    return {"AGENT_HISTORY_CONFIG": str(tmp / "config.toml"), "AGENT_HISTORY_DATA_DIR": str(tmp / "data"),
            "HOME": str(tmp / "home"), "AGENT_HISTORY_QUERY_IDLE_S": idle_s}, tmp  # fmt: skip


@pytest.fixture
def own_server(base_env):
    """A data dir of the test's own (the shared catalogue), its server stopped afterwards."""
    extra, tmp = _private_env("300")
    env = {**base_env, **extra}
    yield env
    subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=env, capture_output=True, timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)


def test_a_killed_server_leaves_commands_answering_in_process_and_a_new_one_starts(own_server):
    env = own_server
    expected = cli(env, "search", "tokenizer", "--limit", "2", resident_on=False)
    first = cli(env, "search", "tokenizer", "--limit", "2")  # no server yet: in process, then starts one
    assert (first.returncode, first.stdout, first.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    wait_for(lambda: service_status(data_dir(env))["running"], "the first server")
    old = service_status(data_dir(env))["pid"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{old}").exists() or "Z" in Path(f"/proc/{old}/stat").read_text().split()[2],
             "the killed server")  # fmt: skip
    assert paths_of(data_dir(env)).socket.exists()  # stale: nobody removed it
    again = cli(env, "search", "tokenizer", "--limit", "2")
    assert (again.returncode, again.stdout, again.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    wait_for(lambda: service_status(data_dir(env)).get("pid", old) != old, "a new server")
    assert requests(env) == 0
    assert cli(env, "search", "tokenizer", "--limit", "2").stdout == expected.stdout
    assert requests(env) == 1


def test_a_command_run_inside_a_source_checkout_starts_a_server_of_its_own_installation(own_server, tmp_path):
    """A newcomer's finding: the quick start leaves you in the clone, and a server started there
    by ``python -m`` imported the clone's package instead of the installed one, so it refused
    every command ("another installation") and each command paid for starting a new one. The
    client here runs with ``-P`` (its own imports do not come from the working directory, as an
    installed ``agent-history`` script's do not) inside a directory whose ``agent_history``
    package fails when imported."""
    env = own_server
    checkout = tmp_path / "checkout"
    (checkout / "agent_history").mkdir(parents=True)
    (checkout / "agent_history" / "__init__.py").write_text("raise ImportError('the checkout was imported')\n")

    def run(*args: str, resident_on: bool = True) -> subprocess.CompletedProcess:
        idle = env["AGENT_HISTORY_QUERY_IDLE_S"] if resident_on else "0"
        return subprocess.run([PY, "-P", "-m", "agent_history", *args], env={**env, "AGENT_HISTORY_QUERY_IDLE_S": idle},
                              capture_output=True, timeout=120, cwd=checkout)  # fmt: skip

    expected = run("search", "tokenizer", "--limit", "2", resident_on=False)
    assert expected.returncode == 0, expected.stderr
    assert run("search", "tokenizer", "--limit", "2").stdout == expected.stdout  # in process; starts a server
    wait_for(lambda: service_status(data_dir(env))["running"], "a server started from inside the checkout")
    status = service_status(data_dir(env))
    assert status["package"] == str(Path(resident.__file__).resolve().parents[1])
    again = run("search", "tokenizer", "--limit", "2")
    assert (again.returncode, again.stdout, again.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    assert requests(env) == 1


def test_a_socket_of_another_mode_or_owner_is_refused(own_server):
    env = own_server
    r = cli(env, "service", "start")
    assert r.returncode == 0, r.stderr
    sock = paths_of(data_dir(env)).socket
    expected = cli(env, "status", resident_on=False)
    os.chmod(sock, 0o666)
    r = cli(env, "status")
    assert (r.returncode, r.stdout, r.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    assert requests(env) == 0 and sock.exists()  # refused, and another's socket is never removed
    os.chmod(sock, 0o600)
    if os.getuid() == 0:  # only root can give the socket to another user here
        os.chown(sock, 65534, -1)
        assert cli(env, "status").stdout == expected.stdout
        assert requests(env) == 0
        os.chown(sock, 0, -1)
    assert cli(env, "status").stdout == expected.stdout
    assert requests(env) == 1


def test_the_server_exits_after_its_idle_timeout_and_removes_its_files(base_env):
    extra, tmp = _private_env("1")
    env = {**base_env, **extra}
    try:
        r = cli(env, "service", "start", "--json")
        assert r.returncode == 0, r.stderr
        pid = json.loads(r.stdout)["pid"]
        assert json.loads(r.stdout)["idle_timeout_s"] == 1.0
        wait_for(lambda: not service_status(data_dir(env))["running"], "the idle exit")
        paths = paths_of(data_dir(env))
        assert not paths.socket.exists() and not paths.pid.exists()
        assert "stopped (idle for 1 s) after 0 commands" in paths.log.read_text()
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2],
                 "the process to end")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _code_copy(root: Path) -> Path:
    """A private copy of the code (package, migrations, sql) under `root`: a test that rewrites a
    module there changes no other test's installation (xdist runs other resident servers at once,
    and each would stop as "the installed code changed")."""
    repo = Path(resident.__file__).resolve().parents[2]
    code = root / "code"
    shutil.copytree(repo / "agent_history", code / "agent_history", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("migrations", "sql"):
        (code / name).symlink_to(repo / name)
    return code


def test_changed_code_on_disk_is_never_served_a_new_server_starts(own_server):
    code = _code_copy(Path(own_server["AGENT_HISTORY_DATA_DIR"]).parent)
    env = {**own_server, "PYTHONPATH": str(code)}  # and cwd=code: `-m` puts the cwd first on sys.path
    r = cli(env, "service", "start", "--json", cwd=code)
    old = json.loads(r.stdout)["pid"]
    expected = cli(env, "search", "tokenizer", "--limit", "2", resident_on=False, cwd=code)
    assert service_status(data_dir(env))["package"] == str(code / "agent_history")
    module = code / "agent_history" / "cli" / "resident.py"
    st = module.stat()
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # as an upgrade rewrites it
    r = cli(env, "search", "tokenizer", "--limit", "2", cwd=code)
    assert (r.returncode, r.stdout, r.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    wait_for(lambda: service_status(data_dir(env)).get("pid", old) != old, "the restarted server")
    log = paths_of(data_dir(env)).log.read_text()
    assert "stopped (the installed code changed)" in log
    subprocess.run([PY, "-m", "agent_history", "service", "stop"], env=env, cwd=code, capture_output=True, timeout=60)


def test_service_status_and_stop(own_server):
    env = own_server
    r = cli(env, "service", "status", "--json")
    assert json.loads(r.stdout)["running"] is False
    r = cli(env, "service", "start", "--json")
    data = json.loads(r.stdout)
    assert data["running"] is True and data["requests"] == 0 and data["idle_timeout_s"] == 300.0
    assert oct(paths_of(data_dir(env)).socket.stat().st_mode & 0o777) == "0o600"
    assert oct(paths_of(data_dir(env)).dir.stat().st_mode & 0o777) == "0o700"
    r = cli(env, "service", "stop", "--json")
    assert json.loads(r.stdout) == {"stopped": True}
    assert json.loads(cli(env, "service", "status", "--json").stdout)["running"] is False
    assert json.loads(cli(env, "service", "stop", "--json").stdout) == {"stopped": False}


def test_query_idle_s_zero_or_a_bad_value(own_server):
    env = {**own_server, "AGENT_HISTORY_QUERY_IDLE_S": "0"}
    r = cli(env, "service", "start")
    assert r.returncode == 2 and "turned off" in r.stderr.decode()
    r = cli({**own_server, "AGENT_HISTORY_QUERY_IDLE_S": "soon"}, "status")
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "error: AGENT_HISTORY_QUERY_IDLE_S must be a number of seconds ≥ 0, not 'soon'"
    Path(own_server["AGENT_HISTORY_CONFIG"]).write_text("[service]\nquery_idle_s = -1\n")
    r = cli(
        {k: v for k, v in own_server.items() if k != "AGENT_HISTORY_QUERY_IDLE_S"} | {"AGENT_HISTORY_QUERY_IDLE_S": ""},
        "status",
    )
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "error: config service.query_idle_s must be a number of seconds ≥ 0, not -1"


def test_a_data_dir_too_deep_for_a_unix_socket_runs_in_process_and_starts_nothing(base_env):
    extra, tmp = _private_env("300")
    deep = tmp / ("d" * 60) / ("e" * 60)
    env = {**base_env, **extra, "AGENT_HISTORY_DATA_DIR": str(deep)}
    try:
        expected = cli(env, "status", resident_on=False)
        r = cli(env, "status")
        assert (r.returncode, r.stdout, r.stderr) == (expected.returncode, expected.stdout, expected.stderr)
        time.sleep(1)
        assert not (deep / resident.SERVICE_DIR / "service.log").exists()  # no server was spawned
        assert service_status(deep)["running"] is False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_client_killed_outright_takes_its_command_with_it(started):
    """SIGKILL leaves the client no chance to forward anything: the server sees its connection
    close and stops the child (a command nobody waits for does not run on)."""
    sock = str(paths_of(data_dir(started)).socket)
    proc = subprocess.Popen([PY, "-m", "agent_history", "statusline"], env=started, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_for(lambda: (resident.ask_status(sock) or {}).get("running_commands") == 1, "the command to start")
    proc.kill()
    proc.wait(timeout=30)
    wait_for(lambda: (resident.ask_status(sock) or {}).get("running_commands") == 0, "the child to be stopped")
    proc.stdin.close()
