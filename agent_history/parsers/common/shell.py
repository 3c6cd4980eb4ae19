"""File touches read from shell commands and patches (→ FileTouchRow). Pure; never raises.

`touches_from_shell(command)` → ``[(op, path)]`` with op in read | create | edit | delete | move.
The command is tokenised as `shlex` does (POSIX rules; one regular-expression pass gives its exact
tokens, `shlex` itself runs only where it would raise; on unbalanced quotes a plain regex split
is the fallback) and cut into simple commands at ``; && || | & ( )`` and newlines. Heredoc bodies are
set aside first, so their lines are never read as commands. Rules (declared as data below):

- Readers (`READERS`): ``cat head tail less more bat nl wc tac sort uniq cut diff cmp xxd od
  hexdump strings md5sum sha1sum sha256sum shasum stat file source .`` → read every path
  argument; ``sed awk jq`` → read the files after their script/filter argument. Options that
  take a value (``head -n 5``, ``cut -d ,``) are skipped with their value. Searches and listings
  (``grep rg find ls tree``) are not file touches.
- ``sed -i`` (GNU ``-i``, ``-i.bak``, ``--in-place``; BSD ``-i ''``) → edit the files.
- ``touch f`` → create; ``tee f`` → create, ``tee -a f`` → edit.
- Redirects: ``> f``, ``>| f``, ``&> f``, ``2> f`` → create; ``>> f``, ``&>> f``, ``<> f`` →
  edit; ``< f`` → read. ``/dev/null``, ``/dev/std*``, ``/dev/fd/*``, ``/dev/tty`` and fd
  duplications (``2>&1``) are not files.
- ``rm [-rf] f…``, ``unlink f``, ``git rm f…`` → delete (``git rm --cached`` touches no file).
- ``mv a b`` / ``git mv a b`` → ``("move", a)`` then ``("create", b)``: the source path is gone,
  a file appears at the destination. ``cp a b`` → ``("read", a)``, ``("create", b)``. When the
  destination is known to be a directory (several sources, a trailing ``/``, ``.``/``..``, or
  ``-t DIR``) the created path is ``DIR/basename(src)``; a single source with a bare
  destination is taken as a file path (we cannot tell a directory from its name).
- ``mkdir``/``rmdir`` are ignored (directories are not files).
- ``cd D`` (and ``pushd D``, ``git -C D``) with a literal ``D``: later relative paths are joined
  to ``D`` (``posixpath.normpath``), so ``cd pkg && cat a.ts`` reads ``pkg/a.ts``. After ``cd``
  with no/unknown target (``cd``, ``cd -``, ``cd $X``) relative paths are reported as given.
  Paths are otherwise reported as written: not resolved against the session cwd (the parser's
  job), ``~`` not expanded, globs kept (``rm /tmp/*`` deletes ``/tmp/*``).
- Arguments that need the shell to evaluate them (``$VAR``, ``$(…)``, backticks) are skipped.
- Wrappers are looked through: ``sudo env time nohup nice timeout command exec builtin xargs``,
  leading ``NAME=value`` assignments, ``bash/sh/zsh -c 'script'`` (the script is parsed too).
- ``apply_patch``/``applypatch``/``git apply``/``patch`` fed a heredoc, or a command holding a
  ``*** Begin Patch`` envelope (Codex ``["apply_patch", patch]``): the patch is parsed with
  `touches_from_patch` and its relative paths joined to the current ``cd``.
For an argv list (Codex legacy ``command: [...]``) pass ``shlex.join(argv)``.

`touches_from_patch(patch)` reads:
- Codex apply_patch envelopes (between ``*** Begin Patch`` and ``*** End Patch``, markers at a
  line start): ``*** Add File: p`` → create, ``*** Update File: p`` → edit, ``*** Delete File:
  p`` → delete, ``*** Update File: p`` + ``*** Move to: q`` → ``("move", p)``, ``("create", q)``
  (same convention as ``mv``).
- Unified diffs (git or plain): ``--- a/x`` / ``+++ b/x`` → edit x; ``--- /dev/null`` → create;
  ``+++ /dev/null`` → delete; different old/new names → move + create. Git headers without
  hunks count too (``new file mode``, ``deleted file mode``, ``rename from/to``). ``a/``/``b/``
  prefixes are dropped when both sides carry them; hunk bodies are skipped by their line counts,
  so a removed line ``-- comment`` (``--- comment``) is not a header.

Both return pairs in first-seen order without duplicates.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import shlex
from dataclasses import dataclass, field

__all__ = ["touch_uid", "touches_from_patch", "touches_from_shell"]

Touch = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ReadSpec:
    """How a reading command takes its arguments.

    ``value_opts``: options followed by a value to skip (``-n 5``). ``script_first``: the first
    positional argument is a script/filter, not a file (``sed``, ``awk``, ``jq``).
    ``script_opts``: options whose value is the script, so no positional script follows.
    ``output_opts``: options whose value is a file written (``sort -o out``).
    ``two_value_opts``: options followed by two values (``jq --arg name value``).
    """

    value_opts: frozenset[str] = frozenset()
    script_first: bool = False
    script_opts: frozenset[str] = frozenset()
    output_opts: frozenset[str] = frozenset()
    two_value_opts: frozenset[str] = frozenset()


def _spec(
    value: str = "", *, script_first: bool = False, script: str = "", output: str = "", two: str = ""
) -> ReadSpec:
    return ReadSpec(
        frozenset(value.split()),
        script_first,
        frozenset(script.split()),
        frozenset(output.split()),
        frozenset(two.split()),
    )


READERS: dict[str, ReadSpec] = {
    "cat": _spec(),
    "bat": _spec("-l --language -r --line-range -H --highlight-line --style --theme"),
    "head": _spec("-n -c --lines --bytes"),
    "tail": _spec("-n -c --lines --bytes -s --sleep-interval --pid"),
    "less": _spec(),
    "more": _spec(),
    "nl": _spec("-b -d -f -h -i -l -n -s -v -w"),
    "wc": _spec(),
    "tac": _spec("-s --separator"),
    "sort": _spec("-k --key -t --field-separator -T -S --buffer-size", output="-o --output"),
    "uniq": _spec("-f -s -w --skip-fields --skip-chars --check-chars"),
    "cut": _spec("-d -f -c -b --delimiter --fields --characters --bytes"),
    "diff": _spec("-U -C -x -X -I -L --label --unified --context"),
    "cmp": _spec("-i -n --ignore-initial --bytes"),
    "xxd": _spec("-c -g -l -s -o"),
    "od": _spec("-A -j -N -t -w"),
    "hexdump": _spec("-n -s -e -f"),
    "strings": _spec("-n -t -e"),
    "md5sum": _spec(),
    "sha1sum": _spec(),
    "sha256sum": _spec(),
    "shasum": _spec("-a --algorithm"),
    "stat": _spec("-c -f --format --printf"),
    "file": _spec("-m -F"),
    "source": _spec(),
    ".": _spec(),
    "sed": _spec("-l --line-length", script_first=True, script="-e --expression -f --file"),
    "awk": _spec("-F -v", script_first=True, script="-f"),
    "gawk": _spec("-F -v", script_first=True, script="-f"),
    "jq": _spec(
        "--indent --tab -L", script_first=True, script="-f --from-file", two="--arg --argjson --slurpfile --rawfile"
    ),
}
"""Commands that read the files named in their arguments (see `ReadSpec`)."""

WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset("-u -g -h -p -C -D -U -r -t".split()),
    "env": frozenset("-u -C -S --unset --chdir".split()),
    "time": frozenset("-f -o".split()),
    "nohup": frozenset(),
    "nice": frozenset("-n --adjustment".split()),
    "timeout": frozenset("-s -k --signal --kill-after".split()),
    "command": frozenset(),
    "exec": frozenset("-a".split()),
    "builtin": frozenset(),
    "xargs": frozenset("-n -I -i -P -L -l -d -E -e -s -a --max-args --max-procs --delimiter".split()),
    "stdbuf": frozenset("-i -o -e".split()),
}
"""Commands that run another command: skip them (and their value options) and look at the rest."""

_TIMEOUT_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_BARE_PATCH = re.compile(r"\s*(?:apply_?patch\s+)?\*\*\* Begin Patch")
_PATCH_TOOLS = frozenset({"apply_patch", "applypatch", "patch"})
_NOT_FILES = re.compile(r"^/dev/(?:null|stdin|stdout|stderr|tty|fd/\d+)$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z0-9_.-]+))")
_HEREDOC_REF = re.compile(r"^__ah_heredoc_(\d+)__$")
_PUNCT = "();<>|&\n"
_REDIRECT = re.compile(r"^(?:&>>|&>|>>|>\||>|<>|<<<|<<-|<<|<|>&|<&)$")
_FALLBACK_TOKENS = re.compile(r"&&|\|\||;;|&>>|&>|>>|>\||<<<|<<|>&|<&|[;|&()<>\n]|[^\s;|&()<>]+")
_CREATE_REDIRECTS = frozenset({">", ">|", "&>"})
_EDIT_REDIRECTS = frozenset({">>", "&>>", "<>"})
_MAX_KEY_PATH = 512


# --- tokenising -------------------------------------------------------------------------------


def _read_bodies(command: str, i: int, pending: list[tuple[str, bool]], bodies: list[str]) -> int:
    """Cut the bodies of `pending` heredocs from `command` starting at line offset `i`."""
    for delim, strip_tabs in pending:
        body: list[str] = []
        while i < len(command):
            nl = command.find("\n", i)
            line = command[i:] if nl < 0 else command[i:nl]
            i = len(command) if nl < 0 else nl + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
            body.append(line)
        bodies.append("\n".join(body))
    return i


_UNREMARKABLE: dict[str | None, re.Pattern[str]] = {
    None: re.compile(r"[^'\"\\#<\n]+"),
    "'": re.compile(r"[^']+"),
    '"': re.compile(r'[^"\\]+'),
}
"""Quote state of `_split_heredocs` → a run of characters it copies unchanged in that state (no
quote, escape, comment, heredoc or newline can start inside it)."""


def _split_heredocs(command: str) -> tuple[str, list[str]]:
    """Replace each heredoc operator by a ``<< __ah_heredoc_N__`` reference and cut its body out.

    Quote-aware: a ``<<`` inside quotes (``bash -lc 'cat <<EOF …'``, ``"$(cat <<'EOF' …)"``) is
    left alone; the quoted script is parsed on its own when it is run by ``bash -c``.
    """
    if "#" not in command and "<<" not in command:  # no comment, no heredoc: nothing to cut
        return command, []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []
    out: list[str] = []
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        plain = _UNREMARKABLE[quote].match(command, i)
        if plain is not None:  # a run of characters the steps below would copy one by one
            out.append(plain.group())
            i = plain.end()
            continue
        c = command[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\" and i + 1 < n:
            out.append(command[i : i + 2])
            i += 2
            continue
        elif quote == '"':
            quote = None if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1] in " \t\n;&|("):
            nl = command.find("\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == "<" and command.startswith("<<", i) and not command.startswith("<<<", i):
            m = _HEREDOC.match(command, i)
            if m is not None:
                pending.append((m.group(2) or m.group(3) or m.group(4) or "", m.group(1) == "-"))
                out.append(f"<< __ah_heredoc_{len(bodies) + len(pending) - 1}__")
                i = m.end()
                continue
        elif c == "\n" and pending:
            out.append(c)
            i = _read_bodies(command, i + 1, pending, bodies)
            pending = []
            continue
        out.append(c)
        i += 1
    if pending:  # heredoc without body lines
        bodies.extend("" for _ in pending)
    return "".join(out), bodies


_PLAIN_TOKENS = re.compile(r"[();<>|&\n]+|[^();<>|&\n \t\r]+")
"""`_tokens` without quotes or backslashes: runs of `_PUNCT` and runs of other non-blank characters
— what `shlex` (POSIX, ``punctuation_chars=_PUNCT``, whitespace ``" \t\r"``) yields then, at a
fraction of its cost (issue 18: `shlex` was the top parsing hot spot)."""


_SHELL_TOKEN = re.compile(
    r"""[ \t\r]+|([();<>|&\n]+)|((?:[^();<>|&\n \t\r'"\\]+|'[^']*'|"(?:[^"\\]|\\[\s\S])*"|\\[\s\S])+)|([\s\S])"""
)
"""One token of `shlex`'s POSIX grammar as `_tokens` configures it: blanks, a run of `_PUNCT`
(group 1), or a word (group 2) of plain characters, ``'…'``, ``"…"`` (a backslash escaping the
next character) and ``\\x``; group 3 is what no token takes (an unclosed quote, a backslash at
the end), left to `shlex` itself."""
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|\\([\s\S])""")
_ESCAPED_IN_DOUBLE = re.compile(r"""\\(["\\])""")


def _unquoted(m: re.Match) -> str:
    """A quoted part of a word as POSIX `shlex` reads it: single quotes literal; inside double
    quotes a backslash escapes only ``"`` and ``\\``; outside, it escapes any character."""
    single, double, escaped = m.groups()
    if single is not None:
        return single
    if double is not None:
        return _ESCAPED_IN_DOUBLE.sub(r"\1", double) if "\\" in double else double
    return escaped


def _quoted_tokens(command: str) -> list[str] | None:
    """`shlex`'s tokens of `command` (quotes and backslashes resolved, ``''`` an empty word) by
    one regular-expression pass, or None when `shlex` would raise (left to it)."""
    out: list[str] = []
    for m in _SHELL_TOKEN.finditer(command):
        punct, word, stray = m.groups()
        if punct is not None:
            out.append(punct)
        elif word is not None:
            plain = "'" not in word and '"' not in word and "\\" not in word
            out.append(word if plain else _QUOTED.sub(_unquoted, word))
        elif stray is not None:
            return None
    return out


def _tokens(command: str) -> list[str]:
    if "'" not in command and '"' not in command and "\\" not in command:
        return _PLAIN_TOKENS.findall(command)
    fast = _quoted_tokens(command)
    if fast is not None:
        return fast
    lex = shlex.shlex(command, posix=True, punctuation_chars=_PUNCT)
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = ""  # comments were removed with the heredocs
    try:
        return list(lex)
    except ValueError:  # unbalanced quotes: best effort
        return [t.strip("'\"") for t in _FALLBACK_TOKENS.findall(command)]


def _is_operator(tok: str) -> bool:
    return bool(tok) and not tok.strip(_PUNCT)  # every character one of `_PUNCT`


@dataclass
class _Simple:
    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)


def _simple_commands(tokens: list[str]) -> list[_Simple]:
    cmds: list[_Simple] = [_Simple()]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if _is_operator(tok) and _REDIRECT.match(tok):
            cur = cmds[-1]
            if cur.words and cur.words[-1].isdigit() and tok[0] in "<>":  # `2>` : fd number, not an argument
                cur.words.pop()
            target = tokens[i + 1] if i + 1 < len(tokens) and not _is_operator(tokens[i + 1]) else ""
            cur.redirects.append((tok, target))
            i += 2 if target else 1
            continue
        if _is_operator(tok):
            if cmds[-1].words or cmds[-1].redirects:
                cmds.append(_Simple())
            i += 1
            continue
        cmds[-1].words.append(tok)
        i += 1
    return [c for c in cmds if c.words or c.redirects]


# --- the walk ---------------------------------------------------------------------------------


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
        text, bodies = _split_heredocs(command.replace("\\\n", " "))
        for cmd in _simple_commands(_tokens(text)):
            self.simple(cmd, bodies, depth)

    def simple(self, cmd: _Simple, bodies: list[str], depth: int) -> None:
        heredoc: str | None = None
        for op, target in cmd.redirects:
            m = _HEREDOC_REF.match(target)
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


# --- patches ----------------------------------------------------------------------------------

_BEGIN = re.compile(r"^(?:.*\s)?\*\*\* Begin Patch\s*$")
_ENVELOPE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (\"?a/.+?\"?) (\"?b/.+?\"?)\s*$")


def _envelope(lines: list[str], out: list[Touch]) -> None:
    inside = False
    pending_update: str | None = None
    for line in lines:
        if _BEGIN.match(line):
            inside = True
            continue
        if line.startswith("*** End Patch"):
            inside = False
            continue
        if not inside:
            continue
        m = _ENVELOPE.match(line)
        if m is None:
            continue
        kind, path = m.group(1), m.group(2)
        if kind == "Move to" and pending_update is not None:
            if ("edit", pending_update) in out:
                out.remove(("edit", pending_update))
            _put(out, "move", pending_update)
            _put(out, "create", path)
            pending_update = None
            continue
        pending_update = path if kind == "Update File" else None
        _put(out, {"Add File": "create", "Update File": "edit", "Delete File": "delete"}.get(kind, "edit"), path)


def _put(out: list[Touch], op: str, path: str) -> None:
    if path and (op, path) not in out:
        out.append((op, path))


def _diff_path(raw: str) -> str:
    p = raw.split("\t", 1)[0].rstrip()
    if len(p) >= 2 and p[0] == p[-1] == '"':
        p = p[1:-1]
    return p


def _strip_ab(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    def has(p: str | None, prefix: str) -> bool:
        return p is None or p == "/dev/null" or p.startswith(prefix)

    if has(old, "a/") and has(new, "b/") and (old not in (None, "/dev/null") or new not in (None, "/dev/null")):
        old = old[2:] if old and old.startswith("a/") else old
        new = new[2:] if new and new.startswith("b/") else new
    return old, new


def _emit_file(out: list[Touch], old: str | None, new: str | None, created: bool, deleted: bool) -> None:
    old, new = _strip_ab(old, new)
    if created or old == "/dev/null":
        if new and new != "/dev/null":
            _put(out, "create", new)
    elif deleted or new == "/dev/null":
        if old and old != "/dev/null":
            _put(out, "delete", old)
    elif old and new and old != new:
        _put(out, "move", old)
        _put(out, "create", new)
    elif new or old:
        _put(out, "edit", new or old or "")


def _unified(lines: list[str], out: list[Touch]) -> None:
    old: str | None = None
    new: str | None = None
    created = deleted = in_file = seen_plus = False
    remaining_old = remaining_new = 0

    def flush() -> None:
        nonlocal old, new, created, deleted, in_file, seen_plus
        if in_file:
            _emit_file(out, old, new, created, deleted)
        old = new = None
        created = deleted = in_file = seen_plus = False

    for line in lines:
        if remaining_old > 0 or remaining_new > 0:  # inside a hunk body
            tag = line[:1]
            if tag == "\\":
                continue
            if tag in (" ", ""):
                remaining_old, remaining_new = remaining_old - 1, remaining_new - 1
                continue
            if tag == "-":
                remaining_old -= 1
                continue
            if tag == "+":
                remaining_new -= 1
                continue
            remaining_old = remaining_new = 0  # malformed hunk: fall through to headers
        g = _GIT_HEADER.match(line)
        if g is not None:
            flush()
            in_file = True
            old, new = _diff_path(g.group(1)), _diff_path(g.group(2))
            continue
        if line.startswith("--- "):
            if in_file and seen_plus:  # a plain diff's next file
                flush()
            in_file = True
            old = _diff_path(line[4:])
            continue
        if line.startswith("+++ ") and in_file:
            new = _diff_path(line[4:])
            seen_plus = True
            continue
        if line.startswith("new file mode"):
            created = True
        elif line.startswith("deleted file mode"):
            deleted = True
        elif line.startswith("rename from "):
            old = line[len("rename from ") :].strip()
        elif line.startswith("rename to "):
            new = line[len("rename to ") :].strip()
        else:
            h = _HUNK.match(line)
            if h is not None:
                remaining_old = int(h.group(1)) if h.group(1) is not None else 1
                remaining_new = int(h.group(2)) if h.group(2) is not None else 1
    flush()


def touches_from_patch(patch: str) -> list[Touch]:
    """Files a patch creates, edits, deletes or moves → ``[(op, path)]`` (module docstring).

    Accepts a Codex apply_patch envelope or a unified diff (git or plain). Returns ``[]`` for
    non-str input; never raises.
    """
    if not isinstance(patch, str):
        return []
    out: list[Touch] = []
    try:
        lines = patch.replace("\r\n", "\n").split("\n")
        if any(_BEGIN.match(line) for line in lines):
            _envelope(lines, out)
        else:
            _unified(lines, out)
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        pass
    return out


def touch_uid(tool_call_uid: str, op: str, path: str) -> str:
    """Merge key of a file touch: ``"{tool_call_uid}:{op}:{path}"``.

    One key per (call, op, path): the same touch seen twice (tool input and result, a replayed
    record) merges into one row. Paths longer than 512 characters are shortened to their first
    256 characters + ``#`` + 16 hex of their SHA-256, to keep the key indexable.
    """
    if len(path) > _MAX_KEY_PATH:
        path = path[:256] + "#" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{tool_call_uid}:{op}:{path}"
