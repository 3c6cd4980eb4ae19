"""Server time of the web UI's session page on a long session (issue 20; not a timed test).

Writes one synthetic Claude Code session of N events (prompt, tool call + result, reply,
repeated), indexes it on a private embedded server, then times — in process, through the real
app and the reader role — the first, middle and last timeline page, the hit redirect, and, as
the baseline, `read.timeline.session_timeline` loading the whole session (what a page without
pagination would have to read).

    python -m benchmarks.web --events 10000
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from agent_history.db import embedded
from agent_history.db.migrate import ensure_schema
from agent_history.db.roles import READER, ensure_roles
from agent_history.ingest.discovery import Source
from agent_history.ingest.loader import Loader

UID = "be0c4a11-0000-4000-8000-000000000010"


def write_session(home: Path, events: int) -> None:
    """A Claude home with one session of about `events` timeline events (4 per round)."""
    project = home / ".claude" / "projects" / "-bench-web"
    project.mkdir(parents=True)
    base = {"isSidechain": False, "userType": "external", "cwd": "/bench/web", "sessionId": UID, "version": "2.1.17"}
    out, parent = [], None
    for i in range(max(1, events // 4)):
        ts = f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
        u, a, r, a2 = (f"{k}-{i}" for k in ("u", "a", "r", "b"))
        out.append(
            {
                **base,
                "parentUuid": parent,
                "type": "user",
                "uuid": u,
                "timestamp": ts,
                "message": {"role": "user", "content": f"round {i}: please list the files in src/ ({'x' * 200})"},
            }
        )
        out.append(
            {
                **base,
                "parentUuid": u,
                "type": "assistant",
                "uuid": a,
                "timestamp": ts,
                "message": {
                    "model": "claude-sonnet-4-5",
                    "id": f"msg_{i}a",
                    "type": "message",
                    "role": "assistant",
                    "stop_reason": "tool_use",
                    "content": [
                        {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls src/"}}
                    ],
                    "usage": {"input_tokens": 10, "output_tokens": 20},
                },
            }
        )
        out.append(
            {
                **base,
                "parentUuid": a,
                "type": "user",
                "uuid": r,
                "timestamp": ts,
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "a.py\nb.py\n" * 50}],
                },
            }
        )
        out.append(
            {
                **base,
                "parentUuid": r,
                "type": "assistant",
                "uuid": a2,
                "timestamp": ts,
                "message": {
                    "model": "claude-sonnet-4-5",
                    "id": f"msg_{i}b",
                    "type": "message",
                    "role": "assistant",
                    "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "Two files. " * 40}],
                    "usage": {"input_tokens": 10, "output_tokens": 30},
                },
            }
        )
        parent = a2
    (project / f"{UID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out))


def _ms(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    from starlette.testclient import TestClient

    from agent_history.read.timeline import session_timeline
    from agent_history.read.timeline_pages import PAGE_EVENTS
    from agent_history.web.app import WebSettings, create_app

    base = Path(tempfile.mkdtemp(prefix="ah-bench-web-"))
    pgdata = base / "pg"
    try:
        dsn = embedded.ensure_running(pgdata)
        ensure_schema(dsn)
        ensure_roles(dsn)
        write_session(base / "home", args.events)
        with psycopg.connect(dsn, autocommit=True) as conn:
            Loader(conn).run([Source("claude-bench", "claude", base / "home" / ".claude")])
            total = conn.execute(
                "SELECT (SELECT count(*) FROM ah.message m WHERE m.session_id = s.id) "
                "+ (SELECT count(*) FROM ah.tool_call t WHERE t.session_id = s.id) FROM ah.session s "
                "WHERE session_uid = %s",
                (UID,),
            ).fetchone()[0]
            hit = conn.execute("SELECT max(id) FROM ah.message").fetchone()[0]
        client = TestClient(
            create_app(WebSettings(reader_dsn=lambda: embedded.server_dsn(pgdata, user=READER))),
            base_url="http://127.0.0.1",
        )
        last = (total + PAGE_EVENTS - 1) // PAGE_EVENTS

        def get(url: str, status: int = 200) -> float:
            r = client.get(url, follow_redirects=False)
            assert r.status_code == status, (url, r.status_code, r.text[:200])
            return float(r.headers["server-timing"].split("dur=")[1])

        print(f"session of {total} events ({last} pages of {PAGE_EVENTS}); median of {args.rounds} rounds, server ms")
        for name, url, status in (
            ("page 1", f"/session/{UID}", 200),
            (f"page {last // 2}", f"/session/{UID}?page={last // 2}", 200),
            (f"page {last}", f"/session/{UID}?page={last}", 200),
            ("hit redirect", f"/hit/message/{hit}", 303),
        ):
            times = [get(url, status) for _ in range(args.rounds)]
            print(f"  {name:14s} {statistics.median(times):8.1f}")
        with psycopg.connect(embedded.server_dsn(pgdata, user=READER)) as conn:
            full = _ms(lambda: session_timeline(conn, UID, max_chars=2000), args.rounds)
        print(f"  baseline: read.timeline.session_timeline, whole session: {full:8.1f}")
    finally:
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
