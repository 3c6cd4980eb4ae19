"""80 columns, as the README promises (issue 25, item 6): tables keep what identifies a row whole
(uids, dates, file names), put titles and paths on lines of their own, and no line is wider than
the terminal. The real CLI on the real corpus (and the loop fixtures), at COLUMNS=80 on a pipe
and on a pty of 80 columns."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.corpus_db import cli_environment, corpus_db, corpus_resident, served  # noqa: F401 - fixtures
from tests.test_terminal_escapes import SGR, run_in_pty

PY = sys.executable
FIXTURE_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "loops" / "home"
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def environment(database, own_tmp: Path) -> dict[str, str]:
    return cli_environment(own_tmp, database.dsn, database.reader_dsn)


def cli(env: dict, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "agent_history", *args], env={**env, "COLUMNS": str(columns)},
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def narrow(env: dict, *args: str) -> list[str]:
    """The lines of ``agent-history ARGS`` at 80 columns; none wider than 80."""
    out = cli(env, *args)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines, args
    assert max(len(line) for line in lines) <= 80, "\n".join(line for line in lines if len(line) > 80)
    return lines


@pytest.fixture
def env(corpus_db, own_tmp, corpus_resident):  # noqa: F811
    """The test's own environment over the module's catalogue; its read commands answered by the
    module's resident query process (`served`; tests/test_query_service.py: the in-process output)."""
    return served(environment(corpus_db, own_tmp), corpus_resident)


@pytest.fixture
def loops_env(db, own_tmp):
    env = environment(db, own_tmp)
    done = cli(env, "index", "--home", str(FIXTURE_HOME))
    assert done.returncode == 0, done.stderr
    return env


def test_parse_at_80_columns_keeps_every_file_name_and_figure(env, corpus_home):
    data = json.loads(cli(env, "parse", str(corpus_home), "--json").stdout)["files"]
    lines = narrow(env, "parse", str(corpus_home))
    assert lines[0].split() == ["agent", "sessions", "msgs", "prompts", "calls", "tokens", "tools", "errs", "issues"]
    records = [(lines[i], lines[i + 1]) for i in range(1, len(lines) - 1) if lines[i + 1].startswith("  /")]
    assert len(records) == len(data)
    for (figures, path), f in zip(records, data, strict=True):
        assert "…" not in figures
        calls = "-" if f["model_calls"] is None else str(f["model_calls"])  # unknown: no usage recorded
        assert figures.split() == [f["agent"], str(f["sessions"]), str(f["messages"]), str(f["human_prompts"]),
                                   calls] + figures.split()[5:], (figures, f)  # fmt: skip
        assert path.endswith(Path(f["path"]).name), (path, f["path"])  # the file name whole


def test_loops_at_80_columns_keep_ids_statuses_repos_and_dates_whole(loops_env):
    rows = json.loads(cli(loops_env, "loops", "--json").stdout)["loops"]
    assert len(rows) == 11
    lines = narrow(loops_env, "loops")
    firsts = [line for line in lines[1:] if not line.startswith("  ")]
    assert len(firsts) == len(rows)
    for line, row in zip(firsts, rows, strict=True):
        started = row["started_at"][:16].replace("T", " ")
        assert line.split()[:4] == [str(row["id"]), row["status"], row["repo"], str(row["loop_number"])], line
        assert started in line, (started, line)


def test_loop_at_80_columns_keeps_the_root_uid_paths_and_dates_whole(loops_env):
    with psycopg.connect(loops_env["AGENT_HISTORY_DSN"]) as conn:
        loop_id = conn.execute("SELECT id FROM ah.loops WHERE repo = 'widgets' AND loop_number = 1").fetchone()[0]
    detail = json.loads(cli(loops_env, "loop", str(loop_id), "--json").stdout)
    lines = narrow(loops_env, "loop", str(loop_id))
    text = "\n".join(lines)
    (loop,) = detail["loops"]
    for whole in (loop["root_session_uid"], loop["closeout_path"], loop["charter_path"], "2026-05-03 09:00",
                  "2026-05-03 09:10", "landed 2", "parked 1"):  # fmt: skip
        assert whole in text, whole
    lane = detail["lanes"][0]
    assert any(line.split()[:2] == ["1", f"{lane['session_uid'][:13]}/{lane['agent_id']}"] for line in lines), text


def test_efficiency_at_80_columns_is_one_readable_record_per_thread(env):
    threads = json.loads(cli(env, "efficiency", "--json").stdout)["threads"]
    lines = narrow(env, "efficiency")
    assert lines[0].split() == ["started", "agent", "thread", "role", "calls", "poll"]
    firsts = [line for line in lines[1:] if not line.startswith("  ")]
    assert len(firsts) == len(threads) + 1  # and the totals
    for line, t in zip(firsts, threads, strict=False):
        uid = t["session_uid"][:13] + (f"/{t['agent_id']}" if t["agent_id"] else "")
        assert uid in line.split(), (uid, line)
        if t["started_at"]:
            assert t["started_at"][:16].replace("T", " ") in line
        assert line.split()[-2] == str(t["calls"])
    triggers = [line for line in lines if line.startswith("  user ")]
    assert len(triggers) == len(threads) + 1 and all("model " in line and "work " in line for line in triggers)


def test_search_and_why_hit_headers_never_wrap_a_uid_at_80_columns(env, corpus_db):  # noqa: F811
    hits = json.loads(cli(env, "search", "build failed", "-n", "8", "--json").stdout)["hits"]
    text = "\n".join(narrow(env, "search", "build failed", "-n", "8"))
    for h in hits:
        assert h["session_uid"] in text, h["session_uid"]
    with psycopg.connect(corpus_db.dsn) as conn:
        sha, uid = conn.execute(
            "SELECT g.sha, s.session_uid FROM ah.git_event AS g JOIN ah.session AS s ON s.id = g.session_id "
            "WHERE g.op = 'commit' ORDER BY g.id LIMIT 1"
        ).fetchone()
    why = "\n".join(narrow(env, "why", sha))
    assert sha[:7] in why and uid in why


def test_session_at_80_columns_wraps_texts_inside_their_indent(env):
    lines = narrow(env, "session", "9e953218", "--to", "20")
    assert lines[0] == "9e953218-585f-4692-89df-9e0747a31c68"
    heads = [line for line in lines if re.match(r"^ {0,4}\d+ (\d{4}-\d\d-\d\d \d\d:\d\d|-) ", line)]
    assert len(heads) == 20
    assert lines[4] == "health A (90): tool failures 10.9% ≥ 10% (−10)"
    assert lines[5] == "events 1–20 of 173" and lines[-1] == "153 more events (--from 21, or --all)"
    body = [line for line in lines[6:-1] if line not in heads and line.strip()]
    assert body and all(line.startswith("      ") for line in body)


def test_usage_blocks_fit_80_columns(env):
    blocks = json.loads(cli(env, "usage", "blocks", "--json").stdout)["blocks"]
    text = "\n".join(narrow(env, "usage", "blocks"))
    for b in blocks:  # the table shows a gap's start to the second (its JSON keeps the fraction)
        assert re.sub(r"\.\d+Z$", "Z", b["startTime"]) in text


def test_search_on_an_80_column_terminal_keeps_uids_on_one_line(env):
    out = SGR.sub(b"", run_in_pty(["search", "build failed", "-n", "5"], env, columns=80)).decode()
    lines = out.replace("\r\n", "\n").splitlines()
    assert lines and max(len(line) for line in lines) <= 80, out
    uids = UID.findall(out)
    assert len(uids) >= 5  # each hit's session uid, whole, on one line
