"""`agent-history export UID`: Markdown, HTML and JSON of a catalogued session (CLI subprocesses on
the shared corpus and on a home with planted secrets); `--gist` through a recording stand-in for
`gh`. The HTML file in a real browser is in `tests/test_web.py`."""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import string
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.corpus_db import cli_environment, corpus_db  # noqa: F401 - fixture
from tests.homes import cli


def _env(own_tmp: Path, dsn: str) -> dict[str, str]:
    return cli_environment(own_tmp, dsn)


def _walk(thread: dict, out: list[dict]) -> list[dict]:
    """Every event of a thread and the threads inlined in its spawns."""
    for ev in thread["events"]:
        out.append(ev)
        if "thread" in ev:
            _walk(ev["thread"], out)
    return out


def test_json_and_markdown_hold_every_thread_of_a_session_with_sub_agents(corpus_db, own_tmp):  # noqa: F811
    with corpus_db.connect() as conn:
        uid, agent = conn.execute(
            "SELECT session_uid, agent FROM ah.session WHERE agent_id <> '' GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        tools, messages, threads = conn.execute(
            "SELECT (SELECT count(*) FROM ah.tool_call t JOIN ah.session s ON s.id = t.session_id "
            "        WHERE s.session_uid = %(u)s AND s.agent = %(a)s), "
            "       (SELECT count(*) FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
            "        WHERE s.session_uid = %(u)s AND s.agent = %(a)s), "
            "       (SELECT count(*) FROM ah.session WHERE session_uid = %(u)s AND agent = %(a)s)",
            {"u": uid, "a": agent},
        ).fetchone()
        prompts = [
            r[0]
            for r in conn.execute(
                "SELECT m.text FROM ah.message m JOIN ah.session s ON s.id = m.session_id "
                "WHERE s.session_uid = %s AND m.message_class IN ('human_prompt', 'assistant_text') AND m.text <> ''",
                (uid,),
            )
        ]
    env = _env(own_tmp, corpus_db.dsn)
    out = cli("export", uid, "--format", "json", "--no-redact", env=env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    events = _walk(doc["thread"], [])
    for extra in doc["unlinked_threads"]:
        _walk(extra, events)
    assert sum(e["kind"] == "tool_call" for e in events) == tools
    assert sum(e["kind"] == "message" for e in events) == messages
    inlined = sum("thread" in e for e in events)
    assert 1 + inlined + len(doc["unlinked_threads"]) == threads  # every thread once
    md = cli("export", uid, "--no-redact", env=env)
    assert md.returncode == 0, md.stderr
    assert md.stdout.count("<summary>Tool: ") == tools
    assert prompts and all(p.strip() in md.stdout for p in prompts)
    assert f"- **Session:** {uid}" in md.stdout
    # times: to the second for people, to the millisecond in JSON — never Python's microseconds
    started = (doc["thread"]["summary"] or {}).get("started_at")
    assert started, doc["thread"]["summary"]
    assert f"- **Started:** {datetime.fromisoformat(started).astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC" in md.stdout
    html = cli("export", uid, "--format", "html", "--no-redact", env=env).stdout
    six = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{4,}")
    for text in (md.stdout, html, out.stdout):
        assert not six.search(text), six.search(text)
    assert re.search(r" · \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", md.stdout)
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00", e["ts"]) for e in events if e["ts"])


@pytest.fixture
def secret_home(own_tmp) -> tuple[Path, list[str]]:
    """A Claude home whose prompt holds an AWS key, a GitHub token and a private key, and whose
    tool output repeats the AWS key; returns the home and the secrets."""
    rnd = secrets.SystemRandom()
    aws = "AKIA" + "".join(rnd.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    ghp = "ghp_" + "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(36))
    body = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(64))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\nMIIEow{body}\n-----END RSA PRIVATE KEY-----"
    project = own_tmp / "home" / ".claude" / "projects" / "-tmp-secrets"
    project.mkdir(parents=True)
    base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/secrets", "sessionId": SECRET_UID,
            "version": "2.1.17", "gitBranch": ""}  # fmt: skip
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    lines = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u-1", "timestamp": "2026-01-23T17:30:15.190Z",
         "message": {"role": "user", "content": f"deploy with {aws} and {ghp}; the key:\n{pem}\nthanks"}},
        {**base, "parentUuid": "u-1", "type": "assistant", "uuid": "a-1", "timestamp": "2026-01-23T17:30:20.000Z",
         "message": {"model": "claude-opus-4-5-20251101", "id": "msg_s1", "type": "message", "role": "assistant",
                     "content": [{"type": "tool_use", "id": "toolu_s1", "name": "Bash",
                                  "input": {"command": "env | grep AWS"}}],
                     "stop_reason": "tool_use", "usage": usage}},
        {**base, "parentUuid": "a-1", "type": "user", "uuid": "u-2", "timestamp": "2026-01-23T17:30:21.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s1",
                                                   "content": f"AWS_ACCESS_KEY_ID={aws}"}]}},
    ]  # fmt: skip
    (project / f"{SECRET_UID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return own_tmp / "home", [aws, ghp, pem.splitlines()[1]]


SECRET_UID = "5ec12e7a-0000-4000-8000-000000000001"


def test_secrets_are_redacted_in_every_format_unless_no_redact(cli_env, secret_home):
    home, planted = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    for fmt in ("md", "html", "json"):
        out = cli("export", SECRET_UID, "--format", fmt, env=cli_env)
        assert out.returncode == 0, out.stderr
        for secret in planted:
            assert secret not in out.stdout and secret not in out.stderr, fmt
        assert out.stdout.count("[REDACTED]") >= 4, fmt  # three in the prompt, one in the tool output
        kept = cli("export", SECRET_UID, "--format", fmt, "--no-redact", env=cli_env)
        assert all(s in kept.stdout for s in planted), fmt


def test_an_existing_out_file_is_refused_without_force(cli_env, secret_home, own_tmp):
    home, _ = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    target = own_tmp / "session.md"
    target.write_text("keep me")
    refused = cli("export", SECRET_UID, "--out", str(target), env=cli_env)
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: --out {target} exists; pass --force to overwrite it"
    assert target.read_text() == "keep me"
    done = cli("export", SECRET_UID, "--out", str(target), "--force", env=cli_env)
    assert done.returncode == 0, done.stderr
    assert target.read_text().startswith("# deploy with [REDACTED]")
    assert cli("export", "5ec12e", "--format", "pdf", env=cli_env).returncode == 2


def test_gist_publishes_a_secret_gist_through_gh_only_with_the_flag(cli_env, secret_home, own_tmp):
    home, planted = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    bin_dir = own_tmp / "bin"
    bin_dir.mkdir()
    record = own_tmp / "gh-args.json"
    fake = bin_dir / "gh"  # a stand-in for the external program: records its arguments and the file
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'file': open(sys.argv[-1]).read()}}, open({str(record)!r}, 'w'))\n"
        "print('https://gist.github.com/someone/0123abcd')\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**cli_env, "PATH": f"{bin_dir}{os.pathsep}{cli_env['PATH']}"}
    plain = cli("export", SECRET_UID, env=env)
    assert plain.returncode == 0 and not record.exists()  # never without --gist
    out = cli("export", SECRET_UID, "--format", "md", "--gist", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "https://gist.github.com/someone/0123abcd"
    sent = json.loads(record.read_text())
    assert sent["argv"][:2] == ["gist", "create"] and "--public" not in sent["argv"]
    assert sent["argv"][-1].endswith(f"{SECRET_UID}.md")
    assert "[REDACTED]" in sent["file"] and not any(s in sent["file"] for s in planted)
    missing = cli("export", SECRET_UID, "--gist", env={**cli_env, "PATH": str(own_tmp / "empty")})
    assert missing.returncode == 2 and "needs the GitHub CLI `gh`" in missing.stderr


def test_a_bidi_override_in_the_prompt_is_shown_visibly_in_md_and_html(cli_env, secret_home):
    home, _ = secret_home
    transcript = next(home.rglob(f"{SECRET_UID}.jsonl"))
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    lines[0]["message"]["content"] = "rename invoice\u202egpj.exe please"
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    for fmt in ("md", "html"):
        out = cli("export", SECRET_UID, "--format", fmt, env=cli_env)
        assert out.returncode == 0, out.stderr
        assert "\u202e" not in out.stdout, fmt
        shown = "invoice&lt;U+202E&gt;gpj.exe" if fmt == "html" else "invoice<U+202E>gpj.exe"
        assert shown in out.stdout, fmt
    md = cli("export", SECRET_UID, "--format", "md", env=cli_env).stdout
    html_out = cli("export", SECRET_UID, "--format", "html", env=cli_env).stdout
    assert md.startswith("# rename invoice<U+202E>gpj.exe")
    assert "<title>rename invoice&lt;U+202E&gt;gpj.exe" in html_out and "<h1>rename invoice&lt;U+202E&gt;" in html_out


def test_control_characters_and_markup_in_a_title_are_shown_not_obeyed(cli_env, secret_home, own_tmp):
    """A prompt holding an OSC title sequence, BEL and HTML: every format shows them (``^[``, an
    entity, a ``\\u`` escape) and the title is one line (a newcomer's break-it run)."""
    home, _ = secret_home
    transcript = next(home.rglob(f"{SECRET_UID}.jsonl"))
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    lines[0]["message"]["content"] = "fix \x1b]0;pwn\x07 <script>x</script>\n# Injected heading\nmore"
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    md = cli("export", SECRET_UID, "--format", "md", env=cli_env)
    assert md.returncode == 0, md.stderr
    assert "\x1b" not in md.stdout and "\x07" not in md.stdout
    assert md.stdout.startswith("# fix ^[]0;pwn^G &lt;script&gt;x&lt;/script&gt;…\n")
    assert "\n# Injected heading" not in md.stdout.split("---", 1)[0]  # the heading stays in the prompt
    html_out = cli("export", SECRET_UID, "--format", "html", env=cli_env).stdout
    assert "\x1b" not in html_out and "<h1>fix ^[]0;pwn^G &lt;script&gt;" in html_out
    js = cli("export", SECRET_UID, "--format", "json", env=cli_env).stdout
    assert "\x1b" not in js and "\\u001b]0;pwn" in js and json.loads(js)
    # `-` is stdout; a device is written without --force
    dash = cli("export", SECRET_UID, "--out", "-", env=cli_env)
    assert dash.returncode == 0 and dash.stdout == md.stdout and not Path("-").exists()
    null = cli("export", SECRET_UID, "--out", "/dev/null", env=cli_env)
    assert null.returncode == 0 and null.stderr == "", null.stderr
    folder = cli("export", SECRET_UID, "--out", str(own_tmp), env=cli_env)
    assert folder.returncode == 2 and folder.stderr.strip() == f"error: --out {own_tmp} is a directory"


def test_mcp_results_never_carry_a_secret_the_cli_keeps_them(cli_env, secret_home):
    """MCP results go into an agent's context and on to a model provider: every string but
    identifiers is redacted — search snippets, the session transcript, a raw `sql` row."""
    from tests.mcp_client import call_tools

    home, planted = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    calls = [
        ("search", {"query": "deploy thanks"}),
        ("session", {"uid": SECRET_UID}),
        ("sql", {"statement": "SELECT text FROM ah.message ORDER BY id"}),
        ("sql", {"statement": "SELECT output FROM ah.tool_call"}),
    ]
    _, results = call_tools(cli_env, calls)
    for (name, _), result in zip(calls, results, strict=True):
        assert not result.is_error, (name, result.text)
        assert not any(s in result.text for s in planted), name
        assert "[REDACTED]" in result.text, name
    hits = results[0].data["hits"]
    assert [h["session_uid"] for h in hits] == [SECRET_UID]  # identifiers stay whole
    full = cli("session", SECRET_UID, "--full", env=cli_env)  # the user's own terminal shows them
    assert full.returncode == 0 and planted[0] in full.stdout
