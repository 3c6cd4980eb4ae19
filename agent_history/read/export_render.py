"""Render an exported session (`read.export.export_session`) as Markdown, HTML or JSON (pure).

- **Markdown** (for a pull request): the title as plain text (`plain_title`: a first prompt's
  ``# heading``, ``**bold**`` or backticks are not shown as syntax), a header with agent,
  session, working directory, times, tokens and cost; prompts and replies as sections;
  reasoning, context the harness injected, tool calls (input and output) and sub-agents in
  ``<details>`` blocks (collapsed on GitHub); code in fences longer than any backtick run inside
  them. Transcript text is never obeyed as HTML: in prompts, replies and summaries every ``<``
  outside code (fenced and indented blocks and inline code spans, which show it literally) is
  written ``&lt;`` (`md_text`), so ``<script>`` or ``</details>`` is shown and the rest of the
  Markdown still renders.
- **HTML**: one self-contained file — inline CSS, no script, no external asset (a
  ``Content-Security-Policy`` meta tag forbids loading anything), every transcript string escaped
  with `html.escape`; readable offline; reasoning, tool calls and sub-agents collapsed.
- **JSON**: the document itself.

Times: ``YYYY-MM-DD HH:MM:SS UTC`` in Markdown and HTML; ISO 8601 to the millisecond (what the
transcripts record; never Python's microseconds) in JSON.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from typing import Any

import orjson

from agent_history.bidi import show_bidi
from agent_history.embed.redact import REDACTED
from agent_history.timestamps import second

PROMPT_CLASSES = frozenset({"human_prompt", "queued_prompt"})
REPLY_CLASSES = frozenset({"assistant_text", "agent_message", "subagent_report"})
"""Shown open; every other message class (reasoning, system reminders, hook output …) is collapsed."""

ROLE_TITLE = {
    "human_prompt": "Prompt",
    "queued_prompt": "Queued prompt",
    "assistant_text": "Reply",
    "agent_message": "Agent message",
    "subagent_report": "Sub-agent report",
    "subagent_brief": "Sub-agent brief",
    "reasoning": "Reasoning",
    "compaction_summary": "Compaction summary",
}


def _when(v) -> str:
    """A time for people: ``2026-01-23 17:30:15 UTC`` (a datetime; anything else as it is)."""
    if isinstance(v, datetime):
        return second((v if v.tzinfo else v.replace(tzinfo=UTC)).astimezone(UTC), zone=True)
    return str(v)


def _json_times(value: Any) -> Any:
    """`value` with every datetime as ISO 8601 to the millisecond (``2026-01-23T17:30:15.190+00:00``)."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds")
    if isinstance(value, dict):
        return {k: _json_times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_times(v) for v in value]
    return value


def _money(v) -> str:
    return "unknown" if v is None else f"${v:,.4f}"


def _tokens(v) -> str:
    return "unknown" if v is None else f"{v:,}"


def _header_facts(thread: dict[str, Any], product: str) -> list[tuple[str, str]]:
    s, m = thread["session"], thread.get("summary") or {}
    facts = [
        ("Agent", f"{product} ({s['agent']})"),
        ("Session", s["session_uid"] + (f" / {s['agent_id']}" if s["agent_id"] else "")),
    ]
    if s.get("cwd"):
        facts.append(("Working directory", s["cwd"]))
    if m.get("model"):
        facts.append(("Model", m["model"]))
    if m.get("started_at"):
        facts.append(("Started", _when(m["started_at"])))
    if m.get("ended_at"):
        facts.append(("Ended", _when(m["ended_at"])))
    facts.append(
        (
            "Tokens",
            _tokens(m.get("tokens"))
            + (f" (with sub-agents {_tokens(m.get('tokens_with_subagents'))})" if m.get("subagent_count") else ""),
        )
    )
    facts.append(
        (
            "Cost (list price)",
            _money(m.get("cost_usd"))
            + (f" (with sub-agents {_money(m.get('cost_usd_with_subagents'))})" if m.get("subagent_count") else ""),
        )
    )
    return facts


TITLE_CHARS = 120
"""A title longer than this (characters; e.g. a whole first prompt used as the title) is cut with "…"."""


_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
"""An inline code span (CommonMark: a backtick run, text, the same run; group 2 the text)."""

_MD_LINE_PREFIX = re.compile(r"^(?:>\s*)*(?:#{1,6}(?=\s|$)|[-*+](?=\s)|\d{1,9}[.)](?=\s))?\s*")
"""A line's block syntax: blockquote ``>``s, then an ATX heading's ``#``s, a bullet or an ordered-list number."""
_MD_HEADING_CLOSE = re.compile(r"\s+#+\s*$")
_MD_INLINE = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # image: its alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # link: its text
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), r"\1"),  # **strong**
    (re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"), r"\1"),  # __strong__ (never __init__)
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),  # strikethrough
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),  # *emphasis*
    (re.compile(r"(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"), r"\1"),  # _emphasis_ (never snake_case)
)
"""Inline Markdown outside code spans → its text, applied in this order."""


def plain_title(line: str) -> str:
    """One line of Markdown as the plain text a title shows: ``# Fix **the** `parser` `` →
    ``Fix the parser``. Drops block syntax at the start (``>``, an ATX heading's ``#``s and its
    closing ``#`` run, a list marker) and keeps the text of code spans (literal: not read
    further), links, images, strong, emphasis and strikethrough; ``snake_case``, ``2 * 3`` and a
    line that is nothing but syntax stay as written."""
    text = _MD_LINE_PREFIX.sub("", line, count=1)
    if line.lstrip(" >").startswith("#") and text != line:
        text = _MD_HEADING_CLOSE.sub("", text)
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_plain_inline(text[at : span.start()]), span.group(2).strip()]
        at = span.end()
    out.append(_plain_inline(text[at:]))
    return "".join(out).strip() or line.strip()


def _plain_inline(text: str) -> str:
    for pattern, repl in _MD_INLINE:
        text = pattern.sub(repl, text)
    return text


def _title(thread: dict[str, Any]) -> str:
    """The session's title on one line: its first non-blank line as plain text (`plain_title`),
    at most `TITLE_CHARS`; "…" when cut or when more lines follow."""
    m = thread.get("summary") or {}
    title = (m.get("title") or thread["session"].get("title") or "").strip()
    first = next((ln.strip() for ln in title.splitlines() if ln.strip()), "") or thread["session"]["session_uid"]
    line = plain_title(first)
    if len(line) > TITLE_CHARS or first != title:
        cut = TITLE_CHARS - 1
        for marker in re.finditer(re.escape(REDACTED), line):  # never half a marker (`[REDACT…`)
            if marker.start() < cut < marker.end():
                cut = marker.start()
        line = line[:cut].rstrip() + "…"
    return line


def _tool_summary(ev: dict[str, Any]) -> str:
    d = ev.get("detail") or {}
    bits = [ev.get("label") or "tool"]
    if d.get("outcome"):
        bits.append(d["outcome"])
    if d.get("exit_code") is not None:
        bits.append(f"exit {d['exit_code']}")
    if d.get("error_class"):
        bits.append(d["error_class"])
    return " · ".join(bits)


# --- Markdown --------------------------------------------------------------------------------


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}{lang}\n{text}\n{tick}"


def _md_inline(text: str) -> str:
    """`text` as literal Markdown inline text: HTML tags written as entities, so a title such as
    ``<script>`` or ``</details>`` is shown, not parsed."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _escape_outside_code_spans(text: str) -> str:
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [text[at : span.start()].replace("<", "&lt;"), span.group(0)]
        at = span.end()
    return "".join(out) + text[at:].replace("<", "&lt;")


_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _indent(line: str) -> int:
    """Columns of leading whitespace (CommonMark: a tab advances to the next multiple of 4)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def md_text(text: str) -> str:
    """Transcript text as a Markdown body that is shown, never obeyed as HTML: every ``<``
    outside code becomes ``&lt;``. Code shows it literally, so it is left as written: fenced
    blocks (CommonMark: a line of three or more backticks or tildes, up to the closing fence of
    the same character and at least its length), indented blocks (lines indented 4 or more
    columns, a tab to the next multiple of 4, after a blank line, the start or a closing fence,
    up to the next line indented less; not inside a list, where such a line continues the
    item and is escaped) and inline code spans. Markdown itself (emphasis, lists, links, code)
    renders as written."""
    out: list[str] = []
    prose: list[str] = []
    fence = ""
    indented = False  # inside an indented code block
    may_open = True  # the previous line ends a paragraph: blank, the start, a closing fence
    in_list = False  # a list item is open: an indented line continues it (escaped)

    def flush() -> None:
        if prose:
            out.append(_escape_outside_code_spans("\n".join(prose)))
            prose.clear()

    for line in text.split("\n"):
        blank = not line.strip()
        if fence:
            out.append(line)
            closing = line.strip()
            if closing.startswith(fence) and set(closing) == {fence[0]}:
                fence, may_open = "", True
            continue
        if indented and (blank or _indent(line) >= 4):
            out.append(line)
            continue
        indented = False
        if not blank and _indent(line) >= 4 and may_open and not in_list:
            flush()
            out.append(line)
            indented = True
            continue
        opened = _FENCE_OPEN.match(line)
        if opened and not (opened.group(1)[0] == "`" and "`" in line[opened.end() :]):
            flush()
            out.append(line)
            fence = opened.group(1)
            continue
        if _LIST_ITEM.match(line):
            in_list = True
        elif in_list and may_open and not blank and _indent(line) == 0:
            in_list = False  # a paragraph after a blank line at the margin ends the list
        may_open = blank
        prose.append(line)
    flush()
    return "\n".join(out)


def _md_events(thread: dict[str, Any], depth: int) -> list[str]:
    out: list[str] = []
    for ev in thread["events"]:
        kind, label, text = ev["kind"], ev.get("label"), ev.get("text") or ""
        when = f" · {_when(ev['ts'])}" if ev.get("ts") else ""
        if kind == "message" and label in PROMPT_CLASSES | REPLY_CLASSES:
            out.append(f"#### {ROLE_TITLE.get(label, label)}{when}\n\n{md_text(text)}\n")
        elif kind == "message":
            role = _md_inline(str(ROLE_TITLE.get(label or "", label)))
            out.append(f"<details><summary>{role}{when}</summary>\n\n{_fence(text)}\n\n</details>\n")
        elif kind == "tool_call":
            d = ev.get("detail") or {}
            body = f"**Input**\n\n{_fence(text, 'json' if text.lstrip().startswith(('{', '[')) else '')}\n"
            if d.get("output") is not None:
                body += f"\n**Output**\n\n{_fence(d['output'])}\n"
            out.append(
                f"<details><summary>Tool: {_md_inline(_tool_summary(ev))}{when}</summary>\n\n{body}\n</details>\n"
            )
        elif kind == "spawn":
            d = ev.get("detail") or {}
            head = f"Sub-agent: {label or 'agent'}" + (f" — {d['description']}" if d.get("description") else "")
            inner = f"**Brief**\n\n{_fence(text)}\n" if text else ""
            if ev.get("thread"):
                inner += "\n" + "\n".join(_md_thread(ev["thread"], depth + 1))
            out.append(f"<details><summary>{_md_inline(head)}</summary>\n\n{inner}\n</details>\n")
        elif kind == "compaction":
            d = ev.get("detail") or {}
            out.append(
                f"*Context compacted ({_md_inline(label or 'unknown trigger')}): {_tokens(d.get('tokens_before'))} → {_tokens(d.get('tokens_after'))} tokens*\n"
            )
        elif kind == "git":
            d = ev.get("detail") or {}
            out.append(_md_inline(f"*git {label}: {d.get('sha') or ''} {d.get('branch') or ''} {text}*") + "\n")
    return out


def _md_thread(thread: dict[str, Any], depth: int) -> list[str]:
    m = thread.get("summary") or {}
    facts = f"Tokens {_tokens(m.get('tokens'))} · cost {_money(m.get('cost_usd'))}"
    return [
        _md_inline(f"**Thread {thread['session']['session_uid']} {thread['session']['agent_id']}** ({facts})") + "\n",
        *_md_events(thread, depth),
    ]


def render_markdown(doc: dict[str, Any]) -> str:
    """The document as Markdown (see the module docstring); bidi overrides shown as ``<U+XXXX>``."""
    thread = doc["thread"]
    lines = [f"# {show_bidi(_md_inline(_title(thread)))}", ""]
    lines += [f"- **{k}:** {v}" for k, v in _header_facts(thread, doc["product"])]
    if doc.get("redacted"):
        lines.append("- Secret-shaped text is shown as `[REDACTED]`.")
    lines += ["", "---", ""]
    lines += _md_events(thread, 0)
    for extra in doc.get("unlinked_threads") or ():
        lines.append(f"<details><summary>Sub-agent thread {_md_inline(extra['session']['agent_id'])}</summary>\n")
        lines += _md_thread(extra, 1)
        lines.append("</details>\n")
    lines.append("*Exported by agent-history.*")
    return show_bidi("\n".join(lines) + "\n")  # bidi overrides visible everywhere, code blocks too


# --- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.4rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}
.msg{margin:1rem 0;padding:.6rem .9rem;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
.prompt{background:#eef4ff;border-left:4px solid #3b6fd8}.reply{background:#f6f8fa;border-left:4px solid #8c959f}
details{margin:.5rem 0;padding:.3rem .6rem;border:1px solid #d0d7de;border-radius:6px}
summary{cursor:pointer;font-weight:600}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.5rem}
.meta{color:#57606a;font-size:.85rem}.note{color:#57606a;font-style:italic}
"""


def _e(text: Any) -> str:
    """HTML text: escaped, bidi overrides shown as ``<U+XXXX>`` (`agent_history.bidi`)."""
    return html.escape(show_bidi("" if text is None else str(text)), quote=True)


def _html_events(thread: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for ev in thread["events"]:
        kind, label, text = ev["kind"], ev.get("label"), ev.get("text") or ""
        when = f'<span class="meta"> · {_e(_when(ev["ts"]))}</span>' if ev.get("ts") else ""
        if kind == "message" and label in PROMPT_CLASSES | REPLY_CLASSES:
            css = "prompt" if label in PROMPT_CLASSES else "reply"
            out.append(
                f'<div class="msg {css}"><strong>{_e(ROLE_TITLE.get(label, label))}</strong>{when}\n{_e(text)}</div>'
            )
        elif kind == "message":
            out.append(
                f"<details><summary>{_e(ROLE_TITLE.get(label or '', label))}{when}</summary><pre>{_e(text)}</pre></details>"
            )
        elif kind == "tool_call":
            d = ev.get("detail") or {}
            body = f"<p><strong>Input</strong></p><pre>{_e(text)}</pre>"
            if d.get("output") is not None:
                body += f"<p><strong>Output</strong></p><pre>{_e(d['output'])}</pre>"
            out.append(f"<details><summary>Tool: {_e(_tool_summary(ev))}{when}</summary>{body}</details>")
        elif kind == "spawn":
            d = ev.get("detail") or {}
            head = f"Sub-agent: {label or 'agent'}" + (f" — {d['description']}" if d.get("description") else "")
            inner = f"<p><strong>Brief</strong></p><pre>{_e(text)}</pre>" if text else ""
            if ev.get("thread"):
                inner += _html_thread(ev["thread"])
            out.append(f"<details><summary>{_e(head)}</summary>{inner}</details>")
        elif kind == "compaction":
            d = ev.get("detail") or {}
            out.append(
                f'<p class="note">Context compacted ({_e(label or "unknown trigger")}): {_e(_tokens(d.get("tokens_before")))} → {_e(_tokens(d.get("tokens_after")))} tokens</p>'
            )
        elif kind == "git":
            d = ev.get("detail") or {}
            out.append(
                f'<p class="note">git {_e(label)}: {_e(d.get("sha") or "")} {_e(d.get("branch") or "")} {_e(text)}</p>'
            )
    return out


def _html_thread(thread: dict[str, Any]) -> str:
    m = thread.get("summary") or {}
    facts = f"tokens {_tokens(m.get('tokens'))} · cost {_money(m.get('cost_usd'))}"
    head = f'<p class="meta">Thread {_e(thread["session"]["session_uid"])} {_e(thread["session"]["agent_id"])} ({_e(facts)})</p>'
    return head + "".join(_html_events(thread))


def render_html(doc: dict[str, Any]) -> str:
    """The document as one self-contained HTML page (see the module docstring)."""
    thread = doc["thread"]
    title = show_bidi(_title(thread))
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in _header_facts(thread, doc["product"]))
    note = '<p class="note">Secret-shaped text is shown as [REDACTED].</p>' if doc.get("redacted") else ""
    extra = "".join(
        f"<details><summary>Sub-agent thread {_e(t['session']['agent_id'])}</summary>{_html_thread(t)}</details>"
        for t in doc.get("unlinked_threads") or ()
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><dl>{facts}</dl>{note}<hr>"
        + "\n".join(_html_events(thread))
        + extra
        + '<p class="note">Exported by agent-history.</p></body></html>\n'
    )


def render_json(doc: dict[str, Any]) -> str:
    """The document as indented JSON."""
    return (
        orjson.dumps(_json_times(doc), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str).decode()
        + "\n"
    )


RENDERERS = {"md": render_markdown, "html": render_html, "json": render_json}
"""Format → renderer (`read.export.FORMATS`)."""
