"""`agent-history embed-service status|stop`: the warm embedding service (`agent_history.embed.service`).

The service starts by itself when a command needs a vector from the local model; these commands
only look at it and stop it. Neither starts it, loads torch or touches the database.
"""

from __future__ import annotations

import typer

from agent_history.cli.app import app as root
from agent_history.cli.context import database
from agent_history.cli.output import console, print_json

app = typer.Typer(
    help="The warm local embedding service (started on demand by search/embed/mcp).", no_args_is_help=True
)
root.add_typer(app, name="embed-service")


@app.command("status")
def status_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Whether the service runs, its pid, model, idle timeout, requests served, socket and log."""
    from agent_history.embed.service import service_status

    data = service_status(database().settings.data_dir)
    if json:
        print_json(data)
        return
    if not data["running"]:
        stale = " (stale pid/socket files: removed at the next start)" if data.get("stale") else ""
        console.print(f"embedding service not running{stale}; log {data['log']}", highlight=False, markup=False)
        return
    for key in ("pid", "model_path", "idle_timeout_s", "uptime_s", "idle_s", "requests", "texts", "socket", "log"):
        console.print(f"{key:<15} {data[key]}", highlight=False, markup=False)


@app.command("stop")
def stop_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Stop the service (it also exits by itself after `[embedding] service_idle_s` idle seconds)."""
    from agent_history.embed.service import stop_service

    stopped = stop_service(database().settings.data_dir)
    if json:
        print_json({"stopped": stopped})
        return
    console.print("embedding service stopped" if stopped else "embedding service was not running")
