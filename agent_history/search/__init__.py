"""Search: keyword (ParadeDB BM25 | PostgreSQL FTS with BM25 ranking), query analysis, evaluation."""
