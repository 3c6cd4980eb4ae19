"""`collect`'s second half (issue 30): installed skills and plugins with the sessions that used
them, permission rules beside transcript denials, loop charter/closeout metadata (never the
body), and the incremental history cursor (a second run reads only what is new and the tables
equal a full read; a rewritten history is detected and re-read). Real git repositories and a
home laid out like ``~``, built by the tests; expected values computed here, from the files and
from `git`."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from agent_history.ingest.collect import collect
from agent_history.ingest.collect_installed import default_homes
from agent_history.ingest.rebuild import truncate_derived
from agent_history.model.rows import FileTouchRow
from agent_history.read.installed import list_skills, loop_files, permission_view
from tests.catalogue_rows import session, tool_call, write
from tests.git_repos import ME, at, build_project, git, task_file

SKILL = "---\nname: {name}\ndescription: {name} things\n---\n\n# {name}\n\nThe body, never stored elsewhere.\n"
CHARTER_BODY = "# Charter: project\n\nSECRET-CHARTER-BODY: lanes, budgets.\n"
CLOSEOUT_BODY = "# Closeout: project loop1 · Charter: {digest}\n\n## Landed\n\n- task-1\n"
PLUGINS = {
    "version": 2,
    "plugins": {
        "superpowers@obra-marketplace": [
            {"scope": "user", "installPath": "/x/cache/superpowers/3.2.1", "version": "3.2.1",
             "installedAt": "2026-10-01T00:00:00Z", "lastUpdated": "2026-10-01T00:00:00Z"}
        ]
    },
}  # fmt: skip


def _skill(base: Path, name: str, text: str | None = None) -> Path:
    path = base / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text if text is not None else SKILL.format(name=name))
    return path


@pytest.fixture
def laid_out(own_tmp: Path):
    home = own_tmp / "home"
    review = _skill(home / ".claude" / "skills", "review")
    _skill(home / ".claude" / "skills", "broken", "---\nname: [unclosed\n---\nbody\n")
    lint = _skill(home / ".codex" / "skills", "lint")
    _skill(home / ".pi" / "agent" / "skills", "notes")
    (home / ".claude" / "plugins").mkdir(parents=True)
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(PLUGINS))
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(npm test:*)", "Read"], "deny": ["Bash(rm:*)"]}})
    )
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{not json")
    project = build_project(own_tmp / "src")
    deploy = _skill(project / ".claude" / "skills", "deploy")
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"ask": ["WebFetch"]}}))
    (project / "codex").mkdir()
    charter = project / "codex" / "charter-project.md"
    charter.write_text(CHARTER_BODY)
    digest = hashlib.sha256(CHARTER_BODY.encode()).hexdigest()
    closeout = project / "codex" / "closeout-2026-11-02-loop1.md"
    closeout.write_text(CLOSEOUT_BODY.format(digest=digest))
    return home, project, {"review": review, "lint": lint, "deploy": deploy, "charter": charter, "closeout": closeout}


def _transcripts(dsn: str, files: dict[str, Path]) -> None:
    denied = replace(tool_call("d1", "s-claude", "Bash", '{"command": "rm -rf x"}', "denied", offset=300),
                     outcome="rejected", error_class="denied")  # fmt: skip
    write(
        dsn,
        [
            session("s-claude"),
            tool_call("k1", "s-claude", "Skill", json.dumps({"skill": "review"}), "ok", offset=100),
            tool_call("k2", "s-claude", "Skill", json.dumps({"skill": "superpowers:brainstorm"}), "ok", offset=200),
            denied,
        ],
    )
    write(
        dsn,
        [
            session("s-codex", agent="codex"),
            tool_call("r1", "s-codex", "shell", '{"command": "cat SKILL.md"}', "ok", agent="codex", offset=10),
            FileTouchRow(
                agent="codex",
                touch_uid="r1t",
                session_uid="s-codex",
                tool_call_uid="r1",
                path=str(files["lint"]),
                op="read",
                byte_offset=10,
            ),
        ],  # fmt: skip
        path="/t/codex.jsonl",
        namespace="codex-local",
        agent="codex",
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_skills_plugins_permissions_and_loop_files(db, laid_out):
    home, project, files = laid_out
    _transcripts(db.dsn, files)
    homes = default_homes(home=home, env={})
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = collect(conn, [project], [ME[1]], homes=homes)
        (r,) = summary.repositories
        assert (summary.user_skills, summary.user_permission_rules) == (4, 3)  # 3 skills + 1 plugin; 3 rules
        assert (r.skills, r.permission_rules, r.loop_files) == (1, 1, 2)
        broken = home / ".claude" / "skills" / "broken" / "SKILL.md"
        bad = [line for line in summary.lines if line.startswith("unreadable")]
        assert bad == [
            f"unreadable {broken}: front matter is not YAML: while parsing a flow sequence (the rest is collected)",
            f"unreadable {home}/.gemini/settings.json: settings file is not JSON: "
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1) (the rest is collected)",
        ]
        skills = {(s.harness, s.kind, s.name): s for s in list_skills(conn)}
        assert sorted(skills) == [
            ("claude", "plugin", "superpowers"), ("claude", "skill", "deploy"), ("claude", "skill", "review"),
            ("codex", "skill", "lint"), ("pi", "skill", "notes"),
        ]  # fmt: skip
        review, plugin = skills[("claude", "skill", "review")], skills[("claude", "plugin", "superpowers")]
        assert (review.version, review.sessions, review.session_uids) == (_sha(files["review"]), 1, ["s-claude"])
        assert (plugin.source, plugin.version, plugin.sessions) == ("obra-marketplace", "3.2.1", 1)
        assert skills[("codex", "skill", "lint")].session_uids == ["s-codex"]  # read its SKILL.md
        deploy = skills[("claude", "skill", "deploy")]
        assert (deploy.scope, deploy.repository, deploy.sessions) == ("project", "project", 0)
        rules, denials = permission_view(conn)
        assert [(x.scope, x.list, x.rule, x.denials) for x in rules] == [
            ("local", "ask", "WebFetch", 0),
            ("user", "allow", "Bash(npm test:*)", 1), ("user", "allow", "Read", 0), ("user", "deny", "Bash(rm:*)", 1),
        ]  # fmt: skip
        assert [(d.agent, d.tool, d.denials, d.sessions) for d in denials] == [("claude", "Bash", 1, 1)]
        assert [(f.kind, f.path, f.sha256, f.first_line, f.size_bytes) for f in loop_files(conn)] == [
            ("charter", "codex/charter-project.md", _sha(files["charter"]), "# Charter: project", len(CHARTER_BODY)),
            ("closeout", "codex/closeout-2026-11-02-loop1.md", _sha(files["closeout"]),
             files["closeout"].read_text().splitlines()[0], files["closeout"].stat().st_size),
        ]  # fmt: skip
        dump = "\n".join(
            str(row) for t in ("loop_run_metadata", "installed_skill") for row in conn.execute(f"SELECT * FROM ah.{t}")
        )
        assert "SECRET-CHARTER-BODY" not in dump and "never stored elsewhere" not in dump
        # a second run changes nothing; an uninstalled skill is kept, marked gone
        again = collect(conn, [project], [ME[1]], homes=homes)
        assert again.repositories[0].changed == 0
        (files["review"].parent / "SKILL.md").unlink()
        files["review"].parent.rmdir()
        collect(conn, [project], [ME[1]], homes=homes)
        assert ("claude", "skill", "review") not in {(s.harness, s.kind, s.name) for s in list_skills(conn)}
        (gone,) = [s for s in list_skills(conn, include_gone=True) if s.name == "review"]
        assert gone.gone and gone.session_uids == ["s-claude"]
        # authoritative: `rebuild` keeps them
        tables = ("installed_skill", "permission_rule", "loop_run_metadata", "collect_run")
        kept = {t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0] for t in tables}
        assert kept == {"installed_skill": 5, "permission_rule": 4, "loop_run_metadata": 2, "collect_run": 3}
        truncate_derived(conn)
        assert {t: conn.execute(f"SELECT count(*) FROM ah.{t}").fetchone()[0] for t in tables} == kept


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)


def test_cli_skills_permissions_closeouts(cli_env, db, laid_out):
    home, project, files = laid_out
    empty = _cli(cli_env, "skills")
    assert empty.returncode == 1 and "run `agent-history collect`" in empty.stdout
    env = dict(cli_env, HOME=str(home))
    out = _cli(env, "collect", str(project))
    assert out.returncode == 0, out.stderr
    assert "harness homes: 4 skills and plugins, 3 permission rules" in out.stdout
    assert "1 project skill, 1 permission rule, 2 charters and closeouts (full history read)" in out.stdout
    skills = json.loads(_cli(env, "skills", "--json", "--agent", "claude").stdout)["skills"]
    assert sorted(s["name"] for s in skills) == ["deploy", "review", "superpowers"]
    assert _cli(env, "skills", "--agent", "nope").returncode == 2  # an unknown agent: usage error
    none = _cli(env, "skills", "--agent", "gemini")  # collected, but none of this agent's
    assert none.returncode == 1 and none.stdout.startswith("no skill or plugin matches"), none.stdout
    perms = json.loads(_cli(env, "permissions", "--json").stdout)
    assert [r["rule"] for r in perms["rules"]] == ["WebFetch", "Bash(npm test:*)", "Read", "Bash(rm:*)"]
    # collected again from another home: the first home's user rules are no longer reported
    elsewhere = dict(cli_env, HOME=str(home.parent / "another-home"))
    assert _cli(elsewhere, "collect", str(project)).returncode == 0
    again = json.loads(_cli(elsewhere, "permissions", "--json").stdout)["rules"]
    assert [r["scope"] for r in again] == [r["scope"] for r in perms["rules"] if r["scope"] != "user"] != []
    text = _cli(env, "closeouts").stdout
    assert f"  sha256 {_sha(files['charter'])}" in text and "SECRET-CHARTER-BODY" not in text


def _state(conn: psycopg.Connection) -> dict[str, list[str]]:
    """The history tables without surrogate ids (a commit's files keyed by its sha)."""
    return {
        "commits": [r[0] for r in conn.execute(
            "SELECT (to_jsonb(c) - 'id' - 'repository_id')::text FROM ah.repo_commit AS c ORDER BY 1")],
        "files": [r[0] for r in conn.execute(
            "SELECT c.sha || ' ' || (to_jsonb(f) - 'commit_id')::text FROM ah.repo_commit_file AS f "
            "JOIN ah.repo_commit AS c ON c.id = f.commit_id ORDER BY 1")],
        "changes": [r[0] for r in conn.execute(
            "SELECT (to_jsonb(s) - 'id' - 'repository_id')::text FROM ah.backlog_status_change AS s ORDER BY 1")],
    }  # fmt: skip


def test_a_second_collect_reads_only_new_history_and_equals_a_full_read(db, own_tmp):
    project = build_project(own_tmp / "a")
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        first = collect(conn, [project], [ME[1]]).repositories[0]
        assert first.history == "full"
        unchanged = collect(conn, [project], [ME[1]]).repositories[0]
        assert (unchanged.history, unchanged.changed, unchanged.commits_new) == ("incremental", 0, 0)
        old_tips = git(project, "for-each-ref", "--format=%(objectname)", "refs/heads").split()
        # new work: a Done flip with a Task trailer on main, then wip (an old commit) merged in
        tasks = project / "backlog" / "tasks"
        (tasks / "task-2 - Second.md").write_text(task_file("task-2", "Second", "In Progress"))
        git(project, "add", "backlog/tasks/task-2 - Second.md")
        git(project, "commit", "-q", "-m", "Reopen the second task\n\nTask: task-2", at=at(8))
        git(project, "merge", "-q", "--no-ff", "wip", "-m", "Merge branch 'wip'", at=at(9))
        expected_new = git(project, "rev-list", "--branches", "--not", *old_tips).split()
        second = collect(conn, [project], [ME[1]]).repositories[0]
        assert second.history == "incremental" and second.commits_new == len(expected_new) == 2
        assert second.commits == len(git(project, "rev-list", "--branches").split())
        incremental = _state(conn)
        wip = git(project, "rev-parse", "wip").strip()
        assert conn.execute("SELECT on_default_branch, reached_default_at FROM ah.repo_commit WHERE sha = %s",
                            (wip,)).fetchone() == (True, at(9))  # fmt: skip
    # the same repository read once, in full, into an empty catalogue: identical tables
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM ah.repository")
        full = collect(conn, [project], [ME[1]]).repositories[0]
        assert full.history == "full"
        assert _state(conn) == incremental
        # a rewritten history (amend the tip of main): detected, everything read again
        git(project, "commit", "-q", "--amend", "-m", "Merge branch 'wip' (amended)", at=at(10))
        rewritten = collect(conn, [project], [ME[1]]).repositories[0]
        assert (rewritten.history, rewritten.commits_new) == ("rewritten", 1)
        tip = git(project, "rev-parse", "main").strip()
        assert conn.execute("SELECT subject, on_default_branch FROM ah.repo_commit WHERE sha = %s",
                            (tip,)).fetchone() == ("Merge branch 'wip' (amended)", True)  # fmt: skip
