"""``docs/cli.md``: the command reference, generated from the typer app and the config schema.

``python -m agent_history.cli.reference`` rewrites ``docs/cli.md``; ``--check`` exits 1 when the
file differs. ``tests/test_cli_reference.py`` fails the same way, and when a command, an
argument, an option or a config key has no help text (`undocumented`). Commands and options come
from the click command tree typer builds (every command module registered, hidden ones left
out); config keys from `agent_history.config.KNOWN_KEYS`, `METRICS_KEYS` and their help in
`config.KEY_HELP`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agent_history.cli.app import _get_app, _register
from agent_history.config import KEY_HELP, config_keys

TITLE = "# agent-history command reference"
HEADER = (
    f"{TITLE}\n\n"
    "Generated from the typer app and `agent_history/config.py` by `python -m agent_history.cli.reference`;\n"
    "do not edit (`tests/test_cli_reference.py` fails when this file drifts or something is undocumented).\n"
)


def command_tree():
    """The whole click command tree typer builds (every command module registered). typer ships
    its own copy of click, so the tree is read by duck typing (``commands``, ``params``)."""
    _register(None)
    return typer.main.get_command(_get_app())


def _walk(cmd, path: tuple[str, ...]):
    """(path, command) for `cmd` and every visible sub-command, depth first in name order."""
    yield path, cmd
    if _is_group(cmd):
        for name in sorted(cmd.commands):
            sub = cmd.commands[name]
            if not sub.hidden:
                yield from _walk(sub, (*path, name))


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n", 1)[0].split())


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _is_group(cmd) -> bool:
    return isinstance(getattr(cmd, "commands", None), dict)


def _is_argument(p) -> bool:
    return p.param_type_name == "argument"


_TYPE_METAVARS = {"str": "TEXT", "text": "TEXT", "int": "INTEGER", "integer": "INTEGER", "integer range": "INTEGER",
                  "float": "NUMBER", "float range": "NUMBER", "path": "PATH"}  # fmt: skip


def _metavar(p) -> str:
    if p.type.name == "choice":
        return "|".join(map(str, p.type.choices))
    return p.metavar or _TYPE_METAVARS.get(p.type.name, p.type.name.upper())


def _param_name(p) -> str:
    if _is_argument(p):
        return p.human_readable_name.upper()
    names = ", ".join([*p.opts, *p.secondary_opts])
    if not p.is_flag and not p.count:
        names += f" {_metavar(p)}"
    return names


def _usage(name: str, cmd) -> str:
    """``NAME [OPTIONS] ARG [OPTIONAL]… [COMMAND [ARGS]...]``."""
    pieces = [name]
    params = _visible_params(cmd)
    if any(not _is_argument(p) for p in params):
        pieces.append("[OPTIONS]")
    for p in params:
        if _is_argument(p):
            arg = p.human_readable_name.upper() + ("..." if p.nargs == -1 else "")
            pieces.append(arg if p.required else f"[{arg}]")
    if _is_group(cmd):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _default(p) -> str:
    if _is_argument(p) or callable(p.default) or p.default in (None, False, (), []):
        return ""
    if p.is_flag:
        return " (default: on)"
    value = p.default if not isinstance(p.default, (list, tuple)) else ", ".join(map(str, p.default))
    return f" (default: `{value}`)"


def _visible_params(cmd) -> list:
    return [p for p in cmd.params if not getattr(p, "hidden", False) and p.name != "help"]


def commands_markdown(root) -> str:
    """One section per command: its help, usage line and a table of its arguments and options."""
    out: list[str] = []
    for path, cmd in _walk(root, ("agent-history",)):
        name = " ".join(path)
        out.append(f"### `{name}`\n")
        help_text = (cmd.help or "").strip()
        if help_text:
            out.append(" ".join(help_text.split()) + "\n")
        out.append(f"Usage: `{_usage(name, cmd)}`\n")
        params = _visible_params(cmd)
        if params:
            out.append("| argument / option | what |\n| --- | --- |")
            for p in params:
                required = " (required)" if p.required and not _is_argument(p) else ""
                out.append(f"| `{_param_name(p)}` | {_one_line(getattr(p, 'help', None))}{required}{_default(p)} |")
            out.append("")
        if _is_group(cmd):
            subs = [n for n in sorted(cmd.commands) if not cmd.commands[n].hidden]
            out.append("Commands: " + ", ".join(f"`{n}`" for n in subs) + "\n")
    return "\n".join(out)


def config_markdown() -> str:
    """One table per config section: each key (``<name>`` for sections whose keys are names) and its help."""
    out: list[str] = []
    for section, keys in config_keys().items():
        out.append(f"### `[{section}]`\n\n| key | what |\n| --- | --- |")
        for key in keys:
            out.append(f"| `{key}` | {_one_line(KEY_HELP.get(f'{section}.{key}'))} |")
        out.append("")
    return "\n".join(out)


def reference() -> str:
    """The whole of ``docs/cli.md``."""
    return (
        f"{HEADER}\n## Commands\n\n{commands_markdown(command_tree())}\n"
        "## Configuration keys\n\n"
        "The config file is `$AGENT_HISTORY_CONFIG` or `$XDG_CONFIG_HOME/agent-history/config.toml` "
        "(defaults < file < environment < flags; an unknown key in a known section is an error, an unknown "
        "section a warning).\n\n"
        f"{config_markdown()}"
    )


def undocumented() -> list[str]:
    """Commands, arguments, options and config keys without help text, one line each."""
    missing: list[str] = []
    for path, cmd in _walk(command_tree(), ("agent-history",)):
        name = " ".join(path)
        if len(path) > 1 and not _first_paragraph(cmd.help):
            missing.append(f"command `{name}`")
        for p in _visible_params(cmd):
            if not _one_line(getattr(p, "help", None)):
                missing.append(f"`{_param_name(p)}` of `{name}`")
    for section, keys in config_keys().items():
        missing += [f"config key {section}.{k}" for k in keys if not KEY_HELP.get(f"{section}.{k}")]
    return missing


def main(argv: list[str] | None = None) -> int:
    """Rewrite ``docs/cli.md`` (or with ``--check`` compare it); 1 when ``--check`` finds a difference."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    new = reference()
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if "--check" in args:
        if old != new:
            print("docs/cli.md differs from the typer app (python -m agent_history.cli.reference)")
            return 1
        return 0
    if old != new:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
