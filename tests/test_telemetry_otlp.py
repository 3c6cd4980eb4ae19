"""Metrics end to end (issue 13): `index --every` in a subprocess exporting to a real OTLP/HTTP
receiver on loopback (decoded with opentelemetry-proto); the label guard through the SDK; a
failing collector; a hanging receiver; no endpoint → no socket, no OpenTelemetry import."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from agent_history import __version__
from agent_history.config import load_settings
from agent_history.db.connection import Database
from agent_history.db.prices import priced_model_ids
from agent_history.harnesses import HARNESSES
from agent_history.ingest.discovery import Source, home_layout, iter_files
from agent_history.telemetry.collectors import COLLECTORS
from agent_history.telemetry.families import FAMILIES, LABEL_PATTERNS
from agent_history.telemetry.otlp import start_metrics
from agent_history.telemetry.policy import ModelLabels, Sample, resolve_label_values
from tests.embed_corpus import embed_server, topic_db, topic_home  # noqa: F401 - fixtures
from tests.homes import copy_home
from tests.otlp_receiver import Receiver, points, resource_attributes, values
from tests.test_telemetry import LOOP_CLOCK, LOOP_STATUSES, merged_home, poll_shares

PY = sys.executable


@pytest.fixture
def home(corpus_home, tmp_path) -> Path:
    return copy_home(corpus_home, tmp_path / "home")


@pytest.fixture
def loops_home(corpus_home, tmp_path) -> Path:
    """The corpus plus fixtures/loops/home and fixtures/efficiency/home (loops, classified threads)."""
    return merged_home(corpus_home, tmp_path / "merged")


def clean_env(cli_env: dict) -> dict:
    env = {k: v for k, v in cli_env.items() if not k.startswith("OTEL_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_index(env: dict, home: Path, every: int = 60, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PY, *extra, "-m", "agent_history", "index", "--home", str(home), "--every", str(every)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def next_pass(proc: subprocess.Popen) -> str:
    """Block until the process prints its next pass summary line."""
    for line in proc.stdout:
        if line.startswith("indexed"):
            return line
    raise AssertionError(f"no pass line; stderr: {proc.stderr.read()}")


def stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_index_every_exports_every_family_with_the_catalogue_values(cli_env, db, loops_home, tmp_path):
    from agent_history.ingest.loops import refresh_loops

    home = loops_home
    cold = tmp_path / "cold" / ".claude"
    shutil.copytree(home / ".claude", cold)
    dropped_copy = sorted(cold.rglob("*.jsonl"))[0]
    dropped_copy.unlink()  # one hot file not yet copied
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(
        f'[cold_sources]\nclaude-local = "{cold}"\n'
        '[embedding]\nprovider = "openai"\nmodel = "text-embedding-3-small"\n'  # never contacted by index
    )
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute("SELECT 1")
    with Receiver() as receiver:
        env = clean_env(cli_env) | {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        proc = start_index(env, home, 3600)  # one pass: the next one is an hour away
        next_pass(proc)
        # the pass filled the loops at the wall clock (all long over); recompute their statuses
        # at the fixture's afternoon so some run and the idle family has a value
        with psycopg.connect(db.dsn, autocommit=True) as conn, conn.transaction():
            assert refresh_loops(conn, [], now=LOOP_CLOCK) == 5  # the loops not finished
        code, err = stop(proc)  # no pass after the signal: the loops stay as recomputed
        assert code == 0, err
        assert "Traceback" not in err
        assert set(receiver.paths) == {"/v1/metrics"}
        last = receiver.requests[-1]

    assert resource_attributes(last) == [{"service.name": "agent-history-index", "service.version": __version__}]
    got = points(last)
    # every family arrives but the CI waits: no thread of this home pushes and then sees CI finish
    # (fixtures/operations does: tests/test_agent_efficiency.py)
    missing = {"agent_efficiency_ci_waits", "agent_efficiency_ci_wait_seconds"}
    assert {p.name for p in got} == {f.name for f in FAMILIES} - missing
    # every label value is in its declared set; counters cumulative and monotonic
    with psycopg.connect(db.dsn) as conn:
        aliases = priced_model_ids(conn)
        message_rows = conn.execute("SELECT count(*) FROM ah.message").fetchone()[0]
        calls = Counter()
        for trigger, role, api_error in conn.execute(
            "SELECT c.trigger, s.thread_role, c.is_api_error FROM ah.model_call c JOIN ah.session s ON s.id = c.session_id"
        ):
            if not api_error:  # API-error notices are not calls (sql/35_efficiency.sql)
                calls[(("role", role), ("trigger", trigger or "unclassified"))] += 1
        shares = poll_shares(conn)
        statuses = Counter(r[0] for r in conn.execute("SELECT status FROM ah.loops"))
        run = conn.execute("SELECT files_changed, bytes_read FROM ah.index_run WHERE status = 'ok'").fetchone()
    # every namespace of the home, and the project harnesses' (Aider, Crush: found in known projects)
    projects = [f"{h.name}-local" for h in HARNESSES if h.layout.projects]
    allowed = resolve_label_values([*home_layout(Path(home)), *projects], ModelLabels((), aliases=aliases))
    declared = {f.name: f for f in FAMILIES}
    for p in got:
        assert sorted(k for k, _ in p.labels) == sorted(declared[p.name].labels), p
        assert all(
            re.fullmatch(LABEL_PATTERNS[k], v) if k in LABEL_PATTERNS else v in allowed[k] for k, v in p.labels
        ), p
        if declared[p.name].kind == "counter":
            assert (p.kind, p.temporality, p.monotonic) == ("sum", 2, True), p  # 2 = CUMULATIVE
        else:
            assert p.kind == "gauge", p
    # catalogue values equal the catalogue; parse issues by kind equal `agent-history issues`
    assert values(last, "ah_catalogue_rows")[(("table", "message"),)] == message_rows == 1646
    listed = subprocess.run(
        [PY, "-m", "agent_history", "issues", "--json", "--limit", "1000"],  # the most it lists (more than there are)
        env=clean_env(cli_env),
        capture_output=True,
        text=True,
        check=True,
    )
    issues = json.loads(listed.stdout)
    assert len(issues) < 1000  # all of them listed
    kinds = Counter(i["kind"] for i in issues)
    assert {k[0][1]: v for k, v in values(last, "ah_catalogue_parse_issues").items() if v} == dict(kinds)
    # archive: hot files as discovery finds them, the cold copy one short
    hot_claude = len(list(iter_files(Source("claude-local", "claude", home / ".claude"))))
    files = values(last, "ah_archive_files")
    hot = (("namespace", "claude-local"), ("tier", "hot"))
    assert files[hot] == hot_claude == 29 + 9 + 2  # corpus, loops, efficiency
    assert files[(("namespace", "claude-local"), ("tier", "cold"))] == hot_claude - 1
    assert values(last, "ah_archive_uncopied_files") == {(("namespace", "claude-local"),): 1}
    # runs: the one pass, as ah.index_run recorded it
    idx = (("run", "index"),)
    assert values(last, "ah_runs_total") == {
        (("outcome", "success"), ("run", "index")): 1,
        (("outcome", "failure"), ("run", "index")): 0,
    }
    assert values(last, "ah_run_files_changed")[idx] == run[0] == 56  # every file of the merged home
    assert values(last, "ah_run_read_bytes")[idx] == run[1]
    assert values(last, "ah_run_lock_held")[idx] == 0
    # efficiency from the interface tables; self-health all green, nothing dropped
    assert values(last, "ah_model_calls") == dict(calls)
    assert sum(calls.values()) == 1538
    assert values(last, "ah_poll_share_ratio") == pytest.approx(shares)
    assert {k[0][1]: round(v, 4) for k, v in shares.items()} == {"root": 0.1075, "worker": 0.12, "solo": 0.0148}
    assert values(last, "ah_loops") == {(("loop_status", s),): statuses[s] for s in LOOP_STATUSES}
    assert values(last, "ah_loops")[(("loop_status", "running"),)] == 3
    assert values(last, "ah_loop_root_idle_max_seconds")[()] > 0
    assert set(values(last, "ah_collector_success").values()) == {1}
    assert len(values(last, "ah_collector_success")) == 6
    assert set(values(last, "ah_telemetry_dropped_samples_total").values()) == {0}
    assert values(last, "ah_embeddings")[(("embedding_status", "done"),)] == 0


def test_a_failing_collector_shows_success_0_and_the_pass_still_succeeds(cli_env, db, home):
    with psycopg.connect(db.dsn, autocommit=True) as conn:  # the real ah.efficiency, drifted
        conn.execute("ALTER VIEW ah.efficiency RENAME COLUMN n_wait TO n_wait_renamed")
    with Receiver() as receiver:
        proc = start_index(
            clean_env(cli_env) | {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": receiver.endpoint + "/v1/metrics"}, home
        )
        summary = next_pass(proc)
        code, err = stop(proc)
        last = receiver.requests[-1]
    assert code == 0 and "Traceback" not in err
    assert "0 failed" not in summary and summary.startswith("indexed: ")
    assert 'metrics: collector efficiency failed: column "n_wait" does not exist' in err.splitlines()
    success = values(last, "ah_collector_success")
    assert success == {(("collector", c),): (0 if c == "efficiency" else 1) for c in (*COLLECTORS, "self")}
    assert values(last, "ah_catalogue_rows")[(("table", "message"),)] == 1588
    assert values(last, "ah_tokens") == {}
    assert values(last, "ah_run_success") == {(("run", "index"),): 1}


def test_a_hanging_receiver_does_not_stall_the_passes(cli_env, home):
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text("[metrics]\ninterval = 1\n")
    with Receiver(hang=True) as receiver:
        env = clean_env(cli_env) | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "2",
        }
        proc = start_index(env, home, every=1)
        next_pass(proc)
        assert receiver.arrived.wait(120), "no export reached the receiver"
        next_pass(proc)  # passes go on while an export hangs
        next_pass(proc)
        code, err = stop(proc)
    assert code == 0, err
    assert "Traceback" not in err
    # the SDK's complaint as one line, not once per interval (consecutive repeats suppressed)
    # (besides the one-line notes about the other harnesses' default homes, absent here)
    lines = [
        line for line in err.splitlines() if not (line.startswith("skipped ") and line.endswith(" does not exist"))
    ]
    assert "metrics: Failed to export metrics batch due to timeout, max retries or shutdown." in lines
    assert all(line.startswith("metrics: ") for line in lines), lines
    assert all(a != b for a, b in zip(lines, lines[1:], strict=False)), lines


def test_no_endpoint_opens_no_socket_and_imports_no_opentelemetry(cli_env, home):
    listeners = []
    for port in (4318, 0):  # the SDK's default endpoint, and one named by an unrelated variable
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        s.listen()
        s.setblocking(False)
        listeners.append(s)
    assert listeners
    env = clean_env(cli_env) | {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://127.0.0.1:{listeners[-1].getsockname()[1]}"
    }
    proc = start_index(env, home, 1, "-X", "importtime")
    next_pass(proc)
    next_pass(proc)
    code, err = stop(proc)
    assert code == 0
    assert "opentelemetry" not in err
    for s in listeners:
        with pytest.raises(BlockingIOError):
            s.accept()
        s.close()


def test_bad_endpoint_or_timeout_is_a_one_line_error(cli_env, home):
    for extra in (
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "soon",
        },
    ):
        r = subprocess.run(
            [PY, "-m", "agent_history", "index", "--home", str(home), "--every", "60"],
            env=clean_env(cli_env) | extra,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: OTEL_EXPORTER_OTLP_"), r.stderr


def test_a_bad_label_is_dropped_and_counted_through_the_exporter(cli_env, db, monkeypatch):
    def leaky(conn, ctx):
        return [
            Sample.of("ah_catalogue_lag_bytes", 7, namespace="claude-local"),
            Sample.of("ah_catalogue_lag_bytes", 9, namespace="/home/someone/.claude/projects/x.jsonl"),
        ]

    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        database = Database(load_settings())
        hot = [Source("claude-local", "claude", Path(cli_env["HOME"]) / ".claude")]
        metrics = start_metrics("index", database, hot, collectors={"catalogue": leaky})
        metrics.close()
        last = receiver.requests[-1]
    assert values(last, "ah_catalogue_lag_bytes") == {(("namespace", "claude-local"),): 7}
    # dropped once per round: the thread's first round and close()'s final one
    assert values(last, "ah_telemetry_dropped_samples_total")[(("family", "ah_catalogue_lag_bytes"),)] == 2
    assert all("/" not in v for p in points(last) for _, v in p.labels)


def test_embed_every_exports_its_runs_as_the_embed_service(topic_db, cli_env, embed_server, tmp_path):  # noqa: F811
    from tests.embed_server import MODEL_NAME

    db, _, _ = topic_db
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text(
        f'[embedding]\nprovider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\n'
    )
    with Receiver() as receiver:
        proc = subprocess.Popen(
            [PY, "-m", "agent_history", "embed", "--every", "60"],
            env=clean_env(cli_env) | {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = next(x for x in proc.stdout if x.startswith("embedded"))
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=120)
        code = proc.returncode
        # Exactly one pass: SIGTERM arrives while the loop waits for the next one, which then
        # never starts (cli/loop.run_every; before 08dece2 a signal in the wait ran one more
        # pass — the early ah_runs_total{run="embed"} = 2 this test used to absorb).
        passes = 1 + sum(1 for x in rest.splitlines() if x.startswith("embedded"))
        last = receiver.requests[-1]
    assert code == 0 and "Traceback" not in err, err
    assert resource_attributes(last) == [{"service.name": "agent-history-embed", "service.version": __version__}]
    with psycopg.connect(db.dsn) as conn:
        embedded = conn.execute("SELECT count(*) FROM ah.embedding").fetchone()[0]
    emb = (("run", "embed"),)
    assert f"{embedded:,} new vectors" in line
    assert passes == 1, rest
    assert values(last, "ah_runs_total") == {
        (("outcome", "success"), ("run", "embed")): 1,
        (("outcome", "failure"), ("run", "embed")): 0,
    }, (rest, err)
    assert values(last, "ah_run_success") == {emb: 1}
    assert values(last, "ah_run_lock_held") == {emb: 0}
    assert values(last, "ah_embeddings")[(("embedding_status", "done"),)] == embedded > 0
    assert values(last, "ah_embeddings")[(("embedding_status", "pending"),)] == 0
    assert emb in values(last, "ah_run_last_success_timestamp_seconds")
    assert "ah_run_read_bytes" not in {p.name for p in points(last)}  # an embed pass reads no transcript
