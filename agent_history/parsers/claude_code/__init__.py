"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`): `parser` (records →
rows), `text` (message content), `tools` (tool calls and results)."""
