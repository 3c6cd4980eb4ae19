"""`agent-history db …`: status, upgrade, roles, stop."""

from __future__ import annotations

import typer
from rich.table import Table

from agent_history.cli.context import database
from agent_history.cli.output import console, print_json
from agent_history.db import embedded, migrate, roles
from agent_history.db.status import db_status

app = typer.Typer(help="Manage the catalogue database (embedded by default).", no_args_is_help=True)


@app.command("status")
def status_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Server, PostgreSQL/pgvector versions, keyword backend, schema revision, row counts."""
    data = db_status(database())
    if json:
        print_json(data)
        return
    console.print(f"server           {data['server']}")
    console.print(f"postgresql       {data['postgres_version']}")
    console.print(f"pgvector         {data['pgvector_version']}")
    console.print(f"keyword backend  {data['keyword_backend']}")
    at = "at head" if data["schema_at_head"] else f"head is {data['schema_head']}"
    console.print(f"schema           {data['schema_revision']} ({at})")
    table = Table("table", "rows", box=None, pad_edge=False)
    for name, n in data["row_counts"].items():
        table.add_row(name, f"{n:,}")
    console.print(table)


@app.command("upgrade")
def upgrade_cmd() -> None:
    """Migrate the schema to head and re-apply changed sql/*.sql files."""
    from agent_history.db.bm25 import ensure_bm25_indexes

    db = database()
    migrate.upgrade(db.dsn)
    with db.connect(autocommit=True) as conn:
        created = ensure_bm25_indexes(conn)
    console.print(
        f"schema at {migrate.head_revision()}" + (f"; BM25 indexes built: {', '.join(created)}" if created else "")
    )


@app.command("roles")
def roles_cmd() -> None:
    """Create/update ah_reader (read-only), ah_writer and ah_collector (writes only the collector tables); passwords from env/config."""
    db = database()
    s = db.settings
    names = roles.ensure_roles(
        db.dsn,
        reader_password=s.reader_password,
        writer_password=s.writer_password,
        statement_timeout_ms=s.statement_timeout_ms,
    )
    console.print("roles up to date: " + ", ".join(names))


@app.command("stop")
def stop_cmd() -> None:
    """Stop the embedded server (no effect on a configured DSN)."""
    db = database()
    if not db.is_embedded:
        console.print("a DSN is configured; nothing to stop")
        return
    stopped = embedded.stop(db.settings.embedded_pgdata)
    console.print("embedded server stopped" if stopped else "embedded server was not running")
