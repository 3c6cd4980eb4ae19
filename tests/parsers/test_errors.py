"""Spec for `parsers.errors.classify_error` / `error_excerpt` (docs/design.md §6 error classes).

Inputs are real tool outputs from corpus/home (Claude `is_error` blocks, pi `isError` results,
Codex `exit_code`), trimmed, plus field cases E18 and E26.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agent_history.parsers.common.errors import ERROR_CLASSES, ERROR_RULES, classify_error, error_excerpt, strip_ansi

CLAUDE_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
CLAUDE_DECLINED = (
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user "
    "to tell you how to proceed."
)
PI_PUSH_REJECTED = (
    "To https://github.com/badlogic/pi-mono.git\n"
    " ! [rejected]        HEAD -> main (non-fast-forward)\n"
    "error: failed to push some refs to 'https://github.com/badlogic/pi-mono.git'\n"
    "hint: Updates were rejected because the tip of your current branch is behind\n\n\n"
    "Command exited with code 1"
)
TY_OUTPUT = (
    "WARN ty is pre-release software and not ready for production use. Expect to encounter bugs, missing "
    "features, and fatal errors.\n\n"
    "error[call-non-callable]: Object of type `_WithException[Unknown, <class 'Skipped'>]` is not callable\n"
    "   --> test/test_cache.py:429:17\n"
    "    |\n"
    "427 |             except PermissionError:\n"
    "428 |                 # If we get permission errors, just skip this test\n"
    '429 |                 pytest.skip("Cannot test permissions on this system")\n'
    "    |\n"
    "info: rule `call-non-callable` is enabled by default\n\n"
    "Found 1 diagnostic"
)
TS_OUTPUT = (
    "../coding-agent/test/agent-session-compaction.test.ts(144,34): error TS2339: Property 'loadEntries' "
    "does not exist on type 'SessionManager'.\n\nCommand exited with code 2"
)


def test_success_is_not_an_error():
    assert classify_error("1 passed in 0.41s\n", is_error=False, exit_code=0) == (None, None)


def test_missing_flags_and_exit_code_is_not_an_error():
    assert classify_error("anything", is_error=None) == (None, None)


def test_output_text_alone_never_makes_an_error_e26():
    output = "test_retry_logs_failure: asserts 'Process exited with code 1' is logged\n1 passed in 0.41s\n"
    assert classify_error(output, is_error=False, exit_code=0) == (None, None)


def test_claude_rejection_text_is_denied_e18():
    assert classify_error(CLAUDE_REJECTED, is_error=True) == ("denied", CLAUDE_REJECTED)


def test_claude_take_this_action_text_is_denied():
    assert classify_error(CLAUDE_DECLINED, is_error=True)[0] == "denied"


def test_rejected_flag_is_denied_whatever_the_text():
    assert classify_error("please add transformer.js too first", is_error=True, rejected=True) == (
        "denied",
        "please add transformer.js too first",
    )


def test_codex_rejected_by_user_is_denied():
    assert classify_error("exec command rejected by user", is_error=True)[0] == "denied"


def test_git_push_rejected_is_not_denied():
    assert classify_error(PI_PUSH_REJECTED, is_error=True)[0] == "nonzero_exit"


def test_claude_bash_timeout_is_timeout():
    output = "Running 3 tests using 1 worker\n<bash-stderr>Command timed out after 2m 0.0s</bash-stderr>"
    assert classify_error(output, is_error=True)[0] == "timeout"


def test_exit_code_124_is_timeout():
    assert classify_error("", is_error=None, exit_code=124) == ("timeout", None)


def test_timed_out_flag_is_timeout():
    assert classify_error(None, is_error=False, timed_out=True) == ("timeout", None)


def test_claude_request_interrupted_is_interrupted():
    output = "[Request interrupted by user for tool use]\n│ 🥊 lefthook v1.12.3  hook: pre-push │"
    assert classify_error(output, is_error=True)[0] == "interrupted"


def test_pi_command_aborted_is_interrupted():
    assert classify_error("Command aborted", is_error=True) == ("interrupted", "Command aborted")


def test_pi_command_aborted_footer_after_output_is_interrupted():
    output = "Debugger attached.\nError in the js-debug bootloader, please report\n\nCommand aborted"
    assert classify_error(output, is_error=True)[0] == "interrupted"


def test_interrupted_flag_wins_over_text():
    assert classify_error("No such file or directory", is_error=True, interrupted=True)[0] == "interrupted"


def test_denied_precedes_timeout_and_interrupted():
    assert classify_error("timed out", is_error=True, rejected=True, interrupted=True, timed_out=True)[0] == "denied"


def test_string_to_replace_not_found_is_validation_error_not_not_found():
    output = "<tool_use_error>String to replace not found in file.\nString:     return new Response(stream, {</tool_use_error>"
    assert classify_error(output, is_error=True) == (
        "validation_error",
        "String to replace not found in file.\nString:     return new Response(stream, {",
    )


def test_file_has_not_been_read_yet_is_validation_error():
    output = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    assert classify_error(output, is_error=True) == (
        "validation_error",
        "File has not been read yet. Read it first before writing to it.",
    )


def test_found_multiple_matches_is_validation_error():
    output = "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false.</tool_use_error>"
    assert classify_error(output, is_error=True)[0] == "validation_error"


def test_input_validation_error_is_validation_error():
    output = (
        "InputValidationError: Edit failed due to the following issue:\nThe required parameter `old_string` is missing"
    )
    assert classify_error(output, is_error=True)[0] == "validation_error"


def test_no_such_file_is_not_found():
    output = "cat: packages/coding-agent/node_modules/cli-highlight/package.json: No such file or directory\n\n\nCommand exited with code 1"
    assert classify_error(output, is_error=True) == (
        "not_found",
        "cat: packages/coding-agent/node_modules/cli-highlight/package.json: No such file or directory\n\n"
        "Command exited with code 1",
    )


def test_enoent_is_not_found():
    output = "ENOENT: no such file or directory, access '/Users/user2/workspaces/pi-mono/packages/tui/CHANGELOG.md'"
    assert classify_error(output, is_error=True)[0] == "not_found"


def test_command_not_found_is_not_found():
    assert classify_error("zsh: command not found: pnpm", is_error=None, exit_code=127)[0] == "not_found"


def test_typescript_property_does_not_exist_is_not_not_found():
    assert classify_error(TS_OUTPUT, is_error=True)[0] == "nonzero_exit"


def test_quoted_except_permissionerror_is_not_permission():
    assert classify_error(TY_OUTPUT, is_error=True)[0] == "tool_error"


def test_permission_denied_is_permission():
    assert classify_error("bash: ./deploy.sh: Permission denied", is_error=None, exit_code=126)[0] == "permission"


def test_raised_permissionerror_is_permission():
    output = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nPermissionError: [Errno 1] nope'
    assert classify_error(output, is_error=True)[0] == "permission"


def test_sandbox_operation_not_permitted_is_permission():
    assert classify_error("touch: /etc/x: Operation not permitted", is_error=None, exit_code=1)[0] == "permission"


def test_could_not_resolve_host_is_network():
    output = "fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com"
    assert classify_error(output, is_error=None, exit_code=128)[0] == "network"


def test_econnrefused_is_network():
    output = "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete]"
    assert classify_error(output, is_error=True)[0] == "network"


def test_etimedout_is_timeout_not_network():
    assert classify_error("Error: connect ETIMEDOUT 10.0.0.1:443", is_error=True)[0] == "timeout"


def test_codex_nonzero_exit_code_is_nonzero_exit():
    output = 'rg: the literal "\\n" is not allowed in a regex\n'
    assert classify_error(output, is_error=None, exit_code=2) == (
        "nonzero_exit",
        'rg: the literal "\\n" is not allowed in a regex',
    )


def test_pi_exit_code_footer_supplies_the_exit_code():
    assert classify_error("(no output)\n\nCommand exited with code 1", is_error=True)[0] == "nonzero_exit"


def test_is_error_without_exit_code_or_pattern_is_tool_error():
    output = "fatal: 'main' is already used by worktree at '/Users/testuser/Documents/GitHub/projects/example-project'"
    assert classify_error(output, is_error=True) == ("tool_error", output)


def test_is_error_with_exit_code_zero_is_other():
    assert classify_error("done", is_error=True, exit_code=0) == ("other", "done")


def test_empty_output_has_no_excerpt():
    assert classify_error("  \n", is_error=True) == ("tool_error", None)


def test_pattern_deep_in_the_middle_of_a_long_log_is_ignored():
    output = "start\n" + "x\n" * 5000 + "EACCES somewhere in the middle\n" + "y\n" * 5000 + "done"
    assert classify_error(output, is_error=None, exit_code=1)[0] == "nonzero_exit"


def test_odd_types_never_raise():
    assert classify_error(b"bytes", is_error="yes", exit_code="1") == (None, None)  # type: ignore[arg-type]


def test_rule_table_lists_every_class_once_in_design_order():
    assert tuple(rule.error_class for rule in ERROR_RULES) == ERROR_CLASSES


def test_excerpt_strips_ansi_escapes():
    assert error_excerpt("\x1b[96mapp/x.tsx\x1b[0m:\x1b[93m21\x1b[0m - \x1b[91merror\x1b[0m TS2687") == (
        "app/x.tsx:21 - error TS2687"
    )


def test_excerpt_keeps_last_state_of_carriage_return_lines():
    assert error_excerpt("Rebasing (1/22)\rRebasing (2/22)\rerror: could not apply fb89908... fix") == (
        "error: could not apply fb89908... fix"
    )


def test_excerpt_of_long_traceback_is_its_tail_through_the_exception_line():
    frames = "".join(f'  File "/app/mod{i}.py", line {i}, in f{i}\n    call_{i}()\n' for i in range(40))
    output = "collecting...\n" + "Traceback (most recent call last):\n" + frames + "KeyError: 'message'\n"
    excerpt = error_excerpt(output)
    assert excerpt is not None
    assert excerpt.endswith("KeyError: 'message'")
    assert excerpt.startswith('  File "/app/mod')
    assert excerpt.count("\n") == 16


def test_excerpt_of_long_log_prefers_error_lines():
    output = "\n".join(f"building module {i}" for i in range(200)) + "\nerror: failed to push some refs\nbye"
    assert error_excerpt(output) == "error: failed to push some refs"


def test_excerpt_of_long_log_without_error_lines_is_its_tail():
    output = "\n".join(f"line {i:04d}" for i in range(1000))
    excerpt = error_excerpt(output)
    assert excerpt == "\n".join(f"line {i:04d}" for i in range(950, 1000))


def test_excerpt_never_exceeds_500_characters():
    output = "error " * 10000
    excerpt = error_excerpt(output)
    assert excerpt is not None
    assert len(excerpt) == 300


@given(
    output=st.one_of(st.none(), st.text(max_size=3000)),
    is_error=st.one_of(st.none(), st.booleans()),
    exit_code=st.one_of(st.none(), st.integers(min_value=-(2**40), max_value=2**40)),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
)
def test_classify_error_is_total(output, is_error, exit_code, flags):
    cls, excerpt = classify_error(
        output, is_error=is_error, exit_code=exit_code, rejected=flags[0], interrupted=flags[1], timed_out=flags[2]
    )
    assert cls is None or cls in ERROR_CLASSES
    assert excerpt is None or len(excerpt) <= 500


# -- the needles: a rule's regex is searched only where one of its literal runs occurs ----------


def test_needles_are_each_alternatives_longest_literal_run_lowercased_when_case_blind():
    from agent_history.parsers.common.errors import needles

    assert needles(re.compile(r"(?:\btimed out\b)|(?:^(?:[\w.]+\.)?Timeout(?:Error|Expired):)", re.I)) == (
        "timed out",
        "timeoute",  # the parser factors the branch's common "E" into the run
    )
    assert needles(re.compile(r"(?:Permission denied)|(?:\bEPERM\b)")) == ("Permission denied", "EPERM")
    assert needles(re.compile(r"(?:\bnot found\b)|(?:\w+ok)")) is None  # "ok" is too short to test
    assert needles(re.compile("(?:reſolve)|(?:host)", re.I)) is None  # a non-ASCII literal folds more than lower
    assert needles(re.compile("(?:reſolve)|(?:host)")) == ("reſolve", "host")


def test_each_alternative_of_a_rule_is_searched_only_where_its_needles_occur():
    from agent_history.parsers.common.errors import _PLANS

    by_class = {r.error_class: r for r in ERROR_RULES}
    plan = _PLANS[by_class["permission"].edges]
    assert [(alt.pattern, found) for alt, found in plan] == [
        ("Permission denied", ("Permission denied",)),
        (r"\bEACCES\b", ("EACCES",)),
        (r"\bEPERM\b", ("EPERM",)),
        ("Operation not permitted", ("Operation not permitted",)),
        (r"^(?:[\w.]+\.)?PermissionError:", ("PermissionError:",)),
        ("Read-only file system", ("Read-only file system",)),
    ]
    assert [found for _, found in _PLANS[by_class["interrupted"].head]] == [("interrupted",), ("request was aborted",)]


def test_a_case_blind_rule_still_matches_by_unicode_case_folding():
    # `re.IGNORECASE` matches "ſ" (U+017F) for "s"; str.lower does not: non-ASCII text is searched
    assert classify_error("fatal: Could not reſolve host: github.com", is_error=True, exit_code=128) == (
        "network",
        "fatal: Could not reſolve host: github.com",
    )
    assert classify_error("fatal: Could not RESOLVE host: github.com", is_error=True, exit_code=128)[0] == "network"


_NEEDLE_WORDS = st.sampled_from(
    ["timed out", "TIMEOUTERROR:", "Permission denied", "EPERM", "eperm", "ENOENT", "not found", "does not exist",
     "No such file", "getaddrinfo", "Connection reset by peer", "KeyboardInterrupt", "Command aborted", "user ",
     "denied by the user", "\n", " ", "x", "ſ", "K", "İ", "file", "Error:", "ModuleNotFoundError:", "missing",
     "required parameter", "pathspec 'x' did not match", "[Request interrupted by user"]
)  # fmt: skip


@given(parts=st.lists(st.one_of(_NEEDLE_WORDS, st.text(max_size=8)), max_size=12))
def test_the_prefilter_never_changes_whether_a_rule_matches(parts):
    from agent_history.parsers.common.errors import _search

    text = "".join(parts)
    lowered = text.lower() if text.isascii() else None
    for rule in ERROR_RULES:
        for rx in (rule.head, rule.edges):
            if rx is not None:
                assert _search(rx, text, lowered) == (rx.search(text) is not None), (rule.error_class, text)


@given(st.text(alphabet=st.sampled_from("ab [];\x1b\x07\\\n\r\t\x00\x7f\x9b]0m"), max_size=40))
def test_strip_ansi_gives_the_escape_patterns_result_and_keeps_a_clean_text_as_it_is(text):
    from agent_history.parsers.common.errors import _ANSI

    assert strip_ansi(text) == _ANSI.sub("", text)
    clean = text.replace("\x1b", "").replace("\x07", "").replace("\x00", "").replace("\x7f", "")
    assert strip_ansi(clean) is clean


def _informative_lines_one_by_one(lines: list[str]) -> str | None:
    """The excerpt rule 4 as first written: each stripped line searched alone."""
    from agent_history.parsers.common.errors import _INFORMATIVE, EXCERPT_CHARS, _cap_line

    picked: list[str] = []
    seen: set[str] = set()
    size = 0
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped in seen or not _INFORMATIVE.search(stripped):
            continue
        seen.add(stripped)
        line = _cap_line(stripped)
        if picked and size + len(line) + 1 > EXCERPT_CHARS:
            break
        picked.append(line)
        size += len(line) + 1
    return "\n".join(picked)[:EXCERPT_CHARS] if picked else None


_LOG_WORDS = st.sampled_from(
    ["error", "Error:", "FAILED", "not found", "interrupted", "uninterrupted", "aborted.", "rejected", "ok",
     " ", "\n", "\t", "\x1c", "\u2028", "_aborted", "x" * 120, "doesn't want to", "timed\nout", "panic"]
)  # fmt: skip


@given(st.lists(_LOG_WORDS, max_size=60))
def test_the_informative_lines_found_in_one_scan_are_those_found_line_by_line(words):
    from agent_history.parsers.common.errors import _informative_excerpt

    text = "".join(words)
    assert _informative_excerpt(text) == _informative_lines_one_by_one(text.split("\n"))
