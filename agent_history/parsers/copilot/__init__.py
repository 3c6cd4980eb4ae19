"""GitHub Copilot CLI: ``session-state/**/events.jsonl`` (events) and legacy
``history-session-state/*.json`` (legacy document)."""
