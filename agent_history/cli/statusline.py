"""`agent-history statusline`: the fast path, run by `cli.app.main` before typer is imported
(Claude Code runs it at every status update). Imports only the config, the database connection
and `read.statusline`; errors are one line on stderr: a malformed payload or option exits 2, an
unreadable catalogue still prints a line (Claude Code's own session cost), exit 0. A usage error
starts no resident query process.

On a data dir never used (no DSN configured and no embedded server created yet) it connects to
nothing: it prints the line with Claude Code's own session cost and ``no catalogue yet``, and
neither creates the embedded server nor starts the resident query process (Claude Code runs the
status line for people who may never index anything; `agent-history index` creates both)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

USAGE = "usage: agent-history statusline [--timezone ZONE] < payload.json"
CATALOGUE_UNAVAILABLE = "catalogue unavailable"
"""The line's last part when the catalogue could not be read (the reason is on stderr)."""
NO_CATALOGUE = "no catalogue yet"
"""The line's last part on a data dir never used (module docstring)."""


def _error(message: str) -> int:
    """Write ``error: <message>`` to stderr; returns 2. A usage error starts no resident query
    process after the command (nothing was read: a data dir never used stays untouched)."""
    from agent_history.cli import resident
    from agent_history.echo import clip_echoes

    resident.forgo_start()
    sys.stderr.write(f"error: {clip_echoes(message)}\n")
    return 2


def run(argv: list[str], stdin_text: str, now: datetime | None = None) -> int:
    """Read the payload (`stdin_text`), print the line to stdout; returns the exit code.
    `argv`: the arguments after ``statusline`` (``--timezone ZONE``, ``--now ISO`` for tests)."""
    from agent_history.usage.statusline import StatusLineError, parse_payload, render_line

    zone_name, clock = None, None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("--timezone", "-z", "--now") and args:
            value = args.pop(0)
            if arg == "--now":
                clock = value
            else:
                zone_name = value
        else:
            return _error(f"statusline: unexpected argument {arg!r} ({USAGE})")
    try:
        given = parse_payload(stdin_text)
    except StatusLineError as exc:
        return _error(str(exc))
    if zone_name is None:
        import tzlocal

        tz = tzlocal.get_localzone()
    else:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            tz = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            return _error(f"--timezone: unknown time zone {zone_name!r} (an IANA name such as UTC or Europe/Berlin)")
    if clock is not None:
        try:
            now = datetime.fromisoformat(clock)
        except ValueError:
            return _error(f"--now: not an ISO time: {clock!r}")
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    figures, missing = None, CATALOGUE_UNAVAILABLE
    try:
        from agent_history.config import load_settings

        settings = load_settings(None)
        if _never_used(settings):
            from agent_history.cli import resident

            resident.forgo_start()
            missing = NO_CATALOGUE
        else:
            from agent_history.db.connection import Database
            from agent_history.read.statusline import status_figures

            with Database(settings).connect() as conn:
                figures = status_figures(conn, given.session_id, now, tz)
    except Exception as exc:  # the line must still print: say why on stderr, one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        sys.stderr.write(f"warning: statusline: catalogue not read: {first}\n")
    sys.stdout.write(render_line(given, figures, now, missing) + "\n")
    return 0


def _never_used(settings) -> bool:
    """No DSN configured and no embedded cluster in the data dir (its ``PG_VERSION`` file)."""
    return not settings.dsn and not (settings.embedded_pgdata.expanduser() / "PG_VERSION").is_file()
