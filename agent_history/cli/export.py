"""`agent-history export UID`: one session as Markdown, self-contained HTML or JSON; `--gist` shares it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, fail, path_option, print_event, write_stdout
from agent_history.cli.terminal import escape_controls, escape_json

SUFFIX = {"md": ".md", "html": ".html", "json": ".json"}


@app.command("export")
def export_cmd(
    uid: str = typer.Argument(..., help="Session uid or a unique prefix (≥ 6 characters)."),
    fmt: str = typer.Option("md", "--format", "-f", help="md (for a pull request) | html (one offline file) | json."),
    out_arg: str = typer.Option(
        None, "--out", "-o", metavar="PATH", help="Write to this file (default, or `-`: stdout)."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --out file."),
    no_redact: bool = typer.Option(
        False, "--no-redact", help="Keep secret-shaped text (default: replaced by [REDACTED])."
    ),
    gist: bool = typer.Option(False, "--gist", help="Publish it as a secret GitHub gist with `gh gist create`."),
) -> None:
    """Export a session: prompts, replies, collapsed reasoning, tool calls with input and output,
    sub-agents inline, tokens and cost. Secret-shaped spans become [REDACTED] unless --no-redact."""
    from agent_history.cli.options import _ambiguous, _not_found, _session_arg
    from agent_history.read.export import FORMATS, export_session
    from agent_history.read.export_render import RENDERERS
    from agent_history.session.refs import AmbiguousSession, SessionNotFound

    if fmt not in FORMATS:
        fail(f"unknown --format {fmt!r} (known: {', '.join(FORMATS)})", 2)
    uid = _session_arg(uid, "UID") or ""
    out = path_option(out_arg, "--out", "a file, or - for stdout")
    if out is not None and str(out) == "-":
        out = None  # the usual spelling of stdout
    if out is not None and out.is_dir():
        fail(f"--out {out} is a directory", 2)
    device = out is not None and out.exists() and not out.is_file()  # /dev/null, /dev/stdout, a FIFO
    if out is not None and out.exists() and not device and not force:
        fail(f"--out {out} exists; pass --force to overwrite it", 2)
    gh = shutil.which("gh") if gist else None
    if gist and gh is None:
        fail("--gist needs the GitHub CLI `gh` on PATH (https://cli.github.com); nothing was published", 2)
    db = database()
    with db.connect() as conn:
        try:
            doc = export_session(conn, uid, redact=not no_redact)
        except AmbiguousSession as exc:
            _ambiguous(exc)
        except SessionNotFound as exc:
            _not_found(uid, "UID", exc)  # a too-short prefix says so (exit 2), else exit 1
    # shown, never obeyed, wherever the export is read (a terminal, `cat` of the file, a gist):
    # control characters as `^[`, `<U+202E>` (cli.terminal); in JSON as \u escapes
    text = escape_json(RENDERERS[fmt](doc)) if fmt == "json" else escape_controls(RENDERERS[fmt](doc))
    if out is not None and device:
        try:
            with open(out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            fail(f"cannot write --out {out}: {exc.strerror or exc}", 2)
    elif out is not None:
        _write_atomically(out, text)
        print_event(f"wrote {out} ({len(text.encode()):,} bytes)")
    elif not gist:
        write_stdout(text)
    if gist:
        _gist(gh or "gh", out, text, doc, fmt)


def _write_atomically(path: Path, text: str) -> None:
    """`text` to `path` through a temporary file in its directory (a failed write leaves no half
    file). A symlink is written through — the file it names is replaced, the link stays (a
    rename onto the link replaced the user's link with a file); a symlink loop is refused. An
    existing file keeps its permission bits (a new one is 0600, `tempfile.mkstemp`'s)."""
    if path.is_symlink():
        real = Path(os.path.realpath(path))
        if real.is_symlink():  # realpath stops where a loop begins
            fail(f"cannot write --out {path}: a symlink loop", 2)
        path = real
    try:
        fd, tmp = tempfile.mkstemp(prefix=".export-", dir=path.parent or Path("."))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except OSError as exc:
        fail(f"cannot write --out {path}: {exc.strerror or exc}", 2)


def _gist(gh: str, out: Path | None, text: str, doc: dict, fmt: str) -> None:
    """Publish the export as a secret gist (`gh gist create` is secret unless --public)."""
    session = doc["thread"]["session"]
    with tempfile.TemporaryDirectory(prefix="ah-gist-") as tmp:
        path = out if out is not None else Path(tmp) / f"{session['session_uid']}{SUFFIX[fmt]}"
        if out is None:
            path.write_text(text, encoding="utf-8")
        desc = f"{doc['product']} session {session['session_uid']} (agent-history export)"
        done = subprocess.run([gh, "gist", "create", "--desc", desc, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        fail(f"gh gist create failed: {first}", 1)
    console.print(done.stdout.strip(), highlight=False, markup=False, soft_wrap=True)
