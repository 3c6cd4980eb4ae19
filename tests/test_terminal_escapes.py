"""Transcript text is shown, never obeyed (issue 25, item 2): every human-readable output escapes
control characters visibly and ``--json`` escapes them as JSON does. The end-to-end tests run the
real `agent-history` on a real terminal (a pty, colours on) over a catalogue holding
`tests.hostile_home`, and read the bytes the terminal would have received."""

from __future__ import annotations

import io
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text

from agent_history.cli.output import json_text
from agent_history.cli.terminal import TerminalConsole, escape_controls, escape_json, escape_text
from tests.hostile_home import HOSTILE, MODEL, SESSION, SHA, TOUCHED, write_hostile_home

pty = pytest.importorskip("pty")  # POSIX only
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

PY = sys.executable


# -- the rule, pure -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;title\x07", "^[]0;title^G"),
        ("\x1b[2J\x1b[H", "^[[2J^[[H"),
        ("a\x00b\x7fc", "a^@b^?c"),
        ("\x9b31m", "<U+009B>31m"),
        ("\u202eevil\u202c", "<U+202E>evil<U+202C>"),
        ("\u2066iso\u2069", "<U+2066>iso<U+2069>"),
        ("line\r\nnext\rover", "line\nnext^Mover"),
        ("tab\tand\nnewline stay, as do é, 构建 and 🚀", "tab\tand\nnewline stay, as do é, 构建 and 🚀"),
    ],
)
def test_controls_are_shown_as_cat_v_and_less_show_them(raw, shown):
    assert escape_controls(raw) == shown


def test_json_escapes_what_json_may_leave_raw_and_still_round_trips():
    data = {"text": HOSTILE, "ok": "café"}
    text = json_text(data)
    assert json.loads(text) == data
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
    assert "\\u009b" in text and "\\u202e" in text and "\\u007f" in text and "café" in text
    assert escape_json('{"a": 1}') == '{"a": 1}'


def test_a_styled_text_keeps_its_styles_on_the_escaped_characters():
    text = Text("a\x1bb") + Text("\u202ec", style="bold")
    out = escape_text(text)
    assert out.plain == "a^[b<U+202E>c"
    assert [(s.start, s.end, str(s.style)) for s in out.spans] == [(4, 13, "bold")]  # <U+202E>c


def test_the_console_escapes_strings_texts_and_table_cells_and_reads_no_markup():
    out = io.StringIO()
    console = TerminalConsole(file=out, width=80, force_terminal=True, color_system="truecolor")
    table = Table("cell")
    table.add_row(f"x{HOSTILE}")
    console.print(f"str {HOSTILE}")
    console.print(Text(f"text {HOSTILE}", style="bold"))
    console.print(table)
    written = out.getvalue()
    assert "[bold]markup[/bold]" in written  # markup is text
    assert "^[]0;pwned-title" in written and "<U+202E>evil" in written
    assert not re.search("\x1b[^\\[]|\x1b\\[[0-9;]*[^0-9;m]|[\x07\x80-\x9f\u202a-\u202e\u2066-\u2069]", written)
    # the table was laid out on the escaped text: no line is wider than the console
    assert max(len(line) for line in re.sub("\x1b\\[[0-9;]*m", "", written).splitlines()) <= 80


# -- the real command on a real terminal --------------------------------------------------------

SGR = re.compile(rb"\x1b\[[0-9;]*m|\x1b\[\?25[hl]|\x1b\[[0-9]*[AK]")
"""What the CLI itself writes on a terminal: Select Graphic Rendition (colours, bold) and, for a
progress bar, cursor hide/show, cursor up and erase line."""

FROM_TRANSCRIPT = re.compile(rb"\x1b|\x07|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\x7f")
"""After the CLI's own SGR sequences are removed, any ESC, BEL, C1 (UTF-8), bidi override or
isolate, or DEL in the output came from the transcript."""


def run_in_pty(
    args: list[str], env: dict[str, str], *, columns: int = 100, timeout: float = 120, answer: bytes = b""
) -> bytes:
    """Run ``agent-history ARGS`` with stdin, stdout and stderr on a new pty of `columns`
    columns (no COLUMNS variable: the size comes from the terminal, as for a person), typing
    `answer` on its keyboard; return every byte the terminal received."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    run_env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    run_env.update(TERM="xterm-256color")
    proc = subprocess.Popen(
        [PY, "-m", "agent_history", *args], stdin=slave, stdout=slave, stderr=slave, env=run_env, close_fds=True
    )
    os.close(slave)
    if answer:
        os.write(master, answer)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
        proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def hostile_env(pg_server, tmp_path_factory):
    """A catalogue holding the hostile home (indexed by the real `index` command) and the
    environment to run the CLI on it."""
    from tests.conftest import clone_database, drop_database

    base = Path(tmp_path_factory.mktemp("hostile"))
    write_hostile_home(base / "home")
    (base / "config.toml").touch()
    database = clone_database(pg_server, prefix="hostile")
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if (not k.startswith("AGENT_HISTORY_") or k == "AGENT_HISTORY_QUERY_IDLE_S")
        },
        "AGENT_HISTORY_DSN": database.dsn,
        "AGENT_HISTORY_READER_DSN": database.reader_dsn,
        "AGENT_HISTORY_CONFIG": str(base / "config.toml"),
        "AGENT_HISTORY_DATA_DIR": str(base / "data"),
        "HOME": str(base / "home"),
    }
    done = subprocess.run([PY, "-m", "agent_history", "index", "--home", str(base / "home")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    yield env, base
    drop_database(database)
    shutil.rmtree(base, ignore_errors=True)


COMMANDS = [
    ("search", "hostile"),
    ("search", "hostile", "--in", "tools"),
    ("session", SESSION, "--full"),
    ("sessions",),
    ("recall", "hostile widget"),
    ("sql", "SELECT message_class, text, model FROM ah.message ORDER BY id"),
    ("sql", "SELECT text FROM ah.message", "--csv"),
    ("why", SHA),
    ("touched", "**/*.py"),
    ("issues",),
    ("status",),
    ("usage",),
    ("usage", "session"),
    ("efficiency",),
    ("search", "hostile", "--namespace", f"nosuch{HOSTILE}"),  # an error quoting what was typed
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:40].encode("unicode_escape").decode())
def test_transcript_text_never_reaches_a_terminal_as_a_control(hostile_env, args):
    env, _ = hostile_env
    out = run_in_pty(list(args), env)
    assert b"Traceback" not in out, out.decode(errors="replace")
    assert out.strip(), args
    mine = SGR.sub(b"", out)
    found = FROM_TRANSCRIPT.search(mine)
    assert found is None, (args, mine[max(found.start() - 60, 0) : found.end() + 60])
    shown = (b"^[]0;", b"<U+202E>", b"\\x1b]0;")  # as cat -v shows them, or as Python's repr quotes them
    assert any(s in mine for s in shown) or args[0] in ("sessions", "efficiency", "status"), mine[:600]


def test_parse_of_the_hostile_file_is_shown_escaped(hostile_env):
    env, base = hostile_env
    out = SGR.sub(b"", run_in_pty(["parse", str(base / "home" / ".claude")], env, columns=250))
    assert b"Traceback" not in out
    assert FROM_TRANSCRIPT.search(out) is None, out[:800]
    assert b"-work-hostile^[]0;dir^G/" in out  # the directory's name, escaped


def test_names_from_the_transcript_appear_escaped_where_they_are_shown(hostile_env):
    env, _ = hostile_env
    usage = SGR.sub(b"", run_in_pty(["usage"], env, columns=200)).decode()
    assert escape_controls(MODEL) in usage  # the unpriced model is named, escaped
    touched = SGR.sub(b"", run_in_pty(["touched", "**/*.py"], env, columns=200)).decode()
    assert escape_controls(TOUCHED) in touched
    session = SGR.sub(b"", run_in_pty(["session", SESSION], env, columns=200)).decode()
    assert "[bold]markup[/bold]" in session  # rich markup in a prompt is text, not style


@pytest.mark.parametrize(
    "args",
    [
        ("search", "hostile", "--json"),
        ("session", SESSION, "--json"),
        ("sql", "SELECT text FROM ah.message", "--json"),
        ("recall", "hostile widget", "--json"),
        ("touched", "**/*.py", "--json"),
        ("issues", "--json"),
    ],
    ids=lambda a: a[0],
)
def test_json_on_a_terminal_is_valid_and_holds_no_raw_control(hostile_env, args):
    env, _ = hostile_env
    out = run_in_pty(list(args), env)
    assert FROM_TRANSCRIPT.search(SGR.sub(b"", out)) is None, out[:600]
    data = json.loads(out.decode().replace("\r\n", "\n"))  # the pty turns \n into \r\n
    assert "pwned-title" in json.dumps(data) or "evil" in json.dumps(data)


def test_sql_csv_to_a_file_keeps_the_data_byte_for_byte(hostile_env):
    env, _ = hostile_env
    r = subprocess.run([PY, "-m", "agent_history", "sql", "SELECT text FROM ah.message ORDER BY id", "--csv"],
                       env=env, capture_output=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"deploy the hostile widget {HOSTILE}".encode() in r.stdout


@pytest.mark.parametrize("args", [("search", "hostile"), ("session", SESSION), ("why", SHA), ("recall", "hostile")])
def test_escaped_text_is_laid_out_at_its_shown_width(hostile_env, args):
    """Escaping happens before layout: `^[]0;…` is wider than the ESC it shows, and still no line
    is wider than the terminal."""
    env, _ = hostile_env
    out = SGR.sub(b"", run_in_pty(list(args), env, columns=80)).decode()
    lines = out.replace("\r\n", "\n").splitlines()
    assert "^[" in out and max(len(line) for line in lines) <= 80, "\n".join(x for x in lines if len(x) > 80)
