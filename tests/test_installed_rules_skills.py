"""Installed things, the rest of issue 30: Codex execpolicy rules beside the other permission
settings, a SKILL.md front matter ``version``, and which sessions invoked which installed skill
(`invoked_skills`, `skills --sessions`) — a Claude Code ``Skill`` tool call and Codex's
``<skill>`` injection naming the SKILL.md. A home laid out like ``~`` and a real git repository,
built here; expected values written out by hand from the files.

No real ``~/.codex/rules`` file is in the shared corpus: `RULES` is hand-made in the two shapes
public ``.codex/rules/default.rules`` files show (the TUI's one-line "always allow" appends, and
multi-line rules with ``justification`` / ``match`` / ``not_match``), following the documented
format (developers.openai.com/codex "Rules"; openai/codex ``codex-rs/execpolicy/README.md``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_history.harnesses import HARNESSES
from agent_history.harnesses.spec import PLUGIN_FORMATS, RULE_FORMATS
from agent_history.ingest.collect import collect
from agent_history.ingest.collect_installed import default_homes
from agent_history.read.installed import invoked_skills, list_skills, permission_view
from agent_history.repos.installed import PLUGIN_READERS, RULE_READERS, execpolicy_rules, skills_in
from tests.catalogue_rows import T0, message, session, tool_call, write
from tests.git_repos import ME, build_project

RULES = """\
# hand-made (see the module docstring)
prefix_rule(pattern=["git", "push"], decision="allow")
prefix_rule(pattern=["/bin/zsh", "-lc", "rg \\"TODO\\" src"], decision="allow")

prefix_rule(
    pattern = ["git", ["status", "diff"]],
    decision = "prompt",
    justification = "Read-only, but ask first.",
    match = ["git status", ["git", "diff", "--staged"]],
    not_match = [["git", "log"]],
)

prefix_rule(pattern = ["rm"], decision = "forbidden", justification = "Move to the trash instead.")
prefix_rule(pattern = ["ls"])
host_executable(name = "git", paths = ["/usr/bin/git"])
"""
RULES_READ = [
    ("allow", "git push"),
    ("allow", "/bin/zsh -lc 'rg \"TODO\" src'"),
    ("ask", "git {status,diff}"),
    ("deny", "rm"),
    ("allow", "ls"),
]


def test_the_registry_rows_name_readers_that_exist():
    assert set(RULE_READERS) == set(RULE_FORMATS) and set(PLUGIN_READERS) == set(PLUGIN_FORMATS)
    rows = {h.name: h.installed for h in HARNESSES if h.installed is not None}
    assert sorted(rows) == ["claude", "codex", "gemini", "pi"]
    for name, places in rows.items():
        assert all(fmt in PLUGIN_FORMATS for _, fmt in places.plugins), name
        for spec in places.permissions:
            assert spec.fmt in RULE_FORMATS and spec.scope in ("user", "project", "local"), (name, spec)
            assert bool(spec.lists) == (spec.fmt == "json"), (name, spec)  # only JSON files have key lists
        assert not any(p.startswith(("/", "~")) for p in (*places.user_skills, *places.project_skills)), name


def _rules(tmp: Path, text: str) -> tuple[list[tuple[str, str]], list[str]]:
    path = tmp / "x.rules"
    path.write_text(text)
    rules, problems = execpolicy_rules(path, "codex", "user")
    return [(r.list, r.rule) for r in rules], [p.detail for p in problems]


def test_execpolicy_rules_read_as_allow_ask_deny(own_tmp):
    assert _rules(own_tmp, RULES) == (RULES_READ, [])
    assert execpolicy_rules(own_tmp / "missing.rules", "codex", "user") == ([], [])


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('prefix_rule(pattern=["git"], decision="maybe")\n', "decision 'maybe' is not allow, prompt or forbidden"),
        ('prefix_rule(decision="allow")\n', "prefix_rule has no pattern list"),
        ('prefix_rule(pattern=["git", 3])\n', "a pattern element must be a token or a list of tokens, not 3"),
        ('prefix_rule(["git"], "allow")\n', "prefix_rule takes keyword arguments only"),
        ('prefix_rule(pattern=["git"])\nallowed = ["ls"]\n', "line 2: not a prefix_rule(…) call"),
        ("prefix_rule(pattern=[HOME])\n", "prefix_rule argument is not a literal: malformed node or string"),
    ],
)
def test_a_rules_file_codex_could_not_load_is_one_problem(own_tmp, text, detail):
    rules, problems = _rules(own_tmp, text)
    assert rules == [] and len(problems) == 1 and problems[0].startswith(f"not a Codex rules file: {detail}")


def test_a_rules_file_that_is_not_starlark_names_its_line(own_tmp):
    rules, (problem,) = _rules(own_tmp, 'prefix_rule(pattern=["git"]\n\nprefix_rule(pattern=["ls"])\n')
    assert rules == [] and problem.startswith("not a Codex rules file: line 1: ")


def test_skill_version_from_front_matter_else_the_hash(own_tmp):
    texts = {
        "tagged": "---\nname: tagged\nversion: 1.4.2\n---\nbody\n",
        "numbered": "---\nname: numbered\nversion: 2\n---\nbody\n",
        "nested": "---\nname: nested\nmetadata:\n  version: '0.9'\n---\nbody\n",
        "plain": "---\nname: plain\n---\nbody\n",
    }
    for name, text in texts.items():
        (own_tmp / name).mkdir()
        (own_tmp / name / "SKILL.md").write_text(text)
    found, problems = skills_in(own_tmp, "claude", "user")
    plain_sha = hashlib.sha256(texts["plain"].encode()).hexdigest()
    assert problems == []
    assert {s.name: s.version for s in found} == {
        "nested": "0.9",
        "numbered": "2",
        "plain": plain_sha,
        "tagged": "1.4.2",
    }


@pytest.fixture
def home_and_project(own_tmp: Path):
    home = own_tmp / "home"
    codex = home / ".codex"
    (codex / "rules").mkdir(parents=True)
    (codex / "rules" / "default.rules").write_text(RULES)
    (codex / "rules" / "broken.rules").write_text('prefix_rule(pattern=["git"], decision="sometimes")\n')
    lint = codex / "skills" / "lint" / "SKILL.md"
    lint.parent.mkdir(parents=True)
    lint.write_text("---\nname: lint\ndescription: lint things\nversion: 3.1.0\n---\n\n# lint\n")
    review = home / ".claude" / "skills" / "review" / "SKILL.md"
    review.parent.mkdir(parents=True)
    review.write_text("---\nname: review\ndescription: review things\n---\n\n# review\n")
    project = build_project(own_tmp / "src")
    (project / ".codex" / "rules").mkdir(parents=True)
    (project / ".codex" / "rules" / "project.rules").write_text('prefix_rule(pattern=["make", "test"])\n')
    return home, project, {"lint": lint, "review": review}


def _transcripts(dsn: str, skills: dict[str, Path]) -> None:
    """s-claude: two Skill calls of `review`; s-codex: lint invoked by ``$lint`` (the injection)."""
    write(
        dsn,
        [
            session("s-claude", title="Review the parser"),
            tool_call("k1", "s-claude", "Skill", json.dumps({"skill": "review"}), "ok", offset=100),
            tool_call("k2", "s-claude", "Skill", json.dumps({"skill": "review"}), "ok", offset=200),
        ],
    )
    injected = f"\n<skill>\n<name>lint</name>\n<path>{skills['lint']}</path>\n# lint\n</skill>"
    quoted = f"A note quoting <path>{skills['lint']}</path>, not an injection"
    write(
        dsn,
        [
            session("s-codex", agent="codex", title="Lint the tree"),
            message("m1", "s-codex", injected, cls="skill_body", agent="codex", role="user", offset=10, minutes=5),
            message(
                "m2",
                "s-codex",
                "<skill>\n<name>other</name>\n<path>/elsewhere/SKILL.md</path>\n</skill>",
                cls="skill_body",
                agent="codex",
                role="user",
                offset=20,
            ),
            message("m3", "s-codex", quoted, cls="skill_body", agent="codex", role="user", offset=30),
        ],
        path="/t/codex.jsonl",
        namespace="codex-local",
        agent="codex",
    )


def test_codex_rules_collected_and_skills_invoked(db, home_and_project):
    home, project, skills = home_and_project
    _transcripts(db.dsn, skills)
    homes = default_homes(home=home, env={})
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = collect(conn, [project], [ME[1]], homes=homes)
        assert (summary.user_skills, summary.user_permission_rules) == (2, 5)
        assert summary.repositories[0].permission_rules == 1
        broken = home / ".codex" / "rules" / "broken.rules"
        assert [line for line in summary.lines if line.startswith("unreadable")] == [
            f"unreadable {broken}: not a Codex rules file: decision 'sometimes' is not allow, prompt or forbidden "
            "(the rest is collected)"
        ]
        rules, _ = permission_view(conn)
        codex = [(r.scope, r.list, r.rule, r.tool, r.denials) for r in rules if r.harness == "codex"]
        assert codex == [
            ("project", "allow", "make test", None, None),
            ("user", "allow", "/bin/zsh -lc 'rg \"TODO\" src'", None, None),
            ("user", "allow", "git push", None, None),
            ("user", "allow", "ls", None, None),
            ("user", "ask", "git {status,diff}", None, None),
            ("user", "deny", "rm", None, None),
        ]
        by_name = {s.name: s for s in list_skills(conn)}
        assert by_name["lint"].version == "3.1.0"
        assert (by_name["lint"].sessions, by_name["lint"].uses, by_name["lint"].session_uids) == (1, 1, ["s-codex"])
        assert (by_name["review"].sessions, by_name["review"].uses) == (1, 2)
        assert [(i.name, i.session_uid, i.agent, i.title, i.uses, i.last_used_at) for i in invoked_skills(conn)] == [
            ("review", "s-claude", "claude", "Review the parser", 2, T0),
            ("lint", "s-codex", "codex", "Lint the tree", 1, T0.replace(minute=5)),
        ]
        assert [i.name for i in invoked_skills(conn, harness="codex")] == ["lint"]
        assert collect(conn, [project], [ME[1]], homes=homes).repositories[0].changed == 0
        # a project rules file removed: its rules go with it
        (project / ".codex" / "rules" / "project.rules").unlink()
        collect(conn, [project], [ME[1]], homes=homes)
        assert [r.rule for r in permission_view(conn)[0] if r.scope == "project"] == []


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True)


def test_cli_skills_sessions_and_codex_rules(cli_env, db, home_and_project):
    home, project, skills = home_and_project
    _transcripts(db.dsn, skills)
    env = {k: v for k, v in cli_env.items() if k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    env.update(HOME=str(home), AGENT_HISTORY_QUERY_IDLE_S="0")
    assert _cli(env, "collect", str(project)).returncode == 0
    out = _cli(env, "skills", "--sessions")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("claude skill review: 1 session")
    assert lines[start : start + 4] == [
        "claude skill review: 1 session",
        "  s-claude  claude  2 uses  2025-06-01 12:00  Review the parser",
        "codex skill lint: 1 session",
        "  s-codex  codex  1 use  2025-06-01 12:05  Lint the tree",
    ]
    data = json.loads(_cli(env, "skills", "--json", "--sessions", "--agent", "codex").stdout)["skills"]
    assert [(s["name"], s["version"], [i["session_uid"] for i in s["invoked"]]) for s in data] == [
        ("lint", "3.1.0", ["s-codex"])
    ]
    assert "invoked" not in json.loads(_cli(env, "skills", "--json").stdout)["skills"][0]
    perms = json.loads(_cli(env, "permissions", "--json").stdout)["rules"]
    assert {(r["rule"], r["tool"], r["denials"]) for r in perms if r["harness"] == "codex"} >= {("rm", None, None)}
    assert os.path.basename(perms[0]["settings_path"]) == "project.rules"
