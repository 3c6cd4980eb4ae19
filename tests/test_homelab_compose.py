"""compose.yaml's homelab services, .env.example and the Dockerfile (issue 15), checked through
`docker-compose config` (Debian package `docker-compose`; no Docker engine needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO

COMPOSE = shutil.which("docker-compose")
pytestmark = pytest.mark.skipif(COMPOSE is None, reason="docker-compose absent (Debian package `docker-compose`)")

SERVICES = {"indexer": "index", "embedder": "embed", "journal-sync": "journal-sync"}
INTERVALS = {"indexer": "INDEX_INTERVAL_SECONDS", "embedder": "EMBED_INTERVAL_SECONDS"}


def _compose(*args: str, env_file: bool = True, extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AH_", "COMPOSE_", "OTEL_"))}
    env.update(extra or {})
    cmd = [COMPOSE, "-f", str(REPO / "compose.yaml"), "--project-directory", str(REPO)]
    if env_file:
        cmd += ["--env-file", str(REPO / ".env.example")]
    return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def config() -> dict:
    done = _compose("config")
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_db_is_the_pinned_paradedb_on_loopback_with_a_healthcheck(config):
    db = config["services"]["db"]
    assert db["image"] == "paradedb/paradedb:18-v0.25.10"
    assert db["ports"] == ["127.0.0.1:5432:5432/tcp"]
    assert db["environment"]["POSTGRES_PASSWORD"] == "change-me"  # from .env.example, not the file
    assert db["healthcheck"]["test"] == ["CMD-SHELL", "pg_isready -U ah -d agent_history"]
    assert db["volumes"] == ["pgdata:/var/lib/postgresql:rw"]


def test_three_services_from_one_image_hardened_and_waiting_for_a_healthy_db(config):
    services = config["services"]
    images = {services[n]["image"] for n in SERVICES}
    assert images == {"agent-history:local"}
    for name, command in SERVICES.items():
        s = services[name]
        assert s["command"][:2] == [command, "--every"], name
        assert s["read_only"] is True and s["tmpfs"] == ["/tmp"], name
        assert s["user"] == "10001:10001" and s["restart"] == "unless-stopped" and s["stop_signal"] == "SIGTERM"
        assert s["depends_on"] == {"db": {"condition": "service_healthy"}}, name
        env = s["environment"]
        assert env["AGENT_HISTORY_DSN"] == "postgresql://ah:change-me@db/agent_history"
        assert env["AGENT_HISTORY_CONFIG"] == "/config/config.toml"
        assert env["AGENT_HISTORY_HOST"] == "homelab"  # a container's own host name is random
        assert env["OTEL_SERVICE_NAME"] == f"agent-history-{name}"
        assert {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_RESOURCE_ATTRIBUTES"} <= set(env)
        mounts = {v.split(":")[1]: v for v in s["volumes"]}
        assert mounts["/config/config.toml"].endswith(":ro"), name
        assert all(v.endswith(":ro") for v in s["volumes"] if ":/archive:" not in v), s["volumes"]
    assert services["indexer"]["command"] == ["index", "--every", "60", "--archive"]
    assert services["indexer"]["environment"]["AGENT_HISTORY_ARCHIVE"] == "/archive"
    assert [v.split(":")[1:] for v in services["indexer"]["volumes"] if v.endswith(":rw")] == [["/archive", "rw"]]
    assert services["embedder"]["command"] == ["embed", "--every", "60"]
    assert services["journal-sync"]["command"] == ["journal-sync", "--every", "300"]
    assert {v.split(":")[1] for v in services["indexer"]["volumes"]} == {
        "/homes/claude",
        "/homes/codex",
        "/homes/home/.pi",
        "/config/config.toml",
        "/archive",
    }
    assert any(v.split(":")[1] == "/journal" for v in services["journal-sync"]["volumes"])
    assert services["journal-sync"]["environment"]["AGENT_HISTORY_JOURNAL_SOURCE"] == "/journal/journal.db"


def test_intervals_come_from_the_environment():
    done = _compose("config", extra={"INDEX_INTERVAL_SECONDS": "15", "JOURNAL_SYNC_INTERVAL_SECONDS": "900"})
    # .env.example sets them too; the shell environment wins over the env file
    services = yaml.safe_load(done.stdout)["services"]
    assert services["indexer"]["command"] == ["index", "--every", "15", "--archive"]
    assert services["journal-sync"]["command"] == ["journal-sync", "--every", "900"]


def test_the_db_password_is_required():
    done = _compose("config", env_file=False)
    assert done.returncode != 0
    assert "set AH_DB_PASSWORD" in done.stderr


def test_env_example_lists_every_variable_compose_reads():
    used = set(re.findall(r"\$\{([A-Z0-9_]+)", (REPO / "compose.yaml").read_text()))
    listed = set(re.findall(r"^([A-Z0-9_]+)=", (REPO / ".env.example").read_text(), re.M))
    assert used - listed == set()
    assert {"AH_DB_PASSWORD", "AH_READER_PASSWORD", "INDEX_INTERVAL_SECONDS", "JOURNAL_SOURCE"} <= used


def test_dockerfile_is_multi_stage_pinned_non_root_with_a_db_status_healthcheck():
    text = (REPO / "Dockerfile").read_text()
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.M).group(1)
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim-\w+", base), base  # a full version, not a moving tag
    stages = re.findall(r"^FROM \S+ AS (\w+)$", text, re.M)
    assert stages == ["build", "runtime"]
    runtime = text.split(" AS runtime", 1)[1]
    assert "pip install --no-index" in runtime
    assert not re.search(r"apt-get|gcc|build-essential", runtime)
    assert re.search(r"^USER 10001:10001$", runtime, re.M)
    assert re.search(r'^\s+CMD \["agent-history", "db", "status"\]$', runtime, re.M)
    assert re.search(r'^ENTRYPOINT \["agent-history"\]$', runtime, re.M)
