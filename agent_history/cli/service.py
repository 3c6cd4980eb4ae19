"""`agent-history service start|status|stop`: the resident query process
(`agent_history.cli.resident_server`; `cli.resident_control` controls it).

It starts by itself when an eligible command finds none (unless ``[service] query_idle_s`` is 0);
`start` starts it now, `status` shows it, `stop` stops it. None of them touches the database.
"""

from __future__ import annotations

import typer

from agent_history.cli.app import app as root
from agent_history.cli.context import database
from agent_history.cli.output import console, fail, print_json

app = typer.Typer(help="The resident query process that answers the read commands.", no_args_is_help=True)
root.add_typer(app, name="service")

_FIELDS = ("pid", "idle_timeout_s", "uptime_s", "idle_s", "requests", "running_commands", "version", "package",
           "socket", "log")  # fmt: skip


def _show(data: dict, json: bool) -> None:
    """`service_status` as JSON, or as lines: ``stopping: finishing a pass (pid N)`` first while a
    stopped process finishes its commands (`resident_control.stopping_line`), then the running
    one's fields or "not running"."""
    from agent_history.cli.resident_control import stopping_line

    if json:
        print_json(data)
        return
    if data.get("stopping"):
        console.print(stopping_line(data["stopping"]), highlight=False, soft_wrap=True)
    if not data["running"]:
        if data.get("stopping"):
            console.print(f"no resident query process listening (commands run in process meanwhile); log {data['log']}",
                          highlight=False)  # fmt: skip
            return
        stale = " (stale files: removed at the next start)" if data.get("stale") else ""
        console.print(f"resident query process not running{stale}; log {data['log']}", highlight=False)
        return
    for key in _FIELDS:
        console.print(f"{key:<17} {data.get(key)}", highlight=False)


@app.command("start")
def start_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Start the resident query process (if none runs) and wait until it listens."""
    from agent_history.cli.resident_control import ServiceCannotStart, start_service

    settings = database().settings
    if settings.query_idle_s == 0:
        fail("service.query_idle_s is 0: the resident query process is turned off", 2)
    try:
        data = start_service(settings.data_dir, settings.query_idle_s)
    except ServiceCannotStart as exc:  # the data dir: a configuration problem
        fail(str(exc), 2)
    except RuntimeError as exc:
        fail(str(exc), 1)
    _show(data, json)


@app.command("status")
def status_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Whether the resident query process runs: pid, idle timeout, uptime, version, socket, log."""
    from agent_history.cli.resident_control import service_status

    _show(service_status(database().settings.data_dir), json)


@app.command("stop")
def stop_cmd(
    json: bool = typer.Option(False, "--json", help="Print JSON."),
    wait: bool = typer.Option(
        False, "--wait", help="Wait until the commands still running in it (an index pass) have finished."
    ),
) -> None:
    """Stop it: it stops answering at once, and exits once the commands running in it have
    finished (an index pass is never cut short; `--wait` waits for that, `service status` says
    "stopping: …" meanwhile). It also exits after `[service] query_idle_s`."""
    from agent_history.cli.output import print_event
    from agent_history.cli.resident_control import stop_service, stopping_line

    def waiting(stopping: dict) -> None:
        if not json:
            print_event(f"waiting: {stopping_line(stopping)}")

    result = stop_service(database().settings.data_dir, until_done=wait, on_wait=waiting)
    if json:
        print_json(result)
        return
    stopping = result.get("stopping")
    if stopping:
        console.print(
            f"resident query process {stopping_line(stopping)}; it exits when that ends — "
            "`agent-history service status` says when, `agent-history service stop --wait` waits for it",
            highlight=False,
            soft_wrap=True,  # one line (an event a script reads), as the errors
        )
        return
    done = result["stopped"] or result.get("waited")
    console.print("resident query process stopped" if done else "resident query process was not running")
