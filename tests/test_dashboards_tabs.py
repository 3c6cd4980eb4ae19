"""The catalogue dashboard's 21 tabs (issue 32): each states its question, ends with its metric
side, and every SQL panel runs as ``ah_reader`` on a real catalogue with exact values — the
shared corpus, the loops and efficiency fixture homes, a collected git repository with recorded
CI runs (a fake ``gh`` printing the recorded `gh run list` output) and one crafted session with
review steps and history look-ups, written through the loader's writer."""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.collect import collect
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.model.rows import SubagentSpawnRow, ToolCallRow
from dashboards import catalogue
from dashboards.catalogue_tabs import METRIC_PANELS
from dashboards.generate import outputs
from dashboards.sdk import PromPanel
from tests.catalogue_rows import T0, session, write
from tests.conftest import TestDatabase
from tests.corpus_db import corpus_db  # noqa: F401 - fixture
from tests.git_repos import ME, build_project, git
from tests.grafana_sql import load, run, targets, variable_options
from tests.test_collect_ci import RECORDED

ROOT = Path(__file__).resolve().parents[1]
START = datetime(2000, 1, 1, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)

#: The tabs, in order, with the question each answers (its description).
TABS = [
    ("Overview", "How much did the agents do and what did it cost, by day, agent, namespace and model?"),
    ("Cost by model, agent, project and branch", "What does the work cost at list price, per model, agent, project and git branch?"),
    ("Tokens by bucket and cache hit ratio", "Where do the tokens go — uncached input, cache reads and writes, output — and how much input comes from cache?"),
    ("Model calls by trigger and role", "What made the agents call the model — a person, their own reply, tool work, a status look, a wait — in root, worker and solo threads?"),
    ("Thread states", "What kinds of threads run (root, worker, solo), and how long do they wait on tools and sub-agents?"),
    ("Polls and waits", "How much of the agents' calling is waiting or checking status, in which threads, and on which commands?"),
    ("Sub-agents and spawns", "How often do agents spawn sub-agents, of which type, and what do the children cost?"),
    ("Gates", "Which test, lint, type-check and build commands did the agents run, and how often did they pass?"),
    ("CI waits", "How long do agents wait on CI, how often do they look, and how do the runs end?"),
    ("Reviews", "How often do agents ask for a review, who reviews (a sub-agent or a person on GitHub), and what came back?"),
    ("Tool failures by class", "Which tools and commands fail, how, and with what message?"),
    ("Human interventions", "How often do people step in — interrupting, denying a tool, correcting after a failure, queueing prompts?"),
    ("Session health", "Which sessions went badly (grade A–F from failures, retries, interrupts, compactions, polling, the end), and why?"),
    ("Loops", "How did the long-running loops go: which are running, waiting or stale, what did each cost, how many lanes, what landed?"),
    ("Lanes", "Which lanes did the loops run, how were they linked to their loop, and what did they return?"),
    ("Git and commits", "What did the agents commit and push, in which repository, and why?"),
    ("Tasks", "Which backlog tasks exist in the collected repositories, in which status, and how did they move?"),
    ("Files most touched", "Which files do the agents touch most, and how?"),
    ("Search and recall use", "How often do agents look up their own history (search, find_sessions, recall, why …), and with what?"),
    ("Ingest health", "Does the indexer keep up: last good pass, bytes not yet read, parse issues, pending post-pass and embedding work?"),
    ("Embeddings", "Are the transcripts embedded: how many chunks have a vector per model, what is spent, and what failed?"),
]  # fmt: skip

#: Panels this catalogue has no data for, and why (asserted empty; the embedding panels' real
#: values on an embedded catalogue: tests/test_dashboards_embeddings.py).
NO_DATA = {
    "Chunks by model and state": "built without an embedding endpoint (no chunks are written)",
    "Embedding spend by day": "built without an embedding endpoint",
    "Embedding failures by model": "built without an embedding endpoint",
}


def test_21_tabs_each_state_their_question_and_end_with_their_metric_side():
    dash = load(outputs()["dashboards/catalogue.json"])
    rows = [p for p in dash["panels"] if p["type"] == "row"]
    questions = [p["options"]["content"] for p in dash["panels"] if p["type"] == "text"]
    assert [(r["title"], q) for r, q in zip(rows, questions, strict=True)] == [(t, f"**{q}**") for t, q in TABS]
    assert list(METRIC_PANELS) == [
        "overview", "cost", "tokens", "triggers", "thread_states", "polls", "subagents", "gates", "ci_waits",
        "reviews", "tool_failures", "human", "health", "loops", "lanes", "git", "tasks", "files", "search",
        "ingest", "embeddings",
    ]  # fmt: skip
    for section, key in zip(catalogue.SECTIONS, METRIC_PANELS, strict=True):
        hook = METRIC_PANELS[key]
        assert section.panels[len(section.panels) - len(hook) :] == hook, section.title
        assert all(isinstance(p, PromPanel) for p in hook)


def _fake_gh(tmp: Path, project: Path) -> str:
    """A PATH holding git and a `gh` printing the recorded `gh run list` output for `project`."""
    first = git(project, "log", "--format=%H", "--grep=Implement the first task", "main").strip()
    other = git(project, "rev-parse", "feat").strip()
    out = tmp / "recorded.json"
    out.write_text(RECORDED % {"sha": first, "other": other})
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "git").symlink_to(shutil.which("git"))
    (bindir / "gh").write_text(f"#!/bin/sh\nexec {shutil.which('cat')} '{out}'\n")
    (bindir / "gh").chmod((bindir / "gh").stat().st_mode | stat.S_IEXEC)
    return str(bindir)


def _bash(uid: str, sess: str, command: str, n: int, *, failed: bool = False) -> ToolCallRow:
    return ToolCallRow(
        agent="claude",
        tool_call_uid=uid,
        session_uid=sess,
        name="Bash",
        input=json.dumps({"command": command}),
        output="x",
        is_error=failed,
        outcome="error" if failed else "ok",
        byte_offset=n * 100,
    )


@pytest.fixture(scope="module")
def tabs_db(corpus_db, pg_server, tmp_path_factory):  # noqa: F811
    from agent_history.db.roles import READER

    name = f"d_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {corpus_db.name}")
    db = TestDatabase(name, pg_server.dsn(name), pg_server.dsn(name, user=READER), pg_server)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        for home in (ROOT / "fixtures" / "loops" / "home", ROOT / "fixtures" / "efficiency" / "home"):
            sources = [Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()]
            assert Loader(conn).run(sources).files_failed == 0
    sess = "7ab5-review-and-recall"
    write(
        db.dsn,
        [
            session(sess, title="Review the pool change"),
            _bash("rv1", sess, "gh pr create --title 'Pool' --reviewer alice", 1),
            _bash("rv2", sess, "gh pr view 12 --comments", 2),
            _bash("rv3", sess, "gh pr review 12 --request-changes -b 'timeouts'", 3),
            _bash("rv4", sess, "gh pr review 12 --approve", 4, failed=True),
            _bash("rv5", sess, "gh pr review 12 --approve", 5),
            _bash("lk1", sess, "agent-history why 1a2b3c4", 6),
            ToolCallRow(
                agent="claude",
                tool_call_uid="lk2",
                session_uid=sess,
                name="mcp__agent-history__search",
                input=json.dumps({"query": "pool timeout"}),
                output="[]",
                is_error=False,
                outcome="ok",
                byte_offset=700,
            ),
            SubagentSpawnRow(
                agent="claude", spawn_uid="sp1", session_uid=sess, subagent_type="code-reviewer", ts=T0, byte_offset=800
            ),
        ],
        path="/t/review-and-recall.jsonl",
    )
    tmp = tmp_path_factory.mktemp("collected")
    project = build_project(tmp)
    git(project, "remote", "add", "github", "https://github.com/example/project.git")  # never contacted
    path = os.environ["PATH"]
    os.environ["PATH"] = _fake_gh(tmp, project)
    try:
        with psycopg.connect(db.dsn, autocommit=True) as conn:
            assert collect(conn, [project], [ME[1]]).repositories[0].ci_runs == 2
    finally:
        os.environ["PATH"] = path
    yield db
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _results(db: TestDatabase) -> dict[str, list[tuple]]:
    dash = load(outputs()["dashboards/catalogue.json"])
    out = {}
    with psycopg.connect(db.reader_dsn) as conn:
        variables = variable_options(conn, dash)
        for t in targets(dash):
            if t.datasource == "grafana-postgresql-datasource":
                out[t.panel] = run(conn, t, variables, START, END)
    return out


def _python_gates_and_reviews(db: TestDatabase) -> tuple[list[tuple], dict, list[tuple]]:
    """Gate runs by kind (gate, passed, failed, unknown), failed runs per (session, gate) and
    review events (event, calls), counted with `classify.activity` over every tool call."""
    from collections import Counter

    from agent_history.classify import activity

    runs: dict[str, Counter] = {}
    failing: Counter = Counter()
    reviews: Counter = Counter()
    with psycopg.connect(db.dsn) as conn:
        rows = conn.execute(
            "SELECT t.session_id, t.agent, t.name, t.input, t.output, t.is_error, t.exit_code FROM ah.tool_call t"
        ).fetchall()
    for session_id, agent, name, inp, out, is_error, exit_code in rows:
        tool = activity.Tool("", name, inp, out, is_error, exit_code, None, None, None, None, None)
        command = activity.shell_command(agent, tool)
        gate = activity.gate_of(command)
        if gate is not None:
            result = activity.gate_result(tool)
            runs.setdefault(gate, Counter())[result] += 1
            failing[(session_id, gate)] += result == "fail"
        if not is_error and (event := activity.review_event(command, out)) is not None:
            reviews[event] += 1
    gates = [(g, c["pass"], c["fail"], c["unknown"]) for g, c in sorted(runs.items())]
    return gates, failing, sorted(reviews.items(), key=lambda kv: (-kv[1], kv[0]))


def test_every_sql_panel_runs_as_reader_and_only_the_embedding_panels_are_empty(tabs_db):
    got = _results(tabs_db)
    assert len(got) == 71
    assert {title for title, rows in got.items() if not rows} == set(NO_DATA)


def test_new_tabs_exact_values(tabs_db):
    got = _results(tabs_db)
    # Cost: the per-model, per-agent costs add up to the overview's list-price cost
    by_agent = dict(got["Cost by agent"])
    assert by_agent == {
        "claude": Decimal("70.275712"),
        "pi": Decimal("60.068038"),
        "codex": Decimal("0.453214"),
    }
    assert sum(by_agent.values()) == got["List-price cost"][0][0] == Decimal("130.796964")
    assert got["Cost by model"][0] == ("claude-sonnet-4-20250514", 264, Decimal("60.549657"), 0)
    assert got["Cost by project"][:2] == [("pi-mono", 2, Decimal("60.066688")), ("streaming", 2, Decimal("58.763715"))]
    assert got["Cost by branch"][1] == ("streaming", "feature-branch", 2, Decimal("58.763715"))
    # Tokens: buckets add up to the overview's tokens; the cache hit ratio of the top model
    assert sum(r[1] for r in got["Tokens by bucket"]) == got["Tokens"][0][0] == 174526862
    assert got["Cache hit ratio by model"][0] == (
        "claude-sonnet-4-20250514",
        Decimal("69655129"),
        Decimal("72308844"),
        Decimal("0.9633"),
    )
    # Triggers by day add up to the classified and unclassified calls
    assert sum(r[2] for r in got["Model calls by trigger and day"]) == sum(sum(r[1:]) for r in got["Triggers by role"])
    assert got["Threads by role"] == [("solo", 28), ("root", 16), ("worker", 9)]
    assert got["Time waiting on sub-agents"][0] == ("general-purpose", 1, 1, Decimal("234.0"))
    assert got["Wait and status commands"][:2] == [("status", "git", 24, None), ("wait", "sleep", 5, None)]
    # Gates: what the classifier's Python rules give over every tool call (the SQL twin is the panel)
    gates, failing, reviews = _python_gates_and_reviews(tabs_db)
    assert got["Gate runs by kind"] == gates
    assert gates == [("build", 43, 0, 0), ("lint", 4, 1, 0), ("test", 8, 4, 0), ("typecheck", 6, 6, 0)]
    assert got["Sessions with failing gates"][0][3] == max(failing.values())
    # CI: one `gh pr checks` look in the corpus; the recorded runs of the collected repository
    assert got["CI looks and watches"] == [("look", 1, None, 0)]
    assert got["CI runs by conclusion"] == [("in_progress", 1, Decimal("9.0")), ("success", 1, Decimal("218.0"))]
    # Reviews: the crafted session
    assert got["Review sub-agents"] == [("code-reviewer", 1, 0, None)]
    assert got["Review commands"] == reviews
    # corpus session 0fae0449 opens a pull request; the crafted session: `gh pr create --reviewer`,
    # one failed (not counted) and one good approval, changes requested
    assert reviews == [("requested", 2), ("approved", 1), ("changes_requested", 1)]
    # Human interventions
    assert got["Interventions by kind"] == [
        ("correction after a failure", 14, 5),
        ("denial", 8, 3),
        ("interrupt", 8, 3),
        ("queued prompt", 1, 1),
    ]
    # Session health: grades of every thread, the signals that cost points
    assert got["Sessions by grade"] == [("A", 45), ("B", 6), ("C", 2)]  # the crafted session: B
    assert got["Signals that cost points"] == [
        ("tool failures", 9),
        ("interrupts", 5),
        ("poll share", 4),
        ("compactions", 2),
        ("retries of a failing call", 1),  # the crafted session's repeated `gh pr review --approve`
        ("ended in an error", 1),
    ]
    assert got["Worst sessions"][0][2:5] == ("I see four uncommitted files?", "C", 75)
    # Lanes, collected commits, tasks, history look-ups
    assert sorted(r[0] for r in got["Lanes by link and return"]) == ["heuristic", "lineage"]
    assert [(r[3], r[4]) for r in got["Lane sessions"]] == [("heuristic", "complete"), ("lineage", "complete")]
    assert got["Collected commits by repository"] == [("project", 7, 6, 47, 17)]
    assert got["Tasks by status"] == [("Done", 2)]
    assert [r[1:] for r in got["Status changes by day"]] == [("Done", 2), ("In Progress", 1), ("To Do", 2)]
    assert got["History look-ups by tool"] == [("search", 1, 0), ("why", 1, 0)]
    assert [r[3] for r in got["Latest history queries"]] == ["pool timeout", "agent-history why 1a2b3c4"]
