"""Remote-host invocations in shell commands: ``ssh``, ``scp``, ``rsync``, ``sftp``. Pure; never raises.

`remote_invocations(command)` → ``[Remote(program, host, user)]`` in order of appearance.

- The command is tokenised with `shlex` (POSIX, operators ``; & | ( ) < >`` as separate tokens;
  unbalanced quotes fall back to a whitespace split) and cut into simple commands at operators.
- Wrappers are looked through: ``sudo env time nohup nice timeout command exec``, leading
  ``NAME=value`` assignments, and ``bash/sh/zsh -c SCRIPT`` (the script is parsed too).
- ``ssh [opts] [user@]host [cmd…]`` and ``ssh://[user@]host[:port]``: the first argument that is
  not an option (options that take a value — ``-p 22``, ``-i key``, ``-o X=Y`` — skip it);
  ``-l user`` sets the user. ``sftp`` is read the same way (``host:path`` allowed).
- ``scp``/``rsync``: every argument shaped ``[user@]host:path`` (rsync also ``host::module`` and
  ``rsync://[user@]host/…``; scp also ``scp://[user@]host[:port]/…``). Local paths (``/x``,
  ``./x``, ``x`` without a colon) are not hosts. Options taking a separate value (``-e "ssh -p
  2"``, ``--exclude PAT``, ``-P 22``) are skipped with their value.
- Arguments the shell would have to evaluate (``$HOST``) are reported as written.

The tool-call side: `command_of_input(input_text)` pulls the shell command out of a tool call's
input (JSON ``command`` / ``cmd`` as a string or an argv list, else the raw text).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

__all__ = ["PROGRAMS", "Remote", "command_of_input", "remote_invocations"]

PROGRAMS = ("ssh", "scp", "rsync", "sftp")


@dataclass(frozen=True, slots=True)
class Remote:
    """One program run against one remote host. `user` is None when not given."""

    program: str
    host: str
    user: str | None


_OPERATORS = frozenset({";", "&", "|", "&&", "||", ";;", "(", ")", "|&"})
_REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<<", "<>", ">&", "<&", "&>", "&>>", ">|"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "nice", "command", "exec", "builtin", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HOST = re.compile(r"^[A-Za-z0-9_$%{}\[\]][A-Za-z0-9_.$%{}\[\]:-]*$")

# Short options that take a value, per program (from the programs' man pages).
_VALUE_SHORT = {
    "ssh": frozenset("BbcDEeFIiJLlmOoPpQRSWw"),
    "sftp": frozenset("BbcDFiJloPRSs"),
    "scp": frozenset("cDFiJloPSX"),
    "rsync": frozenset("efBTM"),
}
_RSYNC_VALUE_LONG = frozenset(
    "--rsh --exclude --include --filter --exclude-from --include-from --files-from --rsync-path "
    "--log-file --log-file-format --port --password-file --partial-dir --temp-dir --compare-dest "
    "--copy-dest --link-dest --backup-dir --suffix --chmod --chown --bwlimit --timeout --contimeout "
    "--max-size --min-size --usermap --groupmap --out-format --info --debug --skip-compress --iconv "
    "--sockopts --outbuf --checksum-choice --compress-choice --compress-level --max-delete "
    "--block-size --modify-window --stop-after --stop-at --address --only-write-batch --write-batch "
    "--read-batch --protocol --remote-option".split()
)


def _tokens(command: str) -> list[str]:
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lex.whitespace_split = True
        lex.commenters = ""
        return list(lex)
    except ValueError:  # unbalanced quotes: best effort
        return re.findall(r"&&|\|\||[;&|()<>]|[^\s;&|()<>]+", command)


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    current: list[str] = []
    skip_next = False
    for tok in tokens:
        if skip_next:  # the target of a redirect
            skip_next = False
            continue
        if tok in _OPERATORS or (tok and set(tok) <= set(";&|()")):
            if current:
                out.append(current)
            current = []
        elif tok in _REDIRECTS or (tok and set(tok) <= set("<>&") and tok != "&"):
            skip_next = True
        else:
            current.append(tok)
    if current:
        out.append(current)
    return out


def _unwrap(words: list[str]) -> list[str]:
    """Drop assignments and wrapper commands (with `timeout`'s duration) from the front."""
    i = 0
    while i < len(words):
        word = words[i]
        base = word.rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(word):
            i += 1
        elif base in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):  # sudo -u x, env -i, nice -n 5
                i += 2 if words[i] in ("-u", "-g", "-n", "-C", "-o", "-e", "-i0") else 1
        elif base == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1  # the duration
        else:
            break
    return words[i:]


def _split_user(target: str) -> tuple[str | None, str]:
    if "@" in target:
        user, host = target.rsplit("@", 1)
        return (user or None), host
    return None, target


def _url_target(arg: str, schemes: tuple[str, ...]) -> tuple[str | None, str] | None:
    m = re.match(r"^(?:" + "|".join(schemes) + r")://([^/]+)", arg)
    if not m:
        return None
    user, hostport = _split_user(m.group(1))
    host = hostport.rsplit(":", 1)[0] if not hostport.startswith("[") else hostport.split("]")[0] + "]"
    return user, host


def _colon_target(arg: str) -> tuple[str | None, str] | None:
    """``[user@]host:path`` or ``host::module`` (not a local path, not a URL)."""
    if arg.startswith(("/", "./", "../", "~", "-")) or "://" in arg:
        return None
    m = re.match(r"^((?:[^@/:\s]+@)?)(\[[^\]]+\]|[^:/@\s]+):", arg)
    if not m:
        return None
    user = m.group(1)[:-1] or None
    host = m.group(2)
    if len(host) == 1 and host.isalpha():  # C:\path
        return None
    return user, host


def _positionals(program: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional arguments, and the values of short options (last one wins)."""
    values = _VALUE_SHORT.get(program, frozenset())
    pos: list[str] = []
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            pos.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            if program == "rsync" and "=" not in arg and arg in _RSYNC_VALUE_LONG:
                i += 1
            i += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            for j, ch in enumerate(arg[1:], start=1):
                if ch in values:
                    rest = arg[j + 1 :]
                    if rest:
                        opts[ch] = rest
                    elif i + 1 < len(args):
                        opts[ch] = args[i + 1]
                        i += 1
                    break
            i += 1
            continue
        pos.append(arg)
        if program in ("ssh", "sftp"):  # the rest is the remote command
            break
        i += 1
    return pos, opts


def _remote_of(program: str, args: list[str]) -> list[Remote]:
    pos, opts = _positionals(program, args)
    found: list[Remote] = []
    if program in ("ssh", "sftp"):
        if not pos:
            return []
        target = pos[0]
        url = _url_target(target, ("ssh", "sftp"))
        if url:
            user, host = url
        else:
            user, host = _split_user(target.split(":", 1)[0] if program == "sftp" else target)
        user = user or opts.get("l")
        if host and _HOST.match(host):
            found.append(Remote(program, host, user))
        return found
    for arg in pos:
        target = _url_target(arg, ("rsync", "scp", "ssh")) or _colon_target(arg)
        if target and target[1] and _HOST.match(target[1]):
            found.append(Remote(program, target[1], target[0]))
    return found


def remote_invocations(command: str, *, _depth: int = 0) -> list[Remote]:
    """Every ssh/scp/rsync/sftp run against a host in `command`, in order (see module docstring)."""
    if not command or _depth > 3:
        return []
    found: list[Remote] = []
    for words in _simple_commands(_tokens(command)):
        words = _unwrap(words)
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in PROGRAMS:
            for remote in _remote_of(program, words[1:]):
                if remote not in found:
                    found.append(remote)
        elif program in _SHELLS:
            for k, arg in enumerate(words[1:], start=1):
                if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:] and k + 1 < len(words):
                    for remote in remote_invocations(words[k + 1], _depth=_depth + 1):
                        if remote not in found:
                            found.append(remote)
                    break
    return found


def command_of_input(input_text: str | None) -> str:
    """The shell command in a tool call's input: JSON ``command``/``cmd`` (string or argv), else the text."""
    if not input_text:
        return ""
    try:
        data = json.loads(input_text)
    except ValueError:
        return input_text
    if isinstance(data, dict):
        for key in ("command", "cmd", "script"):
            value = data.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return shlex.join(value)
    if isinstance(data, str):
        return data
    return input_text
