"""`agent-history resume UID`: print (or run) the harness's own resume or fork command."""

from __future__ import annotations

import os
import shutil

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, fail, print_json, print_warning


@app.command("resume")
def resume_cmd(
    uid: str = typer.Argument(..., help="Session uid or a unique prefix (≥ 6 characters)."),
    exec_: bool = typer.Option(False, "--exec", help="Run the command in the session's working directory."),
    print_: bool = typer.Option(False, "--print", help="Print the command (the default)."),
    fork: bool = typer.Option(False, "--fork", help="Fork the session into a new one instead (where the harness can)."),
    json: bool = typer.Option(False, "--json", help="Print JSON (never runs anything)."),
) -> None:
    """The agent's own command to resume (or fork) a catalogued session, run in its working directory."""
    from agent_history.cli.options import _ambiguous, _not_found, _session_arg
    from agent_history.read.resume import resume_session
    from agent_history.session.refs import AmbiguousSession, SessionNotFound

    if exec_ and print_:
        fail("--exec and --print cannot be combined (run the command, or print it)", 2)
    uid = _session_arg(uid, "UID") or ""
    db = database()
    with db.connect() as conn:
        try:
            r = resume_session(conn, uid, fork=fork)
        except AmbiguousSession as exc:
            _ambiguous(exc)
        except SessionNotFound as exc:
            _not_found(uid, "UID", exc)  # a too-short prefix says so (exit 2), else exit 1
    if json:
        print_json(r.as_dict())
        return
    if r.argv is None:
        fail(f"no {'fork' if fork else 'resume'} command: {r.why}", 1)
    gone = r.cwd is not None and r.cwd_exists is False
    if not exec_:
        where = f"cd {_quote(r.cwd)} && " if r.cwd and not gone else ""
        console.print(where + (r.command or ""), highlight=False, markup=False, soft_wrap=True)
        if gone:
            print_warning(f"the session's working directory {r.cwd} no longer exists")
        if r.why:
            print_warning(r.why)
        return
    if gone:
        fail(f"the session's working directory {r.cwd} no longer exists; not running {r.command}", 1)
    if shutil.which(r.argv[0]) is None:
        fail(f"{r.argv[0]} is not on PATH; the command is: {r.command}", 1)
    if r.cwd:
        os.chdir(r.cwd)
    os.execvp(r.argv[0], r.argv)


def _quote(path: str | None) -> str:
    import shlex

    return shlex.quote(path or "")
