"""Helpers every harness parser shares: JSONL lines, coercion, timestamps, shell commands and
patches, git output, error classes, file touches. Pure; no file or database I/O."""
