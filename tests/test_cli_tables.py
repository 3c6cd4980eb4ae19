"""`cli.tables` on a rich console of width 80 (pure: no database): what identifies a row stays
whole, long paths lose their middle, fields that do not fit move to a line of their own."""

from __future__ import annotations

import io

from rich.console import Console

from agent_history.cli.tables import Record, compact_table, fits, print_records, shorten_middle, wrap_headers_to_fit

PATH = "/work/shared/corpus/home/.pi/agent/sessions/--Users-user2-workspaces-pi-mono--/2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl"  # noqa: E501 - a real corpus path


def console80() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, color_system=None, force_terminal=False), out


def test_shorten_middle_keeps_the_root_and_the_whole_file_name():
    short = shorten_middle(PATH, 78)
    assert len(short) == 78
    name = "/2025-12-24T00-32-27-967Z_2638daee-0588-4baa-bd33-68b4c002818e.jsonl"
    assert short == PATH[: 77 - len(name)] + "…" + name


def test_shorten_middle_gives_the_tail_two_thirds_when_the_file_name_is_short_or_too_long():
    assert shorten_middle("/a/very/long/directory/name/that/goes/on/f.py", 20) == "/a/very…goes/on/f.py"
    long_name = "/x/" + "n" * 30  # the name itself is cut: no room for it whole
    assert shorten_middle(long_name, 20) == "/x/nnnn…" + "n" * 12


def test_shorten_middle_leaves_a_fitting_text_alone_and_degrades_to_an_ellipsis():
    assert shorten_middle("/tmp/a.py", 9) == "/tmp/a.py"
    assert shorten_middle("/tmp/a.py", 1) == "…"
    assert shorten_middle("/tmp/a.py", 0) == ""


def test_records_align_fields_and_indent_lines_and_paths():
    console, out = console80()
    records = [
        Record(("fused_line", "1605065", "1013"), lines=("2 JSON values on one line",), paths=(PATH,)),
        Record(("invalid_json", "12", "1"), lines=("-",), paths=("/tmp/x.jsonl",)),
    ]
    print_records(console, ("kind", "byte", "line"), records)
    assert out.getvalue().splitlines() == [
        "kind         byte    line",
        "fused_line   1605065 1013",
        "  2 JSON values on one line",
        "  " + shorten_middle(PATH, 78),
        "invalid_json 12      1",
        "  -",
        "  /tmp/x.jsonl",
    ]


def test_fields_beyond_80_columns_move_to_an_indented_line():
    console, out = console80()
    headers = ("started", "agent", "session", "tokens", "cost", "duration", "subagents", "tools")
    fields = ("2025-12-24 00:32", "pi-local", "2638daee-0588/a1234567", "44.0M", "$29.74", "12h20m", "10", "433")
    print_records(console, headers, [Record(fields, lines=("https://github.com/badlogic/pi-mono/issues/288",))])
    assert out.getvalue().splitlines() == [
        "started          agent    session                tokens cost   duration",
        "2025-12-24 00:32 pi-local 2638daee-0588/a1234567 44.0M  $29.74 12h20m",
        "  subagents 10  tools 433",
        "  https://github.com/badlogic/pi-mono/issues/288",
    ]


def test_a_table_too_wide_wraps_its_headers_not_its_values():
    console, out = console80()
    table = compact_table("namespace", "files", "sessions", "messages", "model calls", "tokens", "issues")
    table.add_row("claude-local", "ok 1,290\nfailed 2", "1,234", "123,456", "98,765", "1,234,567", "invalid_json 12")
    for column in table.columns[:2]:
        column.no_wrap = True
    assert not fits(console, table)
    wrap_headers_to_fit(console, table)
    assert fits(console, table)
    console.print(table)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    text = out.getvalue()
    for whole in ("claude-local", "ok 1,290", "failed 2", "123,456", "1,234,567", "invalid_json"):
        assert whole in text, whole
    assert "…" not in text
