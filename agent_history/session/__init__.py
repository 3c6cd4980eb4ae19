"""The session vocabulary every reader shares: how a session is named, which sessions are curated
out, and the filters a session listing takes (docs/design.md §3, the floor below `read/` and
`search/`).

- `session.refs`: a session named by its uid or a unique prefix (`resolve_session`,
  `MIN_UID_PREFIX`; a hexadecimal one in any case: `uid_spellings`), the `SessionRef` that names it back, and the lookup errors.
- `session.exclusions`: the SQL conditions "not curated out" (``ah.session_exclusion``).
- `session.filters`: agent / namespace / time / project conditions of a session listing,
  `like_prefix`, and the namespaces of a scope with nothing catalogued.

Everything here takes an open connection (owner or ``ah_reader``) or returns SQL text for one;
nothing writes. `read/`, `search/`, `ingest/curation`, the MCP tools and the web pages import
these names from here.
"""
