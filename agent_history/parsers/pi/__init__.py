"""pi sessions (`~/.pi/agent/sessions/**.jsonl`): `parser` (entries → rows), `tools` (content
parts and tool calls)."""
