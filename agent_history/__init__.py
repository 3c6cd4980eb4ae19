"""agent-history: a PostgreSQL catalogue of coding-agent transcripts."""

__version__ = "0.1.0"
