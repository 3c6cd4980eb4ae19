"""Text rules of the Cline-family API history (pure, rules as data): what a user text block is,
the working directory and model named inside ``<environment_details>``, tool calls written as
XML in older assistant text, ``<thinking>`` spans.

Sources: the real Cline 3.51 task folders (fixtures/samples/cline, FORMATS-NEW.md §1: every user
block is ``text``; tool results are ``[<tool> for '<target>'] Result:`` text, a skipped call is
``Tool [<tool>] was not executed because …``); cline/cline ``src/core/prompts/responses.ts``
(``<feedback>``, ``[TASK RESUMPTION]``, ``[ERROR] You did not use a tool``, "The user denied
this operation.", "The tool execution failed with the following error:") and
``src/core/assistant-message/parse-assistant-message.ts`` (XML tool calls: ``<tool_name>`` then
one ``<param>value</param>`` per parameter, ``content``/``diff`` may hold anything up to the
*last* closing tag); RooCodeInc/Roo-Code ``src/core/environment/getEnvironmentDetails.ts``
(``# Current Workspace Directory (<path>) Files``, ``<model>`` under ``# Current Mode``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_history.model import classes

RESULT_HEADER = re.compile(r"^\[(?P<tool>[A-Za-z_][\w-]*)(?: for '(?P<target>.*?)')?\] Result:[ \t]*\n?", re.S)
"""A tool result written as user text (Cline, Roo and Kilo before native tool calling, and Cline
3.5x with it): the output follows the header, in this block and (older builds) the next ones."""
NOT_EXECUTED = re.compile(r"^Tool \[(?P<tool>[A-Za-z_][\w-]*)\] was not executed because")
"""A call the harness skipped (one tool per message): its result, an error."""

USER_TEXT_RULES: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    (re.compile(r"^<task>"), classes.HUMAN_PROMPT, "task"),
    (re.compile(r"^<feedback>"), classes.HUMAN_PROMPT, "feedback"),
    (re.compile(r"^<user_message>"), classes.HUMAN_PROMPT, "user_message"),
    (re.compile(r"^<answer>"), classes.HUMAN_PROMPT, "answer"),
    (re.compile(r"^<environment_details>"), classes.CONTEXT_INJECTION, "environment_details"),
    (re.compile(r"^<(file_content|folder_content|workspace_configuration)\b"), classes.CONTEXT_INJECTION, None),
    (re.compile(r"^\[TASK RESUMPTION\]"), classes.SYSTEM_REMINDER, None),
    (re.compile(r"^\[Response interrupted"), classes.INTERRUPT_MARKER, None),
    (re.compile(r"^\[ERROR\]"), classes.SYSTEM_REMINDER, None),
    (re.compile(r"^#\s*(task_progress|TODO LIST)"), classes.SYSTEM_REMINDER, None),
    (re.compile(r"^<(explicit_instructions|slash_command|system-reminder)\b"), classes.SYSTEM_REMINDER, None),
)
"""(pattern on the left-stripped block, class, tag whose content is the message text); first
match wins. A block that matches nothing is ``context_injection`` (the harness writes every
human turn inside a tag), except the first block of the first message when no ``<task>`` tag
is there (a task started by an older build): a human prompt."""

_USER_MESSAGE = re.compile(r"<user_message>\n?(?P<text>.*?)\n?</user_message>", re.S)
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \((?P<cwd>[^\n]+?)\) Files")
_MODEL = re.compile(r"<model>(?P<model>[^<\n]+)</model>")
_THINKING = re.compile(r"<thinking>\s*(?P<text>.*?)\s*</thinking>", re.S)

XML_TOOLS: frozenset[str] = frozenset(
    {
        # Cline (src/core/prompts/system.ts, tool names)
        "execute_command",
        "read_file",
        "write_to_file",
        "replace_in_file",
        "search_files",
        "list_files",
        "list_code_definition_names",
        "browser_action",
        "use_mcp_tool",
        "access_mcp_resource",
        "ask_followup_question",
        "plan_mode_respond",
        "attempt_completion",
        "new_task",
        "load_mcp_documentation",
        "web_fetch",
        "condense",
        "summarize_task",
        "report_bug",
        "new_rule",
        # Roo Code / Kilo Code (src/shared/tools.ts)
        "apply_diff",
        "insert_content",
        "search_and_replace",
        "codebase_search",
        "switch_mode",
        "fetch_instructions",
        "update_todo_list",
        "run_slash_command",
        "generate_image",
        "edit_file",
    }
)
"""Tool names an older assistant message may write as XML (``<read_file>…</read_file>``)."""
_XML_CALL = re.compile(r"<(?P<name>" + "|".join(sorted(XML_TOOLS)) + r")>(?P<body>.*?)</(?P=name)>", re.S)
_XML_PARAM = re.compile(r"<(?P<p>[a-z_]+)>")
_WHOLE_PARAMS = frozenset({"content", "diff", "result", "args"})
"""Parameters whose value may itself contain XML: read up to the last closing tag."""


@dataclass(frozen=True, slots=True)
class UserText:
    """One user text block, classified: ``kind`` is ``result`` (a tool result; ``tool``,
    ``output``, ``skipped``) or ``message`` (``message_class``, ``text``)."""

    kind: str
    text: str
    message_class: str | None = None
    tool: str | None = None
    skipped: bool = False
    matched: bool = True
    """False for a message block no rule matched (it may continue an earlier block's output)."""


def classify_user_text(text: str, *, first_block_of_task: bool) -> UserText:
    """Classify one user text block (`USER_TEXT_RULES`, `RESULT_HEADER`, `NOT_EXECUTED`)."""
    m = RESULT_HEADER.match(text)
    if m is not None:
        return UserText("result", text[m.end() :], tool=m["tool"])
    m = NOT_EXECUTED.match(text)
    if m is not None:
        return UserText("result", text, tool=m["tool"], skipped=True)
    stripped = text.lstrip()
    for rx, message_class, tag in USER_TEXT_RULES:
        if rx.match(stripped):
            body = stripped
            if tag is not None:
                inner = re.match(rf"<{tag}>\n?(?P<t>.*?)\n?</{tag}>\s*$", stripped, re.S)
                body = inner["t"] if inner else stripped
            return UserText("message", body, message_class)
    if first_block_of_task:
        return UserText("message", text, classes.HUMAN_PROMPT, matched=False)
    return UserText("message", text, classes.CONTEXT_INJECTION, matched=False)


_FEEDBACK = re.compile(r"<feedback>\n?(?P<text>.*?)\n?</feedback>", re.S)


def feedback_in(text: str) -> str | None:
    """The ``<feedback>`` a tool result carries (a denial or a completion the user answered:
    "The user denied this operation and provided the following feedback:"), if any."""
    m = _FEEDBACK.search(text)
    return m["text"] if m and m["text"].strip() else None


def resumption_prompt(text: str) -> str | None:
    """The new instructions a ``[TASK RESUMPTION]`` block carries in ``<user_message>``, if any."""
    m = _USER_MESSAGE.search(text)
    return m["text"] if m and m["text"].strip() else None


def cwd_of(text: str) -> str | None:
    """The working directory ``<environment_details>`` names, or None."""
    m = _CWD.search(text)
    return m["cwd"].strip() if m else None


def model_of(text: str) -> str | None:
    """The ``<model>`` Roo Code / Kilo Code write in ``<environment_details>``, or None."""
    m = _MODEL.search(text)
    return m["model"].strip() if m else None


def split_thinking(text: str) -> tuple[list[str], str]:
    """(``<thinking>`` span texts, the text without them) of an assistant text block."""
    spans = [m["text"] for m in _THINKING.finditer(text) if m["text"].strip()]
    return spans, _THINKING.sub("", text)


def xml_tool_calls(text: str) -> tuple[list[tuple[str, dict[str, str]]], str]:
    """(``[(tool name, {param: value})]`` in order, the text without them) of an assistant text
    block written before native tool calling. Parameter values are stripped of one surrounding
    newline; a parameter in `_WHOLE_PARAMS` runs to its last closing tag in the call."""
    calls: list[tuple[str, dict[str, str]]] = []
    for m in _XML_CALL.finditer(text):
        calls.append((m["name"], _params(m["body"])))
    return calls, _XML_CALL.sub("", text) if calls else text


def _params(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while True:
        m = _XML_PARAM.search(body, i)
        if m is None:
            return out
        name, start = m["p"], m.end()
        close = f"</{name}>"
        end = body.rfind(close) if name in _WHOLE_PARAMS else body.find(close, start)
        if end < start:
            i = start
            continue
        value = body[start:end]
        if value.startswith("\n"):
            value = value[1:]
        if value.endswith("\n"):
            value = value[:-1]
        out.setdefault(name, value)
        i = end + len(close)
