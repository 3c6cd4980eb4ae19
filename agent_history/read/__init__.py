"""Read API over the catalogue: sessions, a session's timeline, `why SHA`, `touched PATH`.

Functions take an open connection and return dataclasses with ``as_dict()``; the CLI renders
them and the MCP server returns them. Read-only: safe on the ``ah_reader`` role.
"""
