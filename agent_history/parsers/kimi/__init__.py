"""Kimi Code CLI agent journals (wire.jsonl) and session state documents: see `parser`."""
