"""Tool-call error classification: (error_class, error_excerpt) from a tool result. Pure.

Rules come from docs/design.md §6 ("Tool-call error classes, first match wins") and were tuned on the
tool results in ``corpus/home`` (Claude ``is_error`` blocks, Codex ``exit_code``, pi ``isError``)
and field cases E06, E18, E26.

When is a call an error? Only when the harness says so: ``is_error`` truthy, an ``exit_code``
other than 0, or one of the ``rejected`` / ``interrupted`` / ``timed_out`` flags the parser
derived from structured fields. The output text alone never makes a call an error (E26: a
successful run whose output says "Process exited with code 1" stays a success).

Classes, first match wins (`ERROR_RULES`, declared as data):

===================  ==========================================================================
denied               ``rejected`` flag; "The user doesn't want to proceed/take this action",
                     "tool use was rejected", "rejected by user" (Codex), "denied by user",
                     "Permission to use X has been denied" (a harness permission prompt, not
                     an OS error). A bare "rejected" is NOT enough: ``git push`` prints
                     ``! [rejected] main -> main`` on an ordinary failure.
timeout              ``timed_out`` flag; exit code 124 (coreutils ``timeout``); "timed out",
                     "TimeoutError", "TimeoutExpired", "ETIMEDOUT", "deadline exceeded".
interrupted          ``interrupted`` flag; exit code 130 (SIGINT); "[Request interrupted by
                     user" (Claude), "Command aborted" / "Request was aborted" (pi),
                     "KeyboardInterrupt" at a line start, pi's trailing "Command aborted"; a
                     bare "interrupted" only near the start.
validation_error     The harness refused the call's input before running it: Claude
                     "InputValidationError", "String to replace not found", "File has not been
                     read yet", "Found N matches of the string to replace", "No changes to
                     make"; pi "Validation failed for tool"; Codex "failed to parse function
                     arguments"; "invalid input/parameters/arguments", missing required params.
not_found            "No such file or directory", "ENOENT", "command not found",
                     "FileNotFoundError", "ModuleNotFoundError", "Cannot find module",
                     "pathspec … did not match"; a bare "not found" only on the first line,
                     "does not exist" only after file/path/directory (TypeScript's "Property
                     'x' does not exist on type" is not a missing file).
permission           "Permission denied", "EACCES", "EPERM", "Operation not permitted",
                     "PermissionError", "Read-only file system".
network              "ECONNRESET", "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "getaddrinfo",
                     "Could not resolve host", "Connection refused/reset", "Network is
                     unreachable", "Temporary failure in name resolution".
nonzero_exit         exit code other than 0 and nothing above matched.
tool_error           ``is_error`` truthy, no exit code, nothing above matched.
other                anything else that is still an error (e.g. ``is_error`` with exit code 0).
===================  ==========================================================================

Exception names count only as raised, at a line start (``PermissionError: [Errno 13] …``), not
when a compiler or linter quotes source code (``427 |  except PermissionError:``).

Where text patterns look (after ANSI escapes are stripped): "head" rules search the first
`HEAD_CHARS` characters, where a harness writes its own message; "edges" rules search the first
and the last `EDGE_CHARS` characters, where a failing program prints its error (start) or its
traceback/summary (end). The middle of a huge log is never searched. Each alternative of a
rule's regex is searched alone and only where its `needles` occur (its longest literal, derived
from the pattern itself): the same classes, without a case-blind alternation over 8,000
characters per rule.

Exit code from text: when ``exit_code`` is None and ``is_error`` is truthy, a harness footer
"Command exited with code N" (pi, at the very end) or a header "Exit code N" / "Process exited
with code N" (Claude, Codex unified exec; first line) supplies it.

Excerpt (at most `EXCERPT_CHARS` = 500 characters, None when the output is empty):
1. ANSI/OSC escapes are removed, ``\\r``-overwritten progress lines keep their last state,
   ``<tool_use_error>`` wrappers are dropped, blank lines are collapsed.
2. Text that fits is returned whole.
3. A Python traceback → the tail of the last traceback through its exception line
   (``ValueError: …``), the most specific part.
4. Otherwise the lines that mention error/exception/failed/fatal/denied/not found/no such/
   refused/timed out/panic, in order, de-duplicated, until the budget is used.
5. Otherwise the last 500 characters (a log's end says how it ended), cut at a line start.
Lines longer than 300 characters are shortened with "…".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _parser as _re_parser  # the stdlib's own pattern parser (Python ≥ 3.11)

__all__ = ["ERROR_CLASSES", "ERROR_RULES", "classify_error", "error_excerpt", "strip_ansi"]

EXCERPT_CHARS = 500
"""Maximum length of an error excerpt (characters)."""
HEAD_CHARS = 600
""""head" rules look at this many leading characters of the cleaned output."""
EDGE_CHARS = 4000
""""edges" rules look at this many leading and this many trailing characters."""
_LINE_CHARS = 300

ERROR_CLASSES = (
    "denied",
    "timeout",
    "interrupted",
    "validation_error",
    "not_found",
    "permission",
    "network",
    "nonzero_exit",
    "tool_error",
    "other",
)
"""Every error class, in precedence order (docs/design.md §6)."""


@dataclass(frozen=True, slots=True)
class ErrorRule:
    """One row of the classification table: a class and what makes it match (any of the fields).

    ``flag``: name of a boolean keyword of `classify_error` that selects the class.
    ``exit_codes``: exit codes that select it. ``head`` / ``edges``: regexes searched in the
    leading characters / in both ends of the cleaned output (see the module docstring).
    ``nonzero_exit`` / ``is_error`` / ``always``: structural catch-alls for the last classes.
    """

    error_class: str
    flag: str | None = None
    exit_codes: frozenset[int] = frozenset()
    head: re.Pattern[str] | None = None
    edges: re.Pattern[str] | None = None
    nonzero_exit: bool = False
    is_error_without_exit: bool = False
    always: bool = False


def _rx(*alternatives: str, flags: int = 0) -> re.Pattern[str]:
    pattern = re.compile("|".join(f"(?:{a})" for a in alternatives), flags)
    _ALTERNATIVES[pattern] = tuple(re.compile(a, flags) for a in alternatives)
    return pattern


_ALTERNATIVES: dict[re.Pattern[str], tuple[re.Pattern[str], ...]] = {}
"""A rule's pattern → its alternatives, each compiled alone (`_search` tries those whose
`needles` occur: the pattern matches somewhere exactly when one of them does)."""


ERROR_RULES: tuple[ErrorRule, ...] = (
    ErrorRule(
        "denied",
        flag="rejected",
        head=_rx(
            r"The user doesn't want to (?:proceed|take this action)",
            r"tool use was rejected",
            r"\brejected by (?:the )?user\b",
            r"\bdenied by (?:the )?user\b",
            r"\buser (?:denied|declined|rejected)\b",
            r"Permission to use \S+.{0,200}?(?:has been|was) denied",
            flags=re.IGNORECASE,
        ),
    ),
    ErrorRule(
        "timeout",
        flag="timed_out",
        exit_codes=frozenset({124}),
        edges=_rx(
            r"\btimed out\b",
            r"^(?:[\w.]+\.)?Timeout(?:Error|Expired):",
            r"\bETIMEDOUT\b",
            r"\bdeadline exceeded\b",
            r"\btimeout exceeded\b",
            flags=re.IGNORECASE | re.MULTILINE,
        ),
    ),
    ErrorRule(
        "interrupted",
        flag="interrupted",
        exit_codes=frozenset({130}),
        head=_rx(r"\binterrupted\b", r"\bRequest was aborted\b", flags=re.IGNORECASE),
        edges=_rx(
            r"\[Request interrupted by user",
            r"^KeyboardInterrupt\b",
            r"\baborted by (?:the )?user\b",
            r"^Command aborted\s*\Z",
            flags=re.MULTILINE,
        ),
    ),
    ErrorRule(
        "validation_error",
        head=_rx(
            r"InputValidationError",
            r"String to replace not found",
            r"File has not been read yet",
            r"Found \d+ matches of the string to replace",
            r"No changes to make: old_string and new_string",
            r"Validation failed for tool",
            r"failed to parse (?:function )?arguments",
            r"\binvalid (?:tool )?(?:input|parameters?|arguments?)\b",
            r"\b(?:missing )?required (?:parameter|property|argument)\b.{0,80}\bmissing\b",
            r"\bmissing (?:the )?required (?:parameter|property|argument|field)",
            r"\bunexpected (?:keyword )?(?:parameter|argument|property)\b",
            flags=re.IGNORECASE,
        ),
    ),
    ErrorRule(
        "not_found",
        head=_rx(
            r"^[^\n]{0,120}\bnot found\b",
            r"\b(?:file|path|directory|folder)\b[^\n]{0,160}?\bdoes not exist\b",
            r"\bno such (?:file|directory|path)\b",
            flags=re.IGNORECASE,
        ),
        edges=_rx(
            r"No such file or directory",
            r"\bENOENT\b",
            r"\bcommand not found\b",
            r"^(?:[\w.]+\.)?(?:FileNotFound|ModuleNotFound)Error:",
            r"\bCannot find module\b",
            r"\bpathspec .{1,200}? did not match",
            flags=re.MULTILINE,
        ),
    ),
    ErrorRule(
        "permission",
        edges=_rx(
            r"Permission denied",
            r"\bEACCES\b",
            r"\bEPERM\b",
            r"Operation not permitted",
            r"^(?:[\w.]+\.)?PermissionError:",
            r"Read-only file system",
            flags=re.MULTILINE,
        ),
    ),
    ErrorRule(
        "network",
        edges=_rx(
            r"\bECONNRESET\b",
            r"\bECONNREFUSED\b",
            r"\bENOTFOUND\b",
            r"\bEAI_AGAIN\b",
            r"\bgetaddrinfo\b",
            r"Could not resolve host",
            r"Connection (?:refused|reset by peer)",
            r"Network is unreachable",
            r"Temporary failure in name resolution",
            flags=re.IGNORECASE,
        ),
    ),
    ErrorRule("nonzero_exit", nonzero_exit=True),
    ErrorRule("tool_error", is_error_without_exit=True),
    ErrorRule("other", always=True),
)
"""The classification table; `classify_error` returns the first rule that matches."""

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"  # remaining control characters except \t \n \r
)
_TOOL_USE_ERROR = re.compile(r"</?tool_use_error>")
_EXIT_FOOTER = re.compile(r"(?:Command|Process) exited with code (-?\d+)\s*\Z")
_EXIT_HEADER = re.compile(r"\A\s*(?:Exit code:?|Process exited with code) (-?\d+)\b")
_TRACEBACK = "Traceback (most recent call last):"
_INFORMATIVE = re.compile(
    r"error|exception|failed|failure|fatal|denied|not found|no such|refused|timed out|panic"
    r"|\binterrupted\b|\baborted\b|doesn't want to|rejected",
    re.IGNORECASE,
)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""The characters every `_ANSI` match starts with (ESC is one): a text without any has nothing to
strip, and a one-class scan costs a seventh of the alternation's."""


def strip_ansi(text: str) -> str:
    """Remove ANSI/OSC escape sequences and stray control characters (keeps ``\\t\\n\\r``)."""
    if _CONTROL.search(text) is None:
        return text
    return _ANSI.sub("", text)


def _clean(output: str) -> str:
    text = _TOOL_USE_ERROR.sub("", strip_ansi(output))
    lines = []
    for line in text.split("\n"):
        if "\r" in line:  # progress bars: what the terminal finally showed
            parts = [p for p in line.split("\r") if p.strip()]
            line = parts[-1] if parts else ""
        lines.append(line.rstrip())
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def _cap_line(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"


def _take_tail(lines: list[str], budget: int) -> str:
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        line = _cap_line(line)
        if kept and size + len(line) + 1 > budget:
            break
        kept.append(line)
        size += len(line) + 1
    text = "\n".join(reversed(kept))
    return text[-budget:]


def _traceback_excerpt(lines: list[str]) -> str | None:
    start = max((i for i, line in enumerate(lines) if line.strip() == _TRACEBACK), default=None)
    if start is None:
        return None
    end = len(lines) - 1
    for i in range(start + 1, len(lines)):
        if lines[i] and not lines[i][0].isspace():
            end = i
            break
    # The exception message may continue on indented lines; keep a couple of them.
    stop = end + 1
    while stop < len(lines) and stop <= end + 2 and lines[stop][:1].isspace():
        stop += 1
    tail = _take_tail(lines[start:stop], EXCERPT_CHARS).split("\n")
    while len(tail) > 2 and tail[0].strip() != _TRACEBACK and not tail[0].lstrip().startswith("File "):
        tail.pop(0)  # start at a frame header, not in the middle of a frame
    return "\n".join(tail)


def _informative_excerpt(text: str) -> str | None:
    """The distinct lines of `text` that `_INFORMATIVE` finds, stripped, in order, within the
    budget. One scan of the whole text finds them: no alternative holds a line break or starts
    or ends with a space, so a line holds a match exactly when its stripped form does."""
    picked: list[str] = []
    seen: set[str] = set()
    size = 0
    pos = 0
    while (m := _INFORMATIVE.search(text, pos)) is not None:
        end = text.find("\n", m.end())
        if end < 0:
            end = len(text)
        stripped = text[text.rfind("\n", 0, m.start()) + 1 : end].strip()
        pos = end + 1
        if stripped in seen:
            continue
        seen.add(stripped)
        line = _cap_line(stripped)
        if picked and size + len(line) + 1 > EXCERPT_CHARS:
            break
        picked.append(line)
        size += len(line) + 1
    return "\n".join(picked)[:EXCERPT_CHARS] if picked else None


def error_excerpt(output: str | None) -> str | None:
    """The most informative ≤ 500 characters of a tool's output (rules in the module docstring).

    Returns None for None or whitespace-only output. Never raises.
    """
    if not isinstance(output, str):
        return None
    return _excerpt_of_clean(_clean(output))


def _excerpt_of_clean(text: str) -> str | None:
    """`error_excerpt` of an output already through `_clean`."""
    if not text.strip():
        return None
    if len(text) <= EXCERPT_CHARS:
        return text
    lines = text.split("\n")
    return _traceback_excerpt(lines) or _informative_excerpt(text) or _take_tail(lines, EXCERPT_CHARS)


def _exit_code_from_text(text: str) -> int | None:
    m = _EXIT_FOOTER.search(text[-200:]) or _EXIT_HEADER.match(text[:200])
    if m is None:
        return None
    try:
        return int(m.group(1))
    except ValueError:  # pragma: no cover - the regex only admits digits
        return None


def needles(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Substrings of which every match of `pattern` holds at least one — each top-level
    alternative's longest run of literal characters outside optional parts, lowercased when the
    pattern ignores case — or None when an alternative has no run of 3 or more (then the
    pattern is always searched). Derived from the stdlib's parse of the pattern, so it cannot
    drift from the regex; a pattern the parser reads otherwise than expected gives None."""
    try:
        tree = list(_re_parser.parse(pattern.pattern, pattern.flags))
    except Exception:  # noqa: BLE001 - a prefilter is an optimisation: without it, search
        return None
    branches = tree[0][1][1] if len(tree) == 1 and tree[0][0] is _re_parser.BRANCH else [tree]
    out = []
    for seq in branches:
        best, run = "", []
        for op, arg in [*seq, (None, None)]:
            if op is _re_parser.LITERAL:
                run.append(chr(arg))
                continue
            if len(run) > len(best):
                best = "".join(run)
            run = []
        if len(best) < 3:
            return None
        if pattern.flags & re.IGNORECASE:
            if not best.isascii():  # "ſ" matches "s" when case is ignored; "ſ".lower() does not
                return None
            best = best.lower()
        out.append(best)
    return tuple(out)


def _plan(pattern: re.Pattern[str]) -> tuple[tuple[re.Pattern[str], tuple[str, ...] | None], ...]:
    """(alternative, its `needles` or None) for each alternative of a rule's pattern (the
    pattern itself when it was not built by `_rx`)."""
    return tuple((alt, needles(alt)) for alt in _ALTERNATIVES.get(pattern, (pattern,)))


_PLANS: dict[re.Pattern[str], tuple[tuple[re.Pattern[str], tuple[str, ...] | None], ...]] = {
    rx: _plan(rx) for rule in ERROR_RULES for rx in (rule.head, rule.edges) if rx is not None
}
"""A rule's pattern → what `_search` runs: each alternative, searched only where one of its
needles occurs. Most failed calls' outputs hold none, and a case-blind alternation of ten
branches over 8,000 characters costs up to milliseconds where a substring test costs one."""


def _search(pattern: re.Pattern[str] | None, text: str, lowered: str | None) -> bool:
    """True when `pattern` (a rule's) matches somewhere in `text` — ``pattern.search(text)``,
    found as: one of its alternatives does. An alternative is searched only when one of its
    needles is in `text` (a case-blind one's in `lowered` = ``text.lower()`` when `text` is
    ASCII; for other text (None) it is searched: Unicode case folding matches more than
    ``lower``)."""
    if pattern is None:
        return False
    for alt, found in _PLANS.get(pattern) or _plan(pattern):
        if found is not None:
            hay = lowered if alt.flags & _IGNORECASE else text
            if hay is not None and not any(n in hay for n in found):
                continue
        if alt.search(text) is not None:
            return True
    return False


_IGNORECASE = int(re.IGNORECASE)
"""As a plain int: ``Pattern.flags & re.IGNORECASE`` goes through the enum's Python ``__and__``."""


def _matches(
    rule: ErrorRule,
    flags: dict[str, bool],
    exit_code: int | None,
    is_error: bool,
    head: tuple[str, str | None],
    edges: tuple[str, str | None],
) -> bool:
    if rule.always:
        return True
    if rule.flag is not None and flags.get(rule.flag):
        return True
    if exit_code is not None and exit_code in rule.exit_codes:
        return True
    if _search(rule.head, *head):
        return True
    if _search(rule.edges, *edges):
        return True
    if rule.nonzero_exit and exit_code not in (None, 0):
        return True
    return rule.is_error_without_exit and is_error and exit_code is None


def classify_error(
    output: str | None,
    *,
    is_error: bool | None,
    exit_code: int | None = None,
    rejected: bool = False,
    interrupted: bool = False,
    timed_out: bool = False,
) -> tuple[str | None, str | None]:
    """Classify a finished tool call → ``(error_class, error_excerpt)``.

    `output` is the tool's text output (stdout+stderr or the harness's result text); `is_error`
    the harness's error flag; `exit_code` the process exit code when the harness records one;
    `rejected` / `interrupted` / `timed_out` flags the parser derived from structured fields
    (e.g. Claude ``toolUseResult`` says the user rejected, Codex ``exec_command_end`` timed out).

    Returns ``(None, None)`` when the call is not an error: `is_error` falsy, `exit_code` None
    or 0 and no flag set. Otherwise the first matching class of `ERROR_RULES` and
    `error_excerpt(output)`. Never raises: odd types are treated as absent.
    """
    try:
        is_err = bool(is_error) if isinstance(is_error, bool | int) else False
        code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
        flags = {"rejected": rejected is True, "interrupted": interrupted is True, "timed_out": timed_out is True}
        if not is_err and code in (None, 0) and not any(flags.values()):
            return None, None
        text = _clean(output) if isinstance(output, str) else ""
        if code is None and is_err:
            code = _exit_code_from_text(text)
        head = text[:HEAD_CHARS]
        edges = text if len(text) <= 2 * EDGE_CHARS else text[:EDGE_CHARS] + "\n" + text[-EDGE_CHARS:]
        lowered = edges.lower() if edges.isascii() else None  # for the case-blind needles
        head_of = (head, lowered[:HEAD_CHARS] if lowered is not None else None)
        edges_of = (edges, lowered)
        excerpt = _excerpt_of_clean(text) if isinstance(output, str) else None  # = error_excerpt(output)
        for rule in ERROR_RULES:
            if _matches(rule, flags, code, is_err, head_of, edges_of):
                return rule.error_class, excerpt
        return "other", excerpt  # pragma: no cover - the table ends with `always`
    except Exception:  # noqa: BLE001 — contract: never raise on odd input
        return "other", None
