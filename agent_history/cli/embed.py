"""`agent-history embed` and `similar`: the embed worker and nearest-neighbour lookups (thin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.loop import BUSY_EXIT, every_seconds, run_every, start_metrics, stop_on_signals
from agent_history.cli.output import check_limit, console, count, fail, print_json

if TYPE_CHECKING:  # imported by the commands themselves: httpx and the worker stay off every other command's start-up
    from agent_history.embed.worker import EmbedSummary, EmbedWorker


def summary_line(s: EmbedSummary) -> str:
    """The one-line result of a pass."""
    stopped = f"; stopped: {s.stopped}" if s.stopped else ""
    index = f"; built HNSW index {s.index_built}" if s.index_built else ""
    elided = f"; {s.elided:,} too long, embedded by head and tail" if s.elided else ""
    return (
        f"embedded ({s.model}): {count(s.sources, 'source')} examined, {count(s.chunks_written, 'chunk')} written, "
        f"{count(s.embedded, 'new vector')}, {s.cached:,} cached, {s.failed:,} failed; "
        f"{count(s.tokens, 'token')} in {count(s.requests, 'request')}; {s.seconds:.2f} s{elided}{stopped}{index}"
    )


def _one_pass(worker: EmbedWorker, show_progress: bool) -> EmbedSummary:
    if not show_progress:
        return worker.run()
    columns = (
        TextColumn("[bold]embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sources"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("sources", total=worker.count_pending())
        worker.progress = lambda n: progress.update(task, advance=n)
        return worker.run()


@app.command("embed")
def embed_cmd(
    every: float = typer.Option(
        None, "--every", min=1.0, callback=every_seconds, help="Repeat every SECONDS (≥ 1) until stopped."
    ),
    limit: int = typer.Option(None, "--limit", help="Send at most N (≥ 1) inputs to the provider per pass."),
    json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Chunk, redact and embed pending messages and tool output (resumable; cached by model + input).
    Exit 75 (EX_TEMPFAIL) when another embed pass is running: nothing was done, try again later."""
    from agent_history.embed.provider import EmbeddingError, make_embedder
    from agent_history.embed.worker import AnotherEmbedRunning, EmbedWorker

    check_limit(limit, high=0)
    db = database()
    settings = db.settings.embedding
    if settings is None:
        fail(
            "embeddings are off: configure [embedding] in the config file (at least `provider`; every key is in "
            "docs/cli.md under Configuration keys, set-ups in the README's Search, embeddings, MCP section)",
            2,
        )
    stop = stop_on_signals()  # from here on SIGINT/SIGTERM end the pass cleanly, between chunks
    try:
        embedder = make_embedder(settings)
        embedder.check()  # before any work: a misconfigured provider fails now, in one line
    except EmbeddingError as exc:
        fail(str(exc), 2)
    conn = db.connect(autocommit=True)
    metrics = start_metrics("embed", db, []) if every else None

    busy = False  # the last pass could not start: another holds the embed lock

    def one_pass() -> bool:
        nonlocal busy
        worker = EmbedWorker(conn, settings, embedder, limit=limit, stop=stop)
        try:
            summary = _one_pass(worker, console.is_terminal and not json)
        except AnotherEmbedRunning as exc:  # "another embed pass is running"
            console.print(str(exc), highlight=False, markup=False)
            busy = True
            return False
        except EmbeddingError as exc:
            _record(conn, None)
            fail(str(exc), 1)
        _record(conn, summary)
        if json:
            print_json(summary.as_dict())
        else:
            console.print(summary_line(summary), highlight=False, soft_wrap=True)
        return True

    try:
        run_every(every, stop, one_pass, db)
    finally:
        if metrics is not None:
            metrics.close()  # one last collection, one flush
        conn.close()
        embedder.close()
    if busy:
        raise typer.Exit(BUSY_EXIT)


def _record(conn, summary: EmbedSummary | None) -> None:
    """Record the pass for the `runs` metrics (ah.meta); None: the pass failed."""
    from agent_history.telemetry.collectors import record_embed_pass

    if summary is None:
        record_embed_pass(conn, ok=False, seconds=None, files_changed=None, rows=None)
    else:
        rows = summary.chunks_written + summary.embedded
        record_embed_pass(conn, ok=True, seconds=summary.seconds, files_changed=summary.sources, rows=rows)


def _ambiguous_ref(conn, ref: str) -> None:
    """Exit 2 with the candidates when `ref` is a uid prefix naming several sessions (`similar`
    found none: `search.vector.find_session_uid` takes only a unique one), as every command that
    takes a session reference does (`cli.options._ambiguous`)."""
    from agent_history.cli.options import _ambiguous
    from agent_history.session.refs import AmbiguousSession, SessionNotFound, resolve_session

    try:
        resolve_session(conn, ref, "")
    except AmbiguousSession as exc:
        _ambiguous(exc)
    except SessionNotFound:
        pass


@app.command("similar")
def similar_cmd(
    ref: str = typer.Argument(..., help="A session uid (or a unique prefix of ≥ 6 characters) or a message uid."),
    limit: int = typer.Option(10, "--limit", "-n", help="Number of results (1–1000)."),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Sessions nearest a session, or messages nearest a message (by their embeddings)."""
    from agent_history.embed.store import model_dimensions
    from agent_history.search import vector
    from agent_history.search.request import SearchRequest

    check_limit(limit)
    db = database()
    settings = db.settings.embedding
    if settings is None:
        fail("embeddings are off: configure [embedding] in the config file", 2)
    model = settings.model_key
    req = SearchRequest(query="", limit=limit)
    with db.connect() as conn:
        dims = model_dimensions(conn, model)
        if dims is None:
            fail(f"no vectors for {model} yet: run `agent-history embed`", 1)
        try:
            message_id = vector.find_message(conn, ref)
            if message_id is not None:
                kind, hits = "messages", vector.similar_messages(conn, message_id, model, dims, req)
            else:
                uid = vector.find_session_uid(conn, ref)
                if uid is None:
                    _ambiguous_ref(conn, ref)
                    fail(f"no session or message {ref!r}", 1)
                kind, hits = "sessions", vector.similar_sessions(conn, uid, model, dims, req)
        except vector.NotEmbedded as exc:
            fail(str(exc), 1)
    from agent_history.cli.options import _found
    from agent_history.cli.search import _render_hit

    if json:
        print_json({"ref": ref, "kind": kind, "model": model, "hits": [h.as_dict() for h in hits]})
        _found(bool(hits))  # exit 1 when nothing was found, as every read command
        return
    if not hits:
        console.print("nothing similar")
    for n, h in enumerate(hits, 1):
        _render_hit(n, h)
    _found(bool(hits))
