"""Pure parts of the web UI: bind rules, escaping and highlighting, usage aggregation, nesting."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from agent_history.read.threads import SessionRow, nest
from agent_history.read.usage_cells import UsageCell
from agent_history.search.request import HL_END, HL_START
from agent_history.web.bind import BindRefused, check_bind, is_loopback
from agent_history.web.render import environment, highlight, visible
from agent_history.web.usage import chart_payload, rollup


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_hosts_are_recognised(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", "localhost.example.org", ""])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


def test_a_non_loopback_host_is_refused_without_allow_remote_even_with_a_token():
    with pytest.raises(BindRefused, match="refusing to serve on non-loopback host '0.0.0.0'"):
        check_bind("0.0.0.0", 8765, allow_remote=False, token="x" * 32)


def test_allow_remote_needs_a_token_of_sixteen_characters():
    with pytest.raises(BindRefused, match="needs a token"):
        check_bind("0.0.0.0", 8765, allow_remote=True, token=None)
    with pytest.raises(BindRefused, match=r"too short \(15 characters; at least 16\)"):
        check_bind("0.0.0.0", 8765, allow_remote=True, token="x" * 15)
    check_bind("0.0.0.0", 8765, allow_remote=True, token="x" * 16)


def test_loopback_binds_and_port_range():
    check_bind("127.0.0.1", 0, allow_remote=False, token=None)
    with pytest.raises(BindRefused, match="out of range"):
        check_bind("127.0.0.1", 70000, allow_remote=False, token=None)


def test_highlight_escapes_first_then_marks():
    snippet = f"<script>alert(1)</script> {HL_START}<img src=x onerror=alert(2)>{HL_END} tail"
    assert str(highlight(snippet)) == (
        "&lt;script&gt;alert(1)&lt;/script&gt; <mark>&lt;img src=x onerror=alert(2)&gt;</mark> tail"
    )


def test_highlight_closes_an_unbalanced_marker_and_ignores_a_stray_end():
    assert str(highlight(f"a{HL_END}b{HL_START}c")) == "ab<mark>c</mark>"


def test_terminal_escapes_are_shown_as_control_pictures():
    assert visible("\x1b[31mred\x1b[0m\tok\n\x00\x7f") == "\u241b[31mred\u241b[0m\tok\n\u2400\u2421"


def _cell(day, agent, model, calls, tokens, cost, unpriced=0):
    return UsageCell(day, agent, model, calls, tokens, None, cost, unpriced, None)


CELLS = [
    _cell(date(2025, 11, 20), "claude", "claude-sonnet-4-5", 3, 300, Decimal("0.5")),
    _cell(date(2025, 11, 22), "claude", "claude-sonnet-4-5", 1, 100, Decimal("0.25")),
    _cell(date(2025, 11, 22), "codex", "gpt-5.1-codex", 2, None, None, unpriced=2),
    _cell(None, "pi", None, 1, 50, None, unpriced=1),
]


def test_rollup_keeps_unknown_as_none_and_counts_unpriced_calls():
    by_agent = {t.key: t for t in rollup(CELLS, "agent")}
    assert by_agent["codex"].tokens is None and by_agent["codex"].cost_usd is None
    assert by_agent["codex"].unpriced_calls == 2
    assert by_agent["claude"].tokens == 400 and by_agent["claude"].cost_usd == Decimal("0.75")
    assert [t.key for t in rollup(CELLS, "day")] == ["2025-11-20", "2025-11-22", "unknown"]
    assert [t.key for t in rollup(CELLS, "model")][-1] == "gpt-5.1-codex"  # unknown tokens sort last


def test_chart_payload_fills_missing_days_with_null_not_zero():
    p = chart_payload(CELLS)
    assert p["days"] == ["2025-11-20", "2025-11-21", "2025-11-22"]
    assert p["tokens_by_agent"] == {"claude": [300, None, 100], "codex": [None, None, None]}
    assert p["cost_by_model"] == {"claude-sonnet-4-5": [0.5, None, 0.25]}


def _row(id_, parent=None, root=None):
    return SessionRow(
        id_,
        f"u{id_}",
        "",
        "claude",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        parent,
        root,
        None,
    )


def test_sub_agents_nest_under_their_parent_at_any_depth():
    mains = [_row(1), _row(2)]
    kids = [_row(11, parent=1, root=1), _row(12, parent=11, root=1), _row(21, parent=99, root=2)]
    out = nest(mains, kids)
    assert [(r.id, r.depth) for r in out] == [(1, 0), (11, 1), (12, 2), (2, 0), (21, 1)]


def test_the_web_token_comes_from_the_config_and_a_misspelt_key_is_an_error(tmp_path, monkeypatch):
    from agent_history.config import ConfigError, load_settings

    cfg = tmp_path / "config.toml"
    monkeypatch.setenv("AGENT_HISTORY_CONFIG", str(cfg))
    monkeypatch.delenv("AGENT_HISTORY_WEB_TOKEN", raising=False)
    cfg.write_text('[web]\ntoken = "0123456789abcdef"\n')
    assert load_settings().web_token == "0123456789abcdef"
    monkeypatch.setenv("AGENT_HISTORY_WEB_TOKEN", "from-the-environment")
    assert load_settings().web_token == "from-the-environment"
    cfg.write_text('[web]\ntokn = "x"\n')
    with pytest.raises(ConfigError, match=r"unknown key web.tokn \(known: token\)"):
        load_settings()


def test_rollup_by_project_branch_and_host_keeps_unknown_as_its_own_row():
    cells = [
        UsageCell(date(2025, 11, 20), "claude", "m", 2, 100, 10, Decimal("1"), 0, None, "/p/a", "main", "laptop"),
        UsageCell(date(2025, 11, 21), "claude", "m", 1, 50, 5, None, 1, None, "/p/a", None, None),
        UsageCell(date(2025, 11, 21), "pi", "m", 3, 300, 30, Decimal("2"), 0, None, "/p/b", "main", "desk"),
    ]
    assert [(t.key, t.calls, t.tokens, t.cost_usd, t.unpriced_calls) for t in rollup(cells, "project")] == [
        ("/p/b", 3, 300, Decimal("2"), 0),
        ("/p/a", 3, 150, Decimal("1"), 1),
    ]
    assert [(t.key, t.calls) for t in rollup(cells, "branch")] == [("main", 5), ("unknown", 1)]
    assert [(t.key, t.calls, t.tokens) for t in rollup(cells, "host")] == [
        ("desk", 3, 300),
        ("laptop", 2, 100),
        ("unknown", 1, 50),
    ]
    with pytest.raises(ValueError, match="unknown breakdown 'hostname'"):
        rollup(cells, "hostname")


def test_bidi_overrides_in_titles_links_and_snippets_are_shown_not_obeyed():
    page = environment().from_string('<title>{{ t }}</title><a href="/x">{{ t|truncate(100) }}</a><p>{{ s }}</p>')
    got = page.render(t="rename invoice\u202egpj.exe", s=highlight(f"a {HL_START}inv\u2067oice{HL_END} b"))
    assert "\u202e" not in got and "\u2067" not in got
    assert got.count("invoice&lt;U+202E&gt;gpj.exe") == 2
    assert "<mark>inv&lt;U+2067&gt;oice</mark>" in got


def test_a_title_with_terminal_controls_shows_them_as_the_snippets_do():
    """A title (any ``{{ … }}`` value) shows ESC and BEL as control pictures, as `visible` does in
    snippets and the CLI does with ``^[`` — never dropped by the browser; layout controls stay."""

    title = "\x1b]0;pwned\x07 a\tb\r\nc \u202e"
    html = environment().from_string("<h1>{{ t }}</h1>").render(t=title)
    assert html == "<h1>\u241b]0;pwned\u2407 a\tb\r\nc &lt;U+202E&gt;</h1>"
