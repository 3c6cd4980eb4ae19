"""`embed` on hostile input and misconfiguration (issue 10, defect 1): a huge message is embedded
by its head and tail, a bad provider fails before any work, SIGINT/SIGTERM end the pass cleanly.

Real pieces only: the embedded PostgreSQL of the test session, the CLI in a subprocess, the
loopback embedding server of `tests.embed_server` (a real model behind a real socket).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading

import psycopg
import pytest

from agent_history.embed.chunking import HEAD_CHARS, TAIL_CHARS
from agent_history.embed.provider import CHECK_INPUT, OpenAIEmbedder
from agent_history.embed.status import embedding_status, status_line
from agent_history.embed.worker import EmbedWorker
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.embed_corpus import _session, index_home
from tests.embed_server import MODEL_NAME

MIDDLE = "MIDDLE-ONLY-WORD "
HUGE_PROMPT = "Please review the loader design. " * 1_500 + MIDDLE * 120_000 + "Conclusion: ship it. " * 1_200


def _cli(*args, env, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "agent_history", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _write_config(cli_env, body: str) -> None:
    with open(cli_env["AGENT_HISTORY_CONFIG"], "w") as f:
        f.write("[embedding]\n" + body)


def _count(db, table: str) -> int:
    with db.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM ah.{table}").fetchone()[0]


def _write_huge_sessions(home, numbers) -> None:
    import orjson

    for n in numbers:
        sid, recs = _session(n, "api", [(HUGE_PROMPT, "Reviewed: the design holds, ship it after the tests.")], False)
        path = home / ".claude" / "projects" / "-work-api" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))


@pytest.fixture
def huge_db(db, tmp_path):
    """A catalogue with one session whose prompt is 2.1 MB (reply: one short sentence)."""
    home = tmp_path / "huge-home"
    _write_huge_sessions(home, [0])
    index_home(db.dsn, home)
    return db


@pytest.fixture
def big_db(db, topic_home):
    """The topic catalogue plus three sessions with a 2.1 MB prompt each."""
    home, _ = topic_home
    _write_huge_sessions(home, [20, 21, 22])
    index_home(db.dsn, home)
    return db


def test_a_huge_message_is_read_bounded_and_embedded_by_head_and_tail(huge_db, embed_settings, embed_server):
    db = huge_db
    embedder = OpenAIEmbedder(embed_settings)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        summary = EmbedWorker(conn, embed_settings, embedder).run()
        spans = conn.execute(
            "SELECT c.char_start, c.char_end FROM ah.chunk AS c JOIN ah.message AS m ON m.id = c.message_id "
            "WHERE m.message_class = 'human_prompt' ORDER BY c.seq"
        ).fetchall()
        length, examined = conn.execute(
            "SELECT length(m.text), cs.source_sha256 = m.text_sha256 FROM ah.message AS m "
            "JOIN ah.chunk_source AS cs ON cs.message_id = m.id WHERE m.message_class = 'human_prompt'"
        ).fetchone()
        again = EmbedWorker(conn, embed_settings, embedder).run()
        status = embedding_status(conn, embed_settings)
    assert length == len(HUGE_PROMPT) and examined  # recorded as examined: the whole text's sha256
    assert (summary.stopped, summary.failed, summary.elided) == (None, 0, 1)
    assert spans[0][0] == 0 and spans[-1][1] == len(HUGE_PROMPT.rstrip())
    head = [s for s in spans if s[1] <= HEAD_CHARS]
    tail = [s for s in spans if s[0] >= len(HUGE_PROMPT) - TAIL_CHARS]
    assert head and tail and len(head) + len(tail) == len(spans)  # the gap is what was left out
    assert not any(MIDDLE in i for i in embed_server.inputs)
    assert any(i.endswith("Conclusion: ship it.") for i in embed_server.inputs)
    assert (again.sources, again.requests) == (0, 0)  # not pending again
    assert (status["elided"], status["pending"], status["failed"]) == (1, 0, 0)
    assert "(1 long messages by head and tail)" in status_line(status)


def test_embed_summary_says_how_many_sources_were_cut(huge_db, cli_env, embed_server):
    _write_config(cli_env, f'provider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\n')
    run = _cli("embed", env=cli_env)
    assert run.returncode == 0, run.stderr
    assert "; 1 too long, embedded by head and tail" in run.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            'provider = "local"\nlocal_model_path = "/nonexistent"\n',
            "embedding.local_model_path /nonexistent is not a directory",
        ),
        (
            'provider = "openai"\nbase_url = "http://127.0.0.1:{closed}/v1"\nmodel = "m"\n',
            "embedding endpoint http://127.0.0.1:{closed}/v1/embeddings is unreachable (check embedding.base_url): "
            "ConnectError",
        ),
        (
            'provider = "openai"\nbase_url = "{server}/nope"\nmodel = "m"\n',
            "embedding endpoint {server}/nope/embeddings: HTTP 404 not found (check base_url and model)",
        ),
        (
            'provider = "openai"\nbase_url = "localhost:8080"\nmodel = "m"\n',
            "embedding.base_url 'localhost:8080' must be an http:// or https:// URL",
        ),
    ],
    ids=["local path missing", "nothing listening", "wrong path", "no scheme"],
)
def test_a_misconfigured_provider_fails_before_any_work(topic_db, cli_env, embed_server, config, message):
    db, _, _ = topic_db
    fill = {"closed": _closed_port(), "server": embed_server.base_url}
    _write_config(cli_env, config.format(**fill))
    run = _cli("embed", env=cli_env)
    assert run.returncode == 2
    assert run.stdout == "" and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert message.format(**fill) in run.stderr
    assert _count(db, "chunk_source") == 0  # nothing was chunked


@pytest.mark.parametrize(
    ("signum", "held", "requests", "vectors"),
    [
        (signal.SIGINT, "check", 1, 0),
        (signal.SIGINT, "first batch", 2, 1),
        (signal.SIGTERM, "first batch", 2, 1),
    ],
    ids=["SIGINT during the check", "SIGINT during a request", "SIGTERM during a request"],
)
def test_a_signal_ends_the_pass_cleanly(big_db, cli_env, embed_server, signum, held, requests, vectors):
    """One input per request, so the pass needs many. The server holds a request (the provider
    check, or the first request of inputs) until the test has signalled the process: the pass
    must finish that request, keep what it paid for, chunk and send nothing more, and exit 0
    with its summary — no traceback."""
    db = big_db
    arrived, release = threading.Event(), threading.Event()

    def hold(body: dict) -> None:
        is_check = body.get("input") == [CHECK_INPUT]
        if is_check == (held == "check") and not arrived.is_set():
            arrived.set()
            release.wait(120)

    embed_server.on_request = hold
    _write_config(
        cli_env, f'provider = "openai"\nbase_url = "{embed_server.base_url}"\nmodel = "{MODEL_NAME}"\nbatch_size = 1\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_history", "embed"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert arrived.wait(120), "the embed pass never reached the endpoint"
        proc.send_signal(signum)
    finally:
        release.set()
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, "")
    assert "stopped: interrupted" in out and f"{vectors} new vector{'' if vectors == 1 else 's'}" in out
    assert [b["input"] for b in embed_server.requests][0] == [CHECK_INPUT]
    assert len(embed_server.requests) == requests  # nothing is sent after the signal
    assert _count(db, "embedding") == vectors  # what was paid for is kept
    if held == "check":
        assert _count(db, "chunk_source") == 0  # stopped before chunking anything
    status = _cli("status", "--json", env=cli_env)
    assert status.returncode == 0 and json.loads(status.stdout)["embedding"]["pending"] > 0  # resumable


def test_a_missing_local_model_path_is_said_before_torch_is_imported(tmp_path):
    """A mistyped `embedding.local_model_path` is said at once: the directory is checked before
    sentence-transformers (and with it torch: seconds to minutes of imports) is imported."""
    code = (
        "import sys\n"
        "from agent_history.embed.errors import EmbeddingError\n"
        "from agent_history.embed.local_model import load_local_model\n"
        "try:\n"
        f"    load_local_model({str(tmp_path / 'no-model')!r})\n"
        "except EmbeddingError as e:\n"
        "    print(e)\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"embedding.local_model_path {tmp_path / 'no-model'} is not a directory\n[]\n"
