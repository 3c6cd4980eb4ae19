"""The warm embedding service (`agent_history.embed.service`): real service processes on a real
unix socket, the packaged all-MiniLM-L6-v2 weights (offline), real CLI subprocesses.

The model is loaded once in this process (for the in-process reference vectors) and once by the
module's service; one more service is started (and idles out) by the lock/stale/idle test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from agent_history.config import ConfigError, EmbeddingSettings, load_settings
from agent_history.embed.provider import LocalEmbedder, WarmLocalEmbedder, make_embedder
from agent_history.embed.service import ServicePaths, ensure_service, read_pid_file, service_status, stop_service
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_server import model_path

TEXTS = ["memory loss between sessions", "a tokenizer bug in the parser", "résumé ünïcode ✓", "x " * 900]
NO_SHARED_WORDS = "memory loss between sessions"  # the topic corpus's "50 First Dates" session (t0)
WAIT_S = 240.0  # an upper bound for a service to load the model or exit; polled, never slept out


def _settings(idle_s: float = 600.0) -> EmbeddingSettings:
    return EmbeddingSettings(
        provider="local", model="all-MiniLM-L6-v2", local_model_path=Path(model_path()), service_idle_s=idle_s
    )


_MADE: list[Path] = []


def _short_dir(prefix: str) -> Path:
    """A data dir with a short path (the socket path must stay under 108 bytes; pytest's
    tmp_path can be longer), removed at the end of the module."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    _MADE.append(path)
    return path


@pytest.fixture(scope="module", autouse=True)
def _remove_made_dirs():
    yield
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def reference() -> list[list[float]]:
    """`TEXTS` embedded in this process, the way `LocalEmbedder` always has."""
    return LocalEmbedder(_settings()).embed(TEXTS).vectors


@pytest.fixture(scope="module")
def service_dir():
    """A data dir whose warm service runs for the whole module (stopped afterwards)."""
    data = _short_dir("ah-svc-")
    ensure_service(model_path(), data, 600.0).close()
    yield data
    info = read_pid_file(ServicePaths.of(data))
    stop_service(data)
    if info:
        _wait_gone(info["pid"])


# Run in a child: embed TEXTS through `make_embedder` and report the vectors, whether torch was
# imported in that process, and the service's pid.
CHILD = """
import json, sys
from pathlib import Path
from agent_history.config import EmbeddingSettings
from agent_history.embed.provider import make_embedder
from agent_history.embed.service import ServicePaths, read_pid_file
data, model = Path(sys.argv[1]), sys.argv[2]
texts = json.loads(sys.argv[3])
s = EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", local_model_path=Path(model),
                      service_idle_s=float(sys.argv[4]))
e = make_embedder(s, data)
vectors = e.embed(texts).vectors if texts else (e.warm_up() or [])
print(json.dumps({"vectors": vectors, "torch": "torch" in sys.modules,
                  "pid": read_pid_file(ServicePaths.of(data))["pid"]}))
"""


def _children(data: Path, texts: list[str], idle_s: float, n: int = 2) -> list[dict]:
    """`n` children started together; each one's report (asserts each exits 0)."""
    args = [sys.executable, "-c", CHILD, str(data), model_path(), json.dumps(texts), str(idle_s)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=WAIT_S)
        assert p.returncode == 0, stderr
        assert "embedding service unavailable" not in stderr
        out.append(json.loads(stdout))
    return out


def test_two_processes_get_the_in_process_vectors_without_loading_torch(service_dir, reference):
    a, b = _children(service_dir, TEXTS, 600.0)
    assert a["vectors"] == reference and b["vectors"] == reference  # bit for bit
    assert a["torch"] is False and b["torch"] is False
    assert a["pid"] == b["pid"] == service_status(service_dir)["pid"]


def test_query_and_batch_through_the_embedder_match_in_process(service_dir, reference):
    warm = make_embedder(_settings(), service_dir)
    assert isinstance(warm, WarmLocalEmbedder)
    try:
        before = service_status(service_dir)["texts"]
        assert warm.embed(TEXTS).vectors == reference
        alone = LocalEmbedder(_settings()).embed_query(TEXTS[0], 30.0)  # a batch of one pads differently
        assert warm.embed_query(TEXTS[0], 30.0) == alone
        assert service_status(service_dir)["texts"] == before + len(TEXTS) + 1
    finally:
        warm.close()


def test_socket_and_files_are_private(service_dir):
    paths = ServicePaths.of(service_dir)
    assert paths.dir.stat().st_mode & 0o777 == 0o700
    assert paths.socket.stat().st_mode & 0o077 == 0
    assert paths.log.stat().st_mode & 0o077 == 0
    info = read_pid_file(paths)
    assert info["model_path"] == model_path() and info["socket"] == str(paths.socket)


def test_lock_stale_files_and_idle_timeout():
    """Stale pid file (a dead process) and socket (nothing listening) are recovered; two callers
    starting at once get one service; with a tiny idle timeout it exits and removes its files."""
    data = _short_dir("ah-idle-")
    paths = ServicePaths.of(data)
    paths.dir.mkdir(mode=0o700)
    dead = subprocess.Popen(["true"])
    dead.wait()
    paths.pid.write_text(json.dumps({"pid": dead.pid, "model_path": model_path()}))
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(paths.socket))
    stale.close()  # the socket file stays, nobody listens
    assert service_status(data) == {"running": False, "stale": True, "socket": str(paths.socket), "log": str(paths.log)}
    a, b = _children(data, [], 3.0)
    assert a["pid"] == b["pid"] != dead.pid
    assert _wait_gone(a["pid"])
    assert not paths.pid.exists() and not paths.socket.exists()
    log = paths.log.read_text()
    assert log.count("loaded in") == 1 and "idle for 3 s: exiting" in log
    assert service_status(data) == {"running": False, "socket": str(paths.socket), "log": str(paths.log)}


def test_falls_back_in_process_with_a_one_line_notice(reference, capsys):
    deep = _short_dir("ah-deep-") / ("d" * 120)  # socket path over the AF_UNIX limit
    warm = make_embedder(_settings(), deep)
    assert warm.embed(TEXTS).vectors == reference
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("embedding service unavailable (socket path ")
    assert err[0].endswith("is longer than 107 bytes): loading the model in this process")
    assert warm.embed_query(TEXTS[1], 5.0) == LocalEmbedder(_settings()).embed_query(TEXTS[1], 5.0)
    assert capsys.readouterr().err == ""  # said once


def test_service_idle_setting(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(config))
    base = f'[embedding]\nprovider = "local"\nlocal_model_path = "{tmp_path}"\n'
    config.write_text(base)
    assert load_settings(None).embedding.service_idle_s == 600.0
    config.write_text(base + "service_idle_s = 0\n")
    off = load_settings(None).embedding
    assert off.service_idle_s == 0.0 and type(make_embedder(off)) is LocalEmbedder
    config.write_text(base + "service_idle_s = 30\n")
    on = load_settings(None).embedding
    assert on.service_idle_s == 30.0 and type(make_embedder(on)) is WarmLocalEmbedder
    for bad in ("-1", '"ten"', "true", "nan", "inf"):
        config.write_text(base + f"service_idle_s = {bad}\n")
        with pytest.raises(ConfigError, match="embedding.service_idle_s must be a number of seconds ≥ 0"):
            load_settings(None)


def _cli(*args, env, importtime: bool = False):
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=WAIT_S
    )


def test_cli_embed_and_hybrid_search_use_the_service(topic_db, cli_env, service_dir):
    _, _, uids = topic_db
    env = dict(cli_env, AGENT_HISTORY_DATA_DIR=str(service_dir))
    Path(env["AGENT_HISTORY_CONFIG"]).write_text(
        f'[embedding]\nprovider = "local"\nlocal_model_path = "{model_path()}"\nbatch_size = 16\n'
    )
    before = service_status(service_dir)["texts"]
    run = _cli("embed", env=env)
    assert run.returncode == 0, run.stderr
    assert "0 failed" in run.stdout and run.stderr == ""
    embedded = service_status(service_dir)["texts"] - before
    assert embedded > 0
    out = _cli("search", NO_SHARED_WORDS, "--mode", "hybrid", "--json", "-n", "3", env=env, importtime=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "hybrid" and uids["t0"] in [h["session_uid"] for h in data["hits"]]
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "torch" not in imported and "sentence_transformers" not in imported
    assert not [line for line in out.stderr.splitlines() if not line.startswith("import time:")]  # no notice
    assert service_status(service_dir)["texts"] == before + embedded + 1  # the query


def test_cli_status_and_stop(cli_env, service_dir):
    env = dict(cli_env, AGENT_HISTORY_DATA_DIR=str(service_dir))
    status = _cli("embed-service", "status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    pid = data["pid"]
    assert data["running"] is True and data["model_path"] == model_path() and data["idle_timeout_s"] == 600.0
    text = _cli("embed-service", "status", env=env).stdout
    assert f"pid             {pid}\n" in text and "idle_timeout_s  600.0\n" in text
    stop = _cli("embed-service", "stop", "--json", env=env)
    assert stop.returncode == 0 and json.loads(stop.stdout) == {"stopped": True}
    assert _wait_gone(pid)
    again = _cli("embed-service", "stop", env=env)
    assert again.returncode == 0 and again.stdout == "embedding service was not running\n"
    gone = json.loads(_cli("embed-service", "status", "--json", env=env).stdout)
    assert gone["running"] is False and "stale" not in gone


def test_stop_leaves_an_unrelated_process_named_by_a_stale_pid_file_alone():
    """A pid file naming a live process that is not the service: nothing answers, so it is
    stale — `stop` removes the files and leaves the process alone."""
    data = _short_dir("ah-stop-")
    paths = ServicePaths.of(data)
    paths.dir.mkdir(mode=0o700)
    sleeper = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    try:
        paths.pid.write_text(json.dumps({"pid": sleeper.pid, "model_path": model_path()}))
        assert stop_service(data) is False
        assert not paths.pid.exists() and sleeper.poll() is None
    finally:
        sleeper.send_signal(signal.SIGTERM)
        sleeper.wait()
