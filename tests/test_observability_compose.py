"""compose.yaml with and without the `observability` profile, validated by `docker-compose config`
(no Docker engine needed), and the provisioning files that wire the generated dashboards and rules."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from dashboards.generate import RULES_FILE, outputs
from dashboards.sdk import POSTGRES, PROMETHEUS
from tests.conftest import REPO

COMPOSE = shutil.which("docker-compose")
pytestmark = pytest.mark.skipif(COMPOSE is None, reason="docker-compose absent (Debian package `docker-compose`)")

OBSERVABILITY = {"otel-collector", "prometheus", "grafana"}


def _config(*profile: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AH_", "COMPOSE_"))}
    env.update(AH_DB_PASSWORD="db-secret", AH_READER_PASSWORD="reader-secret")
    args = [COMPOSE, "-f", str(REPO / "compose.yaml"), "--project-directory", str(REPO)]
    for p in profile:
        args += ["--profile", p]
    done = subprocess.run([*args, "config"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_compose_is_valid_without_the_profile_and_only_the_new_services_carry_it():
    services = _config()["services"]
    assert {n for n, s in services.items() if "observability" in s.get("profiles", [])} == OBSERVABILITY
    assert {n for n, s in services.items() if not s.get("profiles")} == {"db", "indexer", "embedder", "journal-sync"}


def test_compose_with_the_profile_pins_images_mounts_existing_files_and_passes_the_reader_password():
    cfg = _config("observability")
    services = cfg["services"]
    for name in OBSERVABILITY:
        image = services[name]["image"]
        tag = image.rsplit(":", 1)[1]
        assert tag not in ("latest", "") and any(ch.isdigit() for ch in tag), image
        for vol in services[name].get("volumes", []):
            source = vol.split(":", 1)[0]
            if source.startswith("/"):  # bind mounts are resolved to absolute paths
                assert Path(source).exists(), f"{name}: {source} missing"
    assert services["grafana"]["environment"]["AH_READER_PASSWORD"] == "reader-secret"
    assert "reader-secret" not in (REPO / "compose.yaml").read_text()
    assert {"promdata", "grafanadata", "pgdata"} <= set(cfg["volumes"])


def test_grafana_provisioning_names_the_dashboards_datasources():
    prov = REPO / "observability" / "grafana" / "provisioning"
    sources = yaml.safe_load((prov / "datasources" / "agent-history.yaml").read_text())["datasources"]
    by_uid = {s["uid"]: s for s in sources}
    assert by_uid[POSTGRES.uid]["type"] == POSTGRES.type_val
    assert by_uid[POSTGRES.uid]["user"] == "ah_reader"
    assert by_uid[POSTGRES.uid]["secureJsonData"]["password"] == "$AH_READER_PASSWORD"
    assert by_uid[PROMETHEUS.uid]["type"] == PROMETHEUS.type_val
    # every datasource a generated dashboard references is provisioned
    used = set()
    for rel, text in outputs().items():
        if rel.endswith(".json"):
            used |= {m for m in (POSTGRES.uid, PROMETHEUS.uid) if f'"uid": "{m}"' in text}
    assert used == set(by_uid)
    provider = yaml.safe_load((prov / "dashboards" / "agent-history.yaml").read_text())["providers"][0]
    grafana = _config("observability")["services"]["grafana"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in grafana["volumes"] if v.startswith("/")}
    assert Path(mounts[provider["options"]["path"]]) == REPO / "dashboards"
    assert {p.name for p in (REPO / "dashboards").glob("*.json")} == {
        "archive.json",
        "catalogue.json",
        "operations.json",
    }


def test_prometheus_loads_the_generated_rules_and_scrapes_the_collector():
    prom = yaml.safe_load((REPO / "observability" / "prometheus.yml").read_text())
    services = _config("observability")["services"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in services["prometheus"]["volumes"] if v.startswith("/")}
    (pattern,) = prom["rule_files"]
    rules_dir = Path(mounts[str(Path(pattern).parent)])
    assert [p.relative_to(REPO).as_posix() for p in rules_dir.glob(Path(pattern).name)] == [RULES_FILE]
    (target,) = prom["scrape_configs"][0]["static_configs"][0]["targets"]
    otel = yaml.safe_load((REPO / "observability" / "otel-collector.yaml").read_text())
    assert target == "otel-collector:" + otel["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    assert otel["exporters"]["prometheus"]["add_metric_suffixes"] is False
