"""The `agent-history` command: a thin typer app; each command group lives in its own module.

Start-up is kept cheap (issue 18): `agent-history --version` answers before typer is imported,
the typer app is built on first access to `app` (modules attaching commands still write
``from agent_history.cli.app import app``), and `main()` imports only the module that defines
the command being run (`COMMAND_MODULES`); `--help`, no command, or a command missing from the
map import them all.
"""

from __future__ import annotations

import sys

from agent_history import __version__

# Top-level command → the `agent_history.cli` module that defines it (source: the
# `@app.command(...)` / `add_typer` names in agent_history/cli/*.py; tests/test_cli_startup.py
# checks the map against the commands registered when every module is imported).
COMMAND_MODULES: dict[str, str] = {
    "db": "db",
    "parse": "parse",
    "index": "index",
    "status": "index",
    "issues": "index",
    "rebuild-check": "index",
    "rebuild": "index",
    "archive": "archive",
    "resume": "resume",
    "export": "export",
    "secrets": "secrets",
    "search": "search",
    "sessions": "recall",  # the listing is in `sessions`; `recall` adds exclude/restore/delete (imports it)
    "session": "session",
    "why": "why",
    "touched": "why",
    "mcp": "mcp",
    "connect": "connect",
    "disconnect": "connect",
    "hook": "connect",
    "embed": "embed",
    "similar": "embed",
    "embed-service": "embed_service",
    "service": "service",
    "efficiency": "efficiency",
    "loops": "loops",
    "loop": "loops",
    "journal-sync": "journal",
    "web": "web",
    "recall": "recall",
    "sql": "recall",
    "usage": "usage",
    "pricing": "usage",
    "litellm-fill": "usage",
    "statusline": "usage",  # run by `main` without typer (cli.statusline); the command gives --help
    "collect": "collect",
    "tasks": "tasks",
    "task": "tasks",
    "blame": "blame",
    "skills": "installed",
    "permissions": "installed",
    "closeouts": "installed",
}

# Modules that attach commands to `app`, imported in this order when all are needed.
MODULES: tuple[str, ...] = (
    "parse",
    "index",
    "archive",
    "resume",
    "export",
    "secrets",
    "search",
    "sessions",
    "session",
    "why",
    "mcp",
    "connect",
    "embed",
    "embed_service",
    "service",
    "efficiency",
    "loops",
    "journal",
    "web",
    "recall",
    "usage",
    "collect",
    "tasks",
    "blame",
    "installed",
)

# Root options that take a value (their value is not the command name).
_ROOT_VALUE_OPTIONS = ("--dsn",)


def _markup_mode() -> str | None:
    """Usage errors as click's plain "Error: …" line, not a rich panel wrapped at 80 columns, when
    stderr is a pipe or a log file (one event, one line); rich panels only on a terminal."""
    return "rich" if sys.stderr.isatty() else None


_prepared: dict = {}


def prepare_command() -> None:
    """Convert `app` with the commands registered so far to its click command once, for every
    later `run` in this process and its forks (the resident query process: typer converts every
    registered command on each call, ≈ 60 ms with all the read commands)."""
    import typer.main

    _prepared["command"] = typer.main.get_command(_get_app())


def _click_tree(command):
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _click_tree(sub)


def reset_for_process() -> None:
    """Re-derive what `app` (and its prepared click command) fixed from this process's stderr
    when it was built (the resident query process builds it once and forks a child per command
    with the client's stderr)."""
    mode = _markup_mode()
    if "app" in globals():
        globals()["app"].rich_markup_mode = mode
    for command in _click_tree(_prepared["command"]) if "command" in _prepared else ():
        if hasattr(command, "rich_markup_mode"):
            command.rich_markup_mode = mode


def _call_app() -> None:
    """``app()``; with a prepared click command, what `typer.Typer.__call__` does with it."""
    command = _prepared.get("command")
    if command is None:
        _get_app()()
        return
    import typer.main

    if sys.excepthook != typer.main.except_hook:
        sys.excepthook = typer.main.except_hook
    root = _get_app()
    try:
        command()
    except Exception as exc:
        config = typer.main.DeveloperExceptionConfig(
            pretty_exceptions_enable=root.pretty_exceptions_enable,
            pretty_exceptions_show_locals=root.pretty_exceptions_show_locals,
            pretty_exceptions_short=root.pretty_exceptions_short,
        )
        setattr(exc, typer.main._typer_developer_exception_attr_name, config)
        raise


def _clipping_group():
    """The root command's click class: typer's group, with every click usage error raised while
    parsing or running a command (``'x…' is not a valid integer``, ``No such option: --x…``, a
    ``typer.BadParameter``) cut by `echo.clip_echoes` before typer shows it — an echoed value past
    200 characters says its size instead of filling stderr, as our own error lines do. Sub-groups
    and commands run inside the root's `invoke`, so this one class covers them all."""
    from typer.core import TyperGroup

    from agent_history.echo import clip_echoes

    try:  # typer vendors click as `typer._click` (0.2x) and raises its exceptions, not click's
        from typer._click.exceptions import ClickException
    except ImportError:  # an older typer (pyproject allows ≥ 0.12) uses click itself
        from click.exceptions import ClickException

    def clipped(exc: ClickException) -> None:
        exc.message = clip_echoes(exc.message)  # type: ignore[misc] - what click's format_message() shows

    class ClippingGroup(TyperGroup):
        def make_context(self, info_name, args, parent=None, **extra):  # the root's own options
            try:
                return super().make_context(info_name, args, parent=parent, **extra)
            except ClickException as exc:
                clipped(exc)
                raise

        def invoke(self, ctx):  # every sub-command's parsing and run
            try:
                return super().invoke(ctx)
            except ClickException as exc:
                clipped(exc)
                raise

    return ClippingGroup


def _build():
    import typer

    from agent_history.cli.context import set_dsn

    root = typer.Typer(
        name="agent-history",
        help="A PostgreSQL catalogue of coding-agent transcripts.",
        cls=_clipping_group(),
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=_markup_mode(),
    )

    def _version(value: bool) -> None:
        if value:
            print(f"agent-history {__version__}")
            raise typer.Exit()

    @root.callback()
    def _root(
        dsn: str = typer.Option(None, "--dsn", help="PostgreSQL DSN (default: AGENT_HISTORY_DSN, config, embedded)."),
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
    ) -> None:
        set_dsn(dsn)

    return root


def _get_app():
    return globals()["app"] if "app" in globals() else __getattr__("app")


def __getattr__(name: str):
    """`app` is built on first access (PEP 562), so importing this module costs no typer."""
    if name == "app":
        globals()["app"] = built = _build()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_name(argv: list[str]) -> str | None:
    """The top-level command in `argv` (arguments after the program name), skipping root
    options; None when there is none (e.g. only ``--help``)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return argv[i + 1] if i + 1 < len(argv) else None
        if arg in _ROOT_VALUE_OPTIONS:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        return arg
    return None


def _register(command: str | None = None) -> None:
    """Import the module that defines `command` (all command modules when `command` is None or
    not in `COMMAND_MODULES`), so its commands attach themselves to `app`."""
    import importlib

    module = COMMAND_MODULES.get(command) if command else None
    names = (module,) if module else ("db", *MODULES)
    root = _get_app()
    for name in names:
        if name == "db":
            if not any(group.name == "db" for group in root.registered_groups):
                from agent_history.cli import db as db_cli

                root.add_typer(db_cli.app, name="db")
            continue
        try:
            importlib.import_module(f"agent_history.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"agent_history.cli.{name}":
                raise


def _error_line(exc: BaseException) -> tuple[str, int] | None:
    """(one-line message, exit code) for a known failure, None for anything else."""
    from agent_history.config import ConfigError
    from agent_history.db.errors import DatabaseError

    if isinstance(exc, DatabaseError | ConfigError):
        return str(exc), 2
    psycopg = sys.modules.get("psycopg")  # only a command that imported psycopg can raise its errors
    if psycopg is not None and isinstance(exc, psycopg.ProgrammingError):  # e.g. a malformed DSN
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0], 2
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"database connection lost: {first}", 2
    if isinstance(exc, OSError):  # a data dir or file the user cannot read or write
        return str(exc), 2
    return None


def main() -> None:
    """Entry point: ``--version`` at once; an eligible read command through the resident query
    process when one answers (`cli.resident`: same output, exit code and signals); anything else
    — or no resident process — in this process (`run`), starting a resident process afterwards
    when the command was eligible and ``[service] query_idle_s`` is not 0."""
    argv = sys.argv[1:]
    if argv == ["--version"]:  # answered without importing typer (a ~150 ms saving)
        print(f"agent-history {__version__}")
        return
    from agent_history.cli import resident

    code = resident.serve(argv)
    if code is not None:
        sys.exit(code)
    try:
        run(argv)
    finally:
        if resident.start_wanted():
            _start_resident()
        _spare_exit_collection()


def _spare_exit_collection() -> None:
    """Put every object alive now beyond the garbage collector's reach (`gc.freeze`), so the
    interpreter's exit does not traverse them in its full collections: ≈ 0.1–0.17 s of CPU after
    a command that imported psycopg, typer and rich (a no-change `index`: 0.68 → 0.53 s of CPU,
    docs/performance.md). Exit handlers run, streams are flushed and objects freed by reference
    count as before; objects still alive in reference cycles are not finalized — Python never
    promises that at exit (the resident child skips it altogether with ``os._exit``)."""
    import gc

    gc.freeze()


def _start_resident() -> None:
    """Start the resident query process in the background when the settings allow it (a config
    the command could not read starts nothing: the command said why)."""
    import os

    from agent_history.cli import resident
    from agent_history.config import load_settings

    try:
        settings = load_settings(None)
    except Exception:  # noqa: BLE001 - the command itself reported the config error
        return
    if settings.query_idle_s > 0:
        # realpath: a data dir that is a symlink loop (the command said so) must not raise here
        resident.spawn_server(os.path.realpath(settings.data_dir.expanduser()), settings.query_idle_s)


def _run_closing_output() -> None:
    """`_call_app`, then stdout flushed; a reader gone (``| head``) anywhere on the way ends with
    exit 141 and no message (`cli.terminal.output_closed`): our consoles and writes do that
    themselves; typer/click answer a ``BrokenPipeError`` out of a command with exit 1 (our "not
    found") after swapping ``sys.stdout`` for click's ``PacifyFlushWrapper`` — that swap is how
    it is told apart here."""
    from agent_history.cli.terminal import output_closed

    try:
        _call_app()
    except SystemExit as exc:
        if exc.code == 1 and type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):
            output_closed()
        if exc.code in (None, 0):
            _flush_stdout()
        raise
    _flush_stdout()


def _flush_stdout() -> None:
    """The rest of the output, flushed here rather than by the interpreter's exit (which would
    print an ignored ``BrokenPipeError`` and exit 120 when the reader is gone)."""
    from agent_history.cli.terminal import output_closed

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        output_closed()


def run(argv: list[str]) -> None:
    """Run the command line `argv` (after the program name) in this process, turning known
    failures into one-line errors (exit 2) and a closed stdout into `terminal.EXIT_OUTPUT_CLOSED` (141). Raises
    SystemExit with the exit code."""
    if argv[:1] == ["hook"] and "--help" not in argv:  # after each agent turn: no typer, never fails
        from agent_history.connect.hook import run_hook

        sys.exit(run_hook(argv[1:]))
    if argv[:1] == ["statusline"] and "--help" not in argv:  # each status update: no typer
        from agent_history.cli.statusline import run as run_statusline

        sys.exit(run_statusline(argv[1:], sys.stdin.read()))
    _register(command_name(argv))
    try:
        _run_closing_output()
    except BrokenPipeError:  # stdout's reader went away outside the command (exit 141, quietly)
        from agent_history.cli.terminal import output_closed

        output_closed()
    except KeyboardInterrupt:
        from agent_history.cli.output import err_console

        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        known = _error_line(exc)
        if known is None:
            raise
        from agent_history.cli.output import print_error

        print_error(known[0])
        sys.exit(known[1])
