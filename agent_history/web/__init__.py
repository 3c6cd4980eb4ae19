"""`agent-history web`: a local, read-only web UI over the catalogue (issue 20).

Layout: `bind` (which host/port/token combinations may serve — pure), `app` (the Starlette app:
security headers, token, host check, one guarded reader connection per request), `routes` (one
handler per page), `queries` (the SQL the pages need beyond `agent_history.read`), `usage` (the
usage page's one query and its pure aggregation), `render` (Jinja2 environment, autoescaped;
snippet highlighting), `templates/`, `static/` (vendored uPlot; see static/README.md).

Every page reads through the reader role with the MCP server's role guard
(`agent_history.mcp.reader.guarded_connection`): nothing here can write. Curation actions
(delete/purge) are not part of this UI yet: the recall issue's CLI commands do not exist.
"""
