"""`agent-history secrets` and ``[index] redact``: a planted AWS key, GitHub token and private key
are found (detector, session, field, file and byte offset, redacted preview) and never printed or
stored in a finding; with ``redact = true`` the catalogue never holds them at all."""

from __future__ import annotations

import json
import secrets
import string
from pathlib import Path

import psycopg

from tests.homes import cli
from tests.test_export import SECRET_UID, secret_home  # noqa: F401 - fixture


def _line_offsets(path: Path) -> list[int]:
    offsets, at = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        offsets.append(at)
        at += len(line)
    return offsets


def _dump(conn: psycopg.Connection) -> str:
    """Every row of every table of schema ah, as text (what a database dump would hold)."""
    tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'ah' ORDER BY 1")]
    return "\n".join(str(r[0]) for t in tables for r in conn.execute(f"SELECT x::text FROM ah.{t} AS x"))


def test_planted_secrets_are_reported_where_they_are_and_never_printed(cli_env, db, secret_home):  # noqa: F811
    home, planted = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    transcript = next(home.rglob(f"{SECRET_UID}.jsonl"))
    offsets = _line_offsets(transcript)
    out = cli("secrets", "--json", env=cli_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    got = sorted((f["detector"], f["where"], f["field"], f["byte_offset"]) for f in data["findings"])
    assert got == sorted(
        [
            ("AWSKeyDetector", "message", "text", offsets[0]),
            ("GitHubTokenDetector", "message", "text", offsets[0]),
            ("private_key_block", "message", "text", offsets[0]),
            ("AWSKeyDetector", "tool_call", "output", offsets[1]),  # the call's record: its tool_use line
        ]
    )
    assert {f["path"] for f in data["findings"]} == {str(transcript)}
    assert {f["session_uid"] for f in data["findings"]} == {SECRET_UID}
    assert all("[REDACTED]" in f["preview"] for f in data["findings"])
    assert data["counts"] == {"AWSKeyDetector": 2, "GitHubTokenDetector": 1, "private_key_block": 1}
    outputs = [out.stdout + out.stderr]
    for args in (("secrets",), ("status",), ("status", "--json"), ("secrets", "--agent", "claude")):
        done = cli(*args, env=cli_env)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout + done.stderr)
    assert "4 secret-shaped spans in stored text" in outputs[2]
    assert json.loads(outputs[3])["secrets"] == data["counts"]
    for text in outputs:
        assert not any(s in text for s in planted)
    with db.connect() as conn:
        previews = "\n".join(r[0] for r in conn.execute("SELECT preview FROM ah.secret_finding"))
    assert previews and not any(s in previews for s in planted)
    assert json.loads(cli("secrets", "--json", "--agent", "codex", env=cli_env).stdout)["findings"] == []
    assert json.loads(cli("secrets", "--json", "--since", "2026-01-24", env=cli_env).stdout)["findings"] == []
    assert len(json.loads(cli("secrets", "--json", "--since", "2026-01-23", env=cli_env).stdout)["findings"]) == 4
    assert cli("secrets", "--detector", "nope", env=cli_env).returncode == 2


def test_the_secrets_metric_counts_findings_by_detector(cli_env, db, secret_home):  # noqa: F811
    from agent_history.config import Settings
    from agent_history.telemetry.collectors import CollectContext, collect_catalogue
    from agent_history.telemetry.policy import ModelLabels

    home, _ = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    ctx = CollectContext(Settings(), [], [], ModelLabels(()))
    with db.connect() as conn:  # before a scan: 0 (the family is always exported)
        assert {s.value for s in collect_catalogue(conn, ctx) if s.family == "ah_secrets_found"} == {0}
    assert cli("secrets", env=cli_env).returncode == 0
    with db.connect() as conn:
        got = {
            dict(s.labels)["detector"]: s.value for s in collect_catalogue(conn, ctx) if s.family == "ah_secrets_found"
        }
    assert (got["AWSKeyDetector"], got["GitHubTokenDetector"], got["private_key_block"]) == (2, 1, 1)
    assert sum(got.values()) == 4


def test_index_redact_stores_no_secret_and_leaves_the_transcript_alone(cli_env, db, secret_home):  # noqa: F811
    home, planted = secret_home
    Path(cli_env["AGENT_HISTORY_CONFIG"]).write_text("[index]\nredact = true\n")
    transcript = next(home.rglob(f"{SECRET_UID}.jsonl"))
    before = transcript.read_bytes()
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    with db.connect() as conn:
        dump = _dump(conn)
        text = conn.execute("SELECT text FROM ah.message WHERE message_class = 'human_prompt'").fetchone()[0]
        output = conn.execute("SELECT output FROM ah.tool_call").fetchone()[0]
    assert not any(s in dump for s in planted)
    assert (
        text.startswith("deploy with [REDACTED] and [REDACTED]; the key:") and output == "AWS_ACCESS_KEY_ID=[REDACTED]"
    )
    assert transcript.read_bytes() == before and all(s.encode() in before for s in planted)
    search = cli("search", planted[0], "--json", env=cli_env)
    assert json.loads(search.stdout)["hits"] == []  # the query is echoed; nothing holds the key


def test_token_counts_and_code_are_no_secrets_and_detector_filters_the_counts(cli_env, secret_home):  # noqa: F811
    home, planted = secret_home
    transcript = next(home.rglob(f"{SECRET_UID}.jsonl"))
    # a random key with a digit in it: a value of letters only reads as an identifier, not a
    # secret (`redact._IDENTIFIER`), and 24 random letters and digits have none 1.5 % of the time
    rng = secrets.SystemRandom()
    quoted = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(22))
    quoted = rng.choice(string.ascii_letters) + quoted + rng.choice(string.digits)
    code = (
        '{"cache_read_input_tokens": 1234, "output_tokens": 99, "maxTokens": 4096}\n'
        "const apiKey = process.env.ANTHROPIC_API_KEY ?? getApiKey(provider);\n"
        "const getApiKey = options.getApiKey ?? defaultGetApiKey();\n"
        'token: "placeholder", api_key = "options.apiKey"\n'
        'const TOKEN_URL = "https://console.anthropic.com/v1/oauth/token";\n'
        "} else { pwd = pwd.slice(0, Math.max(1, width)); }\n"
        f'client = Client(api_key="{quoted}")\n'
    )
    line = {"parentUuid": "u-2", "isSidechain": False, "userType": "external", "cwd": "/tmp/secrets",
            "sessionId": SECRET_UID, "version": "2.1.17", "gitBranch": "", "type": "user", "uuid": "u-3",
            "timestamp": "2026-01-23T17:31:00.000Z", "message": {"role": "user", "content": code}}  # fmt: skip
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\n")
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    data = json.loads(cli("secrets", "--json", env=cli_env).stdout)
    assert data["counts"] == {"AWSKeyDetector": 2, "GitHubTokenDetector": 1, "private_key_block": 1,
                              "token_assignment": 1}  # fmt: skip
    (found,) = [f for f in data["findings"] if f["detector"] == "token_assignment"]
    assert found["preview"].endswith('Client(api_key="[REDACTED]")') and quoted not in json.dumps(data)
    only = json.loads(cli("secrets", "--json", "--detector", "AWSKeyDetector", env=cli_env).stdout)
    assert only["counts"] == {"AWSKeyDetector": 2} and len(only["findings"]) == 2
    shown = cli("secrets", "--detector", "AWSKeyDetector", env=cli_env)
    assert shown.returncode == 0, shown.stderr
    assert "2 findings: AWSKeyDetector 2" in shown.stdout and "GitHubTokenDetector" not in shown.stdout
    md = cli("export", SECRET_UID, "--format", "md", env=cli_env).stdout
    assert "process.env.ANTHROPIC_API_KEY ?? getApiKey(provider)" in md and '"cache_read_input_tokens": 1234' in md


def test_a_change_of_rules_rescans_every_row_once(cli_env, db, secret_home):  # noqa: F811
    """Marks made under other rules (an upgrade) are dropped: stale findings go, new ones come."""
    from agent_history.embed.redact import RULES_VERSION
    from agent_history.ingest.secret_scan import RULES_KEY

    home, _ = secret_home
    assert cli("index", "--home", str(home), env=cli_env).returncode == 0
    first = json.loads(cli("secrets", "--json", env=cli_env).stdout)
    assert first["counts"] == {"AWSKeyDetector": 2, "GitHubTokenDetector": 1, "private_key_block": 1}
    with db.connect() as conn:
        assert conn.execute("SELECT value FROM ah.meta WHERE key = %s", (RULES_KEY,)).fetchone() == (
            str(RULES_VERSION),
        )
        # what an older scanner left: a finding the current rules do not make, its row marked scanned
        conn.execute(
            "INSERT INTO ah.secret_finding (session_id, message_id, field, detector, char_start, char_end,"
            " source_id, byte_offset, preview) SELECT session_id, message_id, field, 'high_entropy', 0, 1,"
            " source_id, byte_offset, preview FROM ah.secret_finding WHERE message_id IS NOT NULL LIMIT 1"
        )
        conn.execute("UPDATE ah.meta SET value = '1' WHERE key = %s", (RULES_KEY,))
        conn.commit()
    again = json.loads(cli("secrets", "--json", env=cli_env).stdout)
    assert again["counts"] == first["counts"]  # the stale high_entropy finding is gone
    with db.connect() as conn:
        marks = conn.execute("SELECT count(*) FROM ah.secret_scan").fetchone()[0]
        rows = conn.execute(
            "SELECT (SELECT count(*) FROM ah.message) + (SELECT count(*) FROM ah.tool_call)"
        ).fetchone()[0]
        assert marks == rows  # every row re-scanned and marked again
        assert conn.execute("SELECT value FROM ah.meta WHERE key = %s", (RULES_KEY,)).fetchone() == (
            str(RULES_VERSION),
        )
