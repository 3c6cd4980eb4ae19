"""Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`): `parser` (records → rows),
`format` (record shapes and ids), `calls` (function/custom tool calls), `tools` (tool argument readers)."""
