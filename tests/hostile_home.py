"""A Claude Code home whose transcript tries to take over the terminal that shows it (issue 25,
item 2): escape sequences and bidi overrides in a prompt, a reply, a tool's input and output, a
commit subject, a file path, a model name, the cwd, the title and the project directory's name,
plus rich markup — in the real Claude Code JSONL shape (``FORMATS.md``).

`HOSTILE` holds what a real terminal obeys: OSC 0 (window title), OSC 52 (clipboard), OSC 8
(hyperlink), CSI 2J + CSI H (clear the screen), BEL, U+202E (right-to-left override), a C1 CSI
(U+009B) and DEL.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson

OSC_TITLE = "\x1b]0;pwned-title\x07"
OSC_CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"
OSC_LINK = "\x1b]8;;https://evil.example/\x1b\\click-me\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
HOSTILE = f"{OSC_TITLE}{OSC_CLIPBOARD}{OSC_LINK}{CLEAR}bell\x07 \u202eevil\u202c \x9b31m\x7f [bold]markup[/bold]"
"""Every kind of control the terminal must not obey, and rich markup that must not style."""

SESSION = "7e57c0de-0000-4000-8000-00000000e5c0"
SHA = "abc1234"
MODEL = "claude-evil\x1b]0;model\x07"
CWD = "/work/hostile\x1b[2J"
PROJECT_DIR = "-work-hostile\x1b]0;dir\x07"
TOUCHED = "/work/hostile/evil\x1b]0;file\x07.py"


def _iso(second: int) -> str:
    return f"2026-03-01T10:00:{second:02d}.000Z"


def write_hostile_home(root: Path) -> Path:
    """Write the home under `root` (a directory laid out like ``~``); returns the transcript."""
    path = root / ".claude" / "projects" / PROJECT_DIR / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    common = {"sessionId": SESSION, "cwd": CWD, "version": "2.1.17", "gitBranch": "main", "userType": "external",
              "isSidechain": False}  # fmt: skip
    ids = [str(uuid.UUID(int=0xE5C0_0000 + n)) for n in range(8)]
    usage = {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def assistant(n: int, second: int, block: dict, stop: str) -> dict:
        return {**common, "type": "assistant", "uuid": ids[n], "parentUuid": ids[n - 1], "timestamp": _iso(second),
                "requestId": f"req_{n}", "message": {"id": f"msg_{n}", "type": "message", "role": "assistant",
                "model": MODEL, "content": [block], "stop_reason": stop, "usage": usage}}  # fmt: skip

    commit = f'git commit -m "hostile {HOSTILE}"'
    records = [
        {"type": "summary", "summary": f"hostile title {HOSTILE}", "leafUuid": ids[5]},
        {**common, "type": "user", "uuid": ids[0], "parentUuid": None, "timestamp": _iso(1),
         "message": {"role": "user", "content": f"deploy the hostile widget {HOSTILE}"}},
        assistant(1, 2, {"type": "text", "text": f"hostile reply {HOSTILE}"}, "tool_use"),
        assistant(2, 3, {"type": "tool_use", "id": "toolu_commit", "name": "Bash", "input": {"command": commit}},
                  "tool_use"),
        {**common, "type": "user", "uuid": ids[3], "parentUuid": ids[2], "timestamp": _iso(4),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_commit",
                     "content": f"[main {SHA}] hostile {HOSTILE}\n 1 file changed"}]}},
        assistant(4, 5, {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                         "input": {"file_path": TOUCHED, "old_string": "a", "new_string": f"hostile {HOSTILE}"}},
                  "tool_use"),
        {**common, "type": "user", "uuid": ids[5], "parentUuid": ids[4], "timestamp": _iso(6),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_edit",
                     "content": f"edited hostile {HOSTILE}", "is_error": True}]}},
        assistant(6, 7, {"type": "text", "text": f"done hostile {HOSTILE}"}, "end_turn"),
    ]  # fmt: skip
    lines = [orjson.dumps(r) for r in records]
    lines.insert(3, f"{{not json hostile {HOSTILE}".encode())  # an invalid line: a parse issue quoting it
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path
