"""docs/cli.md is generated from the typer app and the config schema, and everything is
documented: every command, argument and option has help text, every config key a line.
Pure (no database)."""

from __future__ import annotations

from agent_history.cli.app import COMMAND_MODULES
from agent_history.cli.reference import command_tree, reference, undocumented
from agent_history.config import FREE_KEYS, KEY_HELP, KNOWN_KEYS, METRICS_KEYS, config_keys
from tests.conftest import REPO


def test_cli_reference_is_generated_from_the_app():
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert text == reference(), "docs/cli.md drifted: run python -m agent_history.cli.reference"


def test_every_command_option_and_config_key_is_documented():
    assert undocumented() == []


def test_every_top_level_command_has_a_section():
    text = reference()
    assert sorted(command_tree().commands) == sorted(COMMAND_MODULES)
    for name in COMMAND_MODULES:
        assert f"### `agent-history {name}`\n" in text, name


def test_config_keys_are_the_schema_and_each_has_one_help_line():
    keys = config_keys()
    assert list(keys) == list(KNOWN_KEYS)
    assert keys["metrics"] == METRICS_KEYS and keys["sources"] == (FREE_KEYS["sources"],)
    assert set(KEY_HELP) == {f"{section}.{key}" for section, names in keys.items() for key in names}
    assert "| `service_idle_s` | Local provider: seconds the warm embedding service stays up unused" in reference()


def test_agent_options_list_the_registry_names():
    text = reference()
    search = text[text.index("### `agent-history search`") : text.index("### `agent-history session`")]
    assert "| `--agent, -a TEXT` | Only this harness (claude, codex, pi, gemini, opencode, cursor, copilot, " in search
