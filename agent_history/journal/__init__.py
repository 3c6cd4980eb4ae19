"""journal-sync: session summaries copied in from an external journal database (read-only).

``rows`` is pure (validation of the exported rows), ``source`` reads a SQLite file or a
PostgreSQL database without writing to it, ``sync`` writes one pass into ``ah`` in one
transaction, ``status`` reads the last pass back.
"""
