"""The Markdown export's pure parts (`read.export_render`): the title as plain text, code left
as written (fenced, indented, inline), every ``<`` elsewhere shown, never obeyed."""

from __future__ import annotations

import pytest

from agent_history.read.export_render import md_text, plain_title, render_html, render_markdown


def _doc(title: str, events: list[dict]) -> dict:
    session = {"agent": "claude", "session_uid": "s-1", "agent_id": "", "cwd": None, "title": title}
    return {"product": "Claude Code", "thread": {"session": session, "summary": {}, "events": events}}


@pytest.mark.parametrize(
    ("line", "plain"),
    [
        ("# Fix **the** `parser` now", "Fix the parser now"),
        ("## Release notes ##", "Release notes"),
        ("> **Bold** _quoted_ and snake_case_name", "Bold quoted and snake_case_name"),
        ("see [the docs](https://example.org) and ![a chart](c.png)", "see the docs and a chart"),
        ("`**literal**` in a code span", "**literal** in a code span"),
        ("- a bullet ~~gone~~", "a bullet gone"),
        ("1. first step", "first step"),
        ("2 * 3 * 4 and a_b_c", "2 * 3 * 4 and a_b_c"),
        ("#hashtag is no heading", "#hashtag is no heading"),
        ("###", "###"),
        ("api_key=[REDACTED] rotated", "api_key=[REDACTED] rotated"),
    ],
)
def test_plain_title_keeps_the_text_and_drops_the_markdown_syntax(line, plain):
    assert plain_title(line) == plain


def test_markdown_and_html_titles_are_plain_text_the_body_stays_as_written():
    prompt = "# Fix the **login** `redirect`\n\nIt loops on `/auth`."
    doc = _doc(prompt, [{"kind": "message", "label": "human_prompt", "text": prompt}])
    md = render_markdown(doc)
    assert md.splitlines()[0] == "# Fix the login redirect…"  # "…": more lines follow in the prompt
    assert "#### Prompt\n\n# Fix the **login** `redirect`\n\nIt loops on `/auth`.\n" in md
    assert "<title>Fix the login redirect…</title>" in render_html(doc)
    assert render_markdown(_doc("**Deploy** checklist", [])).splitlines()[0] == "# Deploy checklist"


def test_md_text_leaves_an_indented_code_block_as_written():
    text = "Run this:\n\n    if a < b:\n\treturn <b>\n\n    x = 1\n\nthen <b>"
    assert md_text(text) == "Run this:\n\n    if a < b:\n\treturn <b>\n\n    x = 1\n\nthen &lt;b>"


def test_md_text_escapes_an_indented_line_that_continues_a_paragraph_or_a_list_item():
    # an indented line right after a paragraph's line is that paragraph's (no code block)
    assert md_text("text\n    more <b>") == "text\n    more &lt;b>"
    # inside a list an indented paragraph belongs to the item; after the list, code again
    got = md_text("- item\n\n    continued <x>\n\nback\n\n    code <y>")
    assert got == "- item\n\n    continued &lt;x>\n\nback\n\n    code <y>"


def test_md_text_code_after_a_closing_fence_and_fences_inside_indented_code():
    assert md_text("```\n<a>\n```\n    <b>\n<c>") == "```\n<a>\n```\n    <b>\n&lt;c>"
    # four spaces before ``` make it code, not a fence: the next line is prose again
    assert md_text("\n    ```\n<d>") == "\n    ```\n&lt;d>"
