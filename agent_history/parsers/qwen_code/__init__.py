"""Qwen Code chat recordings (JSONL)."""
