"""Markdown memory files (Codex ``memories/``, Claude Code project ``memory/``, configured roots)."""
