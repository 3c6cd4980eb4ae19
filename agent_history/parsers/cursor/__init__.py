"""Cursor: ``~/.cursor/projects/<project>/agent-transcripts/**.jsonl``."""
