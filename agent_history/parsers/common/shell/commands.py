"""The walk over a shell command (`touches_from_shell`): heredocs cut out (`heredocs`), the rest
tokenised and cut into simple commands (`tokenise`), each classified — a redirect, a reader
(`rules.READERS`), ``sed -i``, ``touch``/``tee``/``rm``/``mv``/``cp``/``git``, a wrapper looked
through (`rules.WRAPPERS`), ``bash -c`` parsed again, a patch tool handed to
`patches.touches_from_patch` — with ``cd`` followed. Rules in the package docstring. Pure; never
raises."""

from __future__ import annotations

import posixpath
import re

from agent_history.parsers.common.shell.heredocs import HEREDOC_REF, split_heredocs
from agent_history.parsers.common.shell.patches import touches_from_patch
from agent_history.parsers.common.shell.rules import READERS, WRAPPERS, ReadSpec
from agent_history.parsers.common.shell.tokenise import SimpleCommand, simple_commands, tokens
from agent_history.parsers.common.shell.touch import Touch

_TIMEOUT_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_BARE_PATCH = re.compile(r"\s*(?:apply_?patch\s+)?\*\*\* Begin Patch")
_PATCH_TOOLS = frozenset({"apply_patch", "applypatch", "patch"})
_NOT_FILES = re.compile(r"^/dev/(?:null|stdin|stdout|stderr|tty|fd/\d+)$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_CREATE_REDIRECTS = frozenset({">", ">|", "&>"})
_EDIT_REDIRECTS = frozenset({">>", "&>>", "<>"})


class _Walk:
    def __init__(self) -> None:
        self.out: list[Touch] = []
        self.cwd: str | None = None

    def path(self, p: str) -> str | None:
        if not p or p == "-" or "$" in p or "`" in p or _NOT_FILES.match(p):
            return None
        if self.cwd is not None and not p.startswith(("/", "~")):
            return posixpath.normpath(posixpath.join(self.cwd, p))
        return p

    def add(self, op: str, p: str) -> None:
        q = self.path(p)
        if q is not None and (op, q) not in self.out:
            self.out.append((op, q))

    def cd(self, target: str | None) -> None:
        if target is None or target in ("-", "~") or "$" in target or "`" in target or not target:
            self.cwd = None
            return
        self.cwd = self.path(target) or None
        if self.cwd is None:
            self.cwd = target

    def patch(self, text: str) -> None:
        for op, p in touches_from_patch(text):
            self.add(op, p)

    def script(self, command: str, depth: int) -> None:
        if depth > 4:
            return
        if "<<" not in command and _BARE_PATCH.match(command):  # `apply_patch *** Begin Patch…` unquoted
            self.patch(command)
            return
        text, bodies = split_heredocs(command.replace("\\\n", " "))
        for cmd in simple_commands(tokens(text)):
            self.simple(cmd, bodies, depth)

    def simple(self, cmd: SimpleCommand, bodies: list[str], depth: int) -> None:
        heredoc: str | None = None
        for op, target in cmd.redirects:
            m = HEREDOC_REF.match(target)
            if op in ("<<", "<<-") and m is not None:
                n = int(m.group(1))
                heredoc = bodies[n] if n < len(bodies) else None
            elif op in _CREATE_REDIRECTS:
                self.add("create", target)
            elif op in _EDIT_REDIRECTS:
                self.add("edit", target)
            elif op == "<":
                self.add("read", target)
        words = _unwrap(cmd.words)
        if not words:
            return
        name = posixpath.basename(words[0])
        args = words[1:]
        if name in _PATCH_TOOLS or (name == "git" and args[:1] == ["apply"]):
            if heredoc is not None:
                self.patch(heredoc)
            for a in args:
                if "*** Begin Patch" in a:
                    self.patch(a)
            return
        if name in _SHELLS:
            for j, a in enumerate(args[:-1]):
                if a.startswith("-") and not a.startswith("--") and "c" in a:
                    self.script(args[j + 1], depth + 1)
                    return
            return
        handler = _COMMANDS.get(name)
        if handler is not None:
            handler(self, args)
        elif name in READERS:
            _read(self, READERS[name], args)


def _unwrap(words: list[str]) -> list[str]:
    """Drop leading ``NAME=value`` assignments and wrapper commands with their options."""
    i = 0
    for _ in range(16):
        while i < len(words) and _ASSIGNMENT.match(words[i]):
            i += 1
        if i >= len(words):
            return []
        name = posixpath.basename(words[i])
        opts = WRAPPERS.get(name)
        if opts is None:
            return words[i:]
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            i += 2 if words[i] in opts else 1
        if name == "timeout" and i < len(words) and _TIMEOUT_DURATION.match(words[i]):
            i += 1
    return words[i:]


def _positional(args: list[str], value_opts: frozenset[str] = frozenset()) -> tuple[list[str], dict[str, str]]:
    """Split args → (positional, {option: value}); ``--`` ends options; ``--opt=v`` is one token."""
    pos: list[str] = []
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            pos.extend(args[i + 1 :])
            break
        if a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            if a in value_opts and i + 1 < len(args):
                opts[a] = args[i + 1]
                i += 2
                continue
            opts[a.split("=", 1)[0]] = a.split("=", 1)[1] if "=" in a else ""
        elif a.startswith("+") or (a.startswith("-") and a[1:].isdigit()):
            pass  # `tail +5`, `head -20`
        else:
            pos.append(a)
        i += 1
    return pos, opts


def _read(w: _Walk, spec: ReadSpec, args: list[str]) -> None:
    pos: list[str] = []
    has_script = False
    i = 0
    value_opts = spec.value_opts | spec.script_opts | spec.output_opts
    while i < len(args):
        a = args[i]
        if a == "--":
            pos.extend(args[i + 1 :])
            break
        if a in spec.two_value_opts:
            i += 3
            continue
        if a in value_opts:
            if a in spec.script_opts:
                has_script = True
            elif a in spec.output_opts and i + 1 < len(args):
                w.add("create", args[i + 1])
            i += 2
            continue
        if a.startswith("--") and "=" in a:
            key, val = a.split("=", 1)
            if key in spec.script_opts:
                has_script = True
            elif key in spec.output_opts:
                w.add("create", val)
        elif a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            if len(a) > 2 and a[:2] in value_opts and not a.startswith("--"):  # `-n5`, `-F:`, `-ffile`
                has_script = has_script or a[:2] in spec.script_opts
        elif not (a.startswith("+") or (a.startswith("-") and a[1:].isdigit())):
            pos.append(a)
        i += 1
    if spec.script_first and not has_script and pos:
        pos = pos[1:]
    for p in pos:
        if not _ASSIGNMENT.match(p) or "/" in p.split("=", 1)[0]:
            w.add("read", p)


def _sed(w: _Walk, args: list[str]) -> None:
    in_place = False
    has_script = False
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            pos.extend(args[i:])
            break
        if a.startswith("--"):
            key = a.split("=", 1)[0]
            if key == "--in-place":
                in_place = True
            elif key in ("--expression", "--file"):
                has_script = True
                i += 0 if "=" in a else 1
            elif key == "--line-length" and "=" not in a:
                i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            for k, c in enumerate(a[1:], start=1):
                if c == "i":
                    in_place = True
                    # BSD `-i ''` / `-i .bak`: the suffix is the next word.
                    if k == len(a) - 1 and i < len(args) and (args[i] == "" or re.fullmatch(r"\.[\w~-]+", args[i])):
                        i += 1
                    break
                if c in "efl":
                    has_script = has_script or c in "ef"
                    if k == len(a) - 1:
                        i += 1
                    break
            continue
        pos.append(a)
    if not has_script and pos:
        pos = pos[1:]
    for p in pos:
        w.add("edit" if in_place else "read", p)


def _awk(w: _Walk, args: list[str]) -> None:
    if len(args) >= 2 and args[0] == "-i" and args[1] == "inplace":
        pos, _ = _positional(args[2:], frozenset({"-F", "-v", "-f"}))
        for p in pos[1:]:
            if not _ASSIGNMENT.match(p):
                w.add("edit", p)
        return
    _read(w, READERS["awk"], args)


def _touch(w: _Walk, args: list[str]) -> None:
    pos, _ = _positional(args, frozenset({"-t", "-d", "-r", "--date", "--reference"}))
    for p in pos:
        w.add("create", p)


def _tee(w: _Walk, args: list[str]) -> None:
    pos, opts = _positional(args)
    op = "edit" if "-a" in opts or "--append" in opts else "create"
    for p in pos:
        w.add(op, p)


def _rm(w: _Walk, args: list[str]) -> None:
    pos, _ = _positional(args)
    for p in pos:
        w.add("delete", p)


def _dest_paths(sources: list[str], dest: str, is_dir: bool) -> list[tuple[str, str]]:
    if not is_dir:
        return [(s, dest) for s in sources]
    base = dest.rstrip("/") or ("/" if dest.startswith("/") else ".")
    names = [posixpath.basename(s.rstrip("/")) for s in sources]
    return [(s, n if base == "." else posixpath.join(base, n)) for s, n in zip(sources, names, strict=True)]


def _copy_or_move(w: _Walk, args: list[str], src_op: str, value_opts: frozenset[str]) -> None:
    pos, opts = _positional(args, value_opts | {"-t", "--target-directory", "-S", "--suffix"})
    target = opts.get("-t") or opts.get("--target-directory")
    if target:
        pairs = _dest_paths(pos, target, True)
    elif len(pos) >= 2:
        dest = pos[-1]
        is_dir = len(pos) > 2 or dest.endswith("/") or dest in (".", "..")
        pairs = _dest_paths(pos[:-1], dest, is_dir)
    else:
        return
    for src, dst in pairs:
        w.add(src_op, src)
        w.add("create", dst)


def _mv(w: _Walk, args: list[str]) -> None:
    _copy_or_move(w, args, "move", frozenset())


def _cp(w: _Walk, args: list[str]) -> None:
    _copy_or_move(w, args, "read", frozenset())


def _unlink(w: _Walk, args: list[str]) -> None:
    for p in args[:1]:
        w.add("delete", p)


def _cd(w: _Walk, args: list[str]) -> None:
    pos, _ = _positional(args)
    w.cd(pos[0] if pos else None)


def _popd(w: _Walk, args: list[str]) -> None:
    w.cd(None)


def _git(w: _Walk, args: list[str]) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            w.cd(args[i + 1])
            i += 2
        elif args[i] in ("-c", "--git-dir", "--work-tree", "--namespace") and i + 1 < len(args):
            i += 2
        else:
            i += 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    if sub == "rm":
        pos, opts = _positional(rest)
        if "--cached" not in opts:
            for p in pos:
                w.add("delete", p)
    elif sub == "mv":
        _mv(w, rest)


_COMMANDS = {
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "touch": _touch,
    "tee": _tee,
    "rm": _rm,
    "unlink": _unlink,
    "mv": _mv,
    "cp": _cp,
    "cd": _cd,
    "pushd": _cd,
    "popd": _popd,
    "git": _git,
}


def touches_from_shell(command: str) -> list[Touch]:
    """Files a shell command reads, creates, edits, deletes or moves → ``[(op, path)]``.

    Rules in the module docstring. Returns ``[]`` for non-str input; never raises (a command
    that cannot be read yields what was understood before the problem, or nothing).
    """
    if not isinstance(command, str) or not command.strip():
        return []
    w = _Walk()
    try:
        w.script(command, 0)
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        pass
    return w.out
