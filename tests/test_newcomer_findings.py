"""A newcomer's break-it findings (h-fix brief), each pinned by a real CLI subprocess on the
corpus catalogue: the exact output and exit code."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest

from tests.corpus_db import cli_environment, corpus_db, corpus_rw_db, resident_environment  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def env(corpus_db, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    """The CLI's environment against the module's corpus catalogue (no real home or config); its
    read commands answered by a resident query process (`resident_environment`)."""
    with resident_environment(_fresh_env(corpus_db, tmp_path_factory.mktemp("newcomer"))) as on:
        yield on


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


LIMITED = [
    ("issues", "--limit"),
    ("loops", "-n"),
    ("touched", "**", "-n"),
    ("sessions", "-n"),
    ("search", "x", "-n"),
    ("tasks", "-n"),
    ("secrets", "--limit"),
]


@pytest.mark.parametrize("command", LIMITED)
@pytest.mark.parametrize("value", ["-1", "0", "1001"])
def test_every_limit_outside_1_to_1000_is_a_usage_error(env, command, value):
    r = cli(env, *command, value)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: --limit must be between 1 and 1000 (got {value})\n")


def test_embed_limit_below_1_is_a_usage_error(env):
    r = cli(env, "embed", "--limit", "0")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: --limit must be 1 or more (got 0)\n")


@pytest.mark.parametrize("op", ["nope", "Create"])
def test_touched_unknown_op_is_a_usage_error_naming_the_known_ones(env, op):
    r = cli(env, "touched", "**", "--op", op)
    expected = f"error: unknown --op '{op}' (known: read, create, edit, delete, move)\n"
    assert (r.returncode, r.stdout, r.stderr) == (2, "", expected)


def test_touched_known_op_still_answers(env):
    r = cli(env, "touched", "**", "--op", "edit", "-n", "1")
    assert r.returncode == 0, r.stderr
    assert "edit:" in r.stdout


LONG = "cf4def41-21e0-4b91-adb4-5397c1492084"  # codex-local: 596 events


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("--from", "597"), f"session {LONG} has 596 events: --from must be between 1 and 596 (got 597)"),
        (("--from", "-1", "--to", "0"), "--from must be 1 or more (got -1)"),
        (("--to", "-5"), "--to must be 1 or more (got -5)"),
        (("--from", "0"), "--from must be 1 or more (got 0)"),
    ],
)
def test_session_ranges_out_of_range_or_negative_are_usage_errors(env, args, error):
    r = cli(env, "session", LONG[:8], *args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: {error}\n")


def test_session_range_to_the_last_event_still_answers(env):
    r = cli(env, "session", LONG[:8], "--from", "596", "--to", "596")
    assert r.returncode == 0, r.stderr
    assert "events 596–596 of 596" in r.stdout


def test_session_to_past_the_end_means_to_the_end(env):
    """`--from 500 --to 9999`: "from 500 to the end" without knowing the count (a newcomer)."""
    r = cli(env, "session", LONG[:8], "--from", "500", "--to", "9999")
    assert r.returncode == 0, r.stderr
    assert "events 500–596 of 596" in r.stdout


@pytest.mark.parametrize("spec", ["claude-x=", "=/tmp", "claude-x=  "])
def test_index_source_with_an_empty_part_is_a_one_line_error(env, spec):
    r = cli(env, "index", "--source", spec)
    expected = f"error: --source must be NAMESPACE=PATH with both given, got {spec!r}\n"
    assert (r.returncode, r.stdout, r.stderr) == (2, "", expected)


def _fresh_env(database, tmp) -> dict[str, str]:
    return cli_environment(tmp, database.dsn, database.reader_dsn, columns=200)


def _line(out: str, start: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(start))


def test_status_says_secrets_not_scanned_until_a_scan_ran(db, own_tmp):
    env = _fresh_env(db, own_tmp)
    before = cli(env, "status")
    assert before.returncode == 0, before.stderr
    assert _line(before.stdout, "secrets:") == (
        "secrets: not scanned yet (`agent-history secrets` scans stored text and lists what it finds)"
    )
    assert json.loads(cli(env, "status", "--json").stdout)["secrets_scanned"] is False
    assert cli(env, "secrets").stdout == "no secret-shaped spans found\n"
    after = cli(env, "status")
    assert _line(after.stdout, "secrets:") == (
        "secrets: none found by the last scan of stored text (`agent-history secrets` scans)"
    )
    assert json.loads(cli(env, "status", "--json").stdout)["secrets_scanned"] is True


def test_skills_closeouts_permissions_after_collect_say_where_collect_looked(db, own_tmp):
    from tests.git_repos import git

    env = _fresh_env(db, own_tmp)
    repo = own_tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("hello\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "Start")
    never = cli(env, "skills")
    assert (never.returncode, never.stdout) == (1, "nothing collected: run `agent-history collect`\n")
    assert cli(env, "collect", str(repo)).returncode == 0
    skills, closeouts, permissions = (cli(env, c) for c in ("skills", "closeouts", "permissions"))
    assert (skills.returncode, skills.stdout) == (1, (
        "no skill or plugin found: `collect` looked in 1 collected repository (.claude/skills/, .codex/skills/, "
        ".pi/skills/) and in the harness homes (claude skills/, codex skills/, pi skills/, "
        "claude plugins/installed_plugins.json)\n"
    ))  # fmt: skip
    assert (closeouts.returncode, closeouts.stdout) == (1, (
        "no loop charter or closeout found: `collect` looked in 1 collected repository (**/codex/*.md: closeouts "
        "codex/closeout-<date>-loop<N>.md and the charters beside them)\n"
    ))  # fmt: skip
    assert (permissions.returncode, permissions.stdout) == (1, (
        "no permission rule found: `collect` looked in 1 collected repository (.claude/settings.json, "
        ".claude/settings.local.json, .codex/rules/*.rules, .gemini/settings.json) and in the harness homes "
        "(claude settings.json, codex rules/*.rules, gemini settings.json)\n"
    ))  # fmt: skip


def test_collect_names_a_missing_path_as_missing(db, own_tmp):
    env = _fresh_env(db, own_tmp)
    r = cli(env, "collect", str(own_tmp / "nowhere"))
    assert (r.returncode, r.stderr) == (2, f"does not exist: {own_tmp / 'nowhere'}\n")  # a bad PATH: a usage error


def test_an_ambiguous_prefix_gives_the_true_count_and_marks_the_list_partial(corpus_rw_db, own_tmp):  # noqa: F811
    with psycopg.connect(corpus_rw_db.dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO ah.session (agent, session_uid, agent_id, namespace) "
            "SELECT 'claude', '0fae00' || lpad(g::text, 2, '0') || '-x', a, 'claude-local' "
            "FROM generate_series(1, 60) AS g, unnest(ARRAY['', 'agent-1']) AS a"
        )  # 120 threads of 60 sessions: more than the lookup's 50 rows
    env = _fresh_env(corpus_rw_db, own_tmp)
    shown = ", ".join(f"0fae00{n:02d}-x" for n in range(1, 6))
    expected = f"error: '0fae00' matches 60 sessions: {shown}, … (5 of 60 shown)\n"
    for args in (("session", "0fae00"), ("export", "0fae00"), ("efficiency", "-s", "0fae00")):
        r = cli(env, *args)
        assert (r.returncode in (1, 2), r.stdout, r.stderr) == (True, "", expected), args
    two = cli(env, "session", "0fae000")  # 0fae0001 … 0fae0009: nine, all but five elided
    assert two.stderr.endswith(", … (5 of 9 shown)\n")


def test_index_every_names_a_symlink_once_and_ctrl_c_between_passes_says_stopped(db, own_tmp, corpus_home):
    import shutil
    import signal

    env = _fresh_env(db, own_tmp) | {"PYTHONUNBUFFERED": "1"}
    projects = own_tmp / "copy" / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    name = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl"
    shutil.copy(next((corpus_home / ".claude" / "projects").rglob(name)), projects / name)
    (projects / "link.jsonl").symlink_to(projects / name)
    child = subprocess.Popen(
        [sys.executable, "-m", "agent_history", "index", "--home", str(own_tmp / "copy"), "--every", "3"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        passes = [child.stdout.readline() for _ in range(3)]  # three passes …
        assert all(p.startswith("indexed: ") for p in passes), passes
        child.send_signal(signal.SIGINT)  # … and the loop waiting 3 s for the fourth
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130
    assert err.splitlines() == [
        f"skipped {projects / 'link.jsonl'}: symlink (not followed)",  # once, not once a pass
        "stopped: every pass finished and is committed",
    ]


def test_parse_ts_notes_a_given_value_that_is_no_timestamp():
    from agent_history.parsers.common.coerce import refused_numbers
    from agent_history.parsers.common.timeutil import parse_ts

    with refused_numbers() as noted:
        assert parse_ts("2025-13-45T99:00:00Z") is None
        assert parse_ts(None) is None and parse_ts("") is None  # absent: not noted
        assert parse_ts(True) is None
        assert parse_ts("2025-06-01T12:34:56Z").isoformat() == "2025-06-01T12:34:56+00:00"
    assert noted == ["str '2025-13-45T99:00:00Z' is not a timestamp", "bool True is not a timestamp"]


def test_a_record_with_a_bad_timestamp_records_a_bad_value_issue(db, own_tmp, corpus_home):
    env = _fresh_env(db, own_tmp)
    name = "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl"
    records = [json.loads(x) for x in next(corpus_home.rglob(name)).read_text().splitlines()]
    first = next(i for i, r in enumerate(records) if "timestamp" in r)
    records[first]["timestamp"] = "2025-13-45T99:00:00Z"
    text = "".join(json.dumps(r) + "\n" for r in records)
    projects = own_tmp / "copy" / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    (projects / name).write_text(text)
    done = cli(env, "index", "--home", str(own_tmp / "copy"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["issues"] == {"bad_value": 1}
    with psycopg.connect(db.dsn) as conn:
        issue = conn.execute("SELECT kind, byte_offset, line_number, detail FROM ah.parse_issue").fetchall()
    offset = len("".join(json.dumps(r) + "\n" for r in records[:first]).encode())
    detail = "read as unknown (NULL): str '2025-13-45T99:00:00Z' is not a timestamp"
    assert issue == [("bad_value", offset, first + 1, detail)]


def test_pricing_has_the_rule_under_its_header_and_says_since_when(env):
    r = cli(env, "pricing")
    assert r.returncode == 0, r.stderr
    header, rule, *rows = r.stdout.splitlines()
    assert header.split()[:4] == ["price", "row", "effective", "input"] and header.rstrip().endswith("source")
    assert set(rule) == {"─"}
    sonnet = [line.split()[:3] for line in rows if line.startswith("anthropic/claude-sonnet-4-0 ")]
    assert sonnet == [
        ["anthropic/claude-sonnet-4-0", "since", "2025-08-12"],
        ["anthropic/claude-sonnet-4-0", "always", "3"],
    ]


def test_usage_by_model_does_not_repeat_the_model_in_a_models_column(env):
    r = cli(env, "usage", "--by", "model", "--timezone", "UTC")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:8] == ["model", "input", "output", "cache", "create", "cache", "read", "total"]
    assert "models" not in r.stdout.splitlines()[0]
    assert "models" in cli(env, "usage", "--by", "repo", "--timezone", "UTC").stdout.splitlines()[0]


def test_exclusions_import_of_a_missing_file_is_one_plain_line(env, tmp_path):
    missing = tmp_path / "nonexistent.json"
    r = cli(env, "sessions", "exclusions", "import", str(missing))
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"error: cannot read {missing}: No such file or directory\n")


def test_embed_without_embedding_config_points_at_where_the_keys_are(env):
    r = cli(env, "embed")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        "error: embeddings are off: configure [embedding] in the config file (at least `provider`; every key is in "
        "docs/cli.md under Configuration keys, set-ups in the README's Search, embeddings, MCP section)\n"
    )


def test_why_says_it_matched_an_abbreviation(env):
    longer = cli(env, "why", "030d80dFF")
    assert longer.returncode == 0, longer.stderr
    lines = longer.stdout.splitlines()
    assert lines[0].split()[:2] == ["commit", "030d80d"]
    assert lines[1] == (
        "  matched the abbreviation 030d80d the transcript printed (the commit 030d80dff unless another commit "
        "also starts with 030d80d)"
    )
    assert "matched the abbreviation" not in cli(env, "why", "030d80d").stdout  # asked as printed


def test_tasks_print_a_plain_table_like_every_other_command(db, own_tmp):
    from tests.git_repos import build_project

    env = _fresh_env(db, own_tmp)
    project = build_project(own_tmp / "git")
    assert cli(env, "collect", str(project)).returncode == 0
    r = cli(env, "tasks")
    assert r.returncode == 0, r.stderr
    header, rule, *rows = r.stdout.splitlines()
    assert header.split() == ["repo", "task", "status", "title", "labels", "commits"]
    assert set(rule) == {"─"} and not any(c in r.stdout for c in "│┃┏┡└")
    assert [row.split()[:2] for row in rows] == [["project", "task-1"], ["project", "task-2"]]


def _doc(title: str, events: list[dict]) -> dict:
    session = {"agent": "claude", "session_uid": "s-1", "agent_id": "", "cwd": None, "title": title}
    return {"product": "Claude Code", "thread": {"session": session, "summary": {}, "events": events}}


def test_markdown_export_shows_html_in_prompts_and_replies_never_obeys_it():
    from agent_history.read.export_render import render_markdown

    attack = "<script>alert('xss')</script><img src=x onerror=alert(2)>"
    reply = "Close it with `</details>` or:\n\n```html\n</details></summary>\n```\n\nthen </details></summary> *done*"
    events = [
        {"kind": "message", "label": "human_prompt", "text": attack},
        {"kind": "message", "label": "assistant_text", "text": reply},
        {"kind": "tool_call", "label": "Bash", "text": "echo <b>", "detail": {"outcome": "<ok>"}},
    ]
    md = render_markdown(_doc("t", events))
    assert "#### Prompt\n\n&lt;script>alert('xss')&lt;/script>&lt;img src=x onerror=alert(2)>\n" in md
    assert (
        "#### Reply\n\nClose it with `</details>` or:\n\n```html\n</details></summary>\n```\n\n"
        "then &lt;/details>&lt;/summary> *done*\n"
    ) in md  # code shows it literally; Markdown (emphasis) still renders
    assert "<summary>Tool: Bash · &lt;ok&gt;</summary>" in md and "```\necho <b>\n```" in md
    assert md.count("<details>") == md.count("\n</details>\n") == 1  # the tool call's own block only


def test_markdown_title_cut_never_halves_a_redacted_marker():
    from agent_history.read.export_render import TITLE_CHARS, render_markdown

    title = "x" * (TITLE_CHARS - 12) + " api_key=[REDACTED] and more"
    md = render_markdown(_doc(title, []))
    assert md.splitlines()[0] == "# " + "x" * (TITLE_CHARS - 12) + " api_key=…"
