"""The read-only MCP server (docs/design.md §10): stdio transport, one guarded connection per tool call.

- `server`   — builds the `mcp` SDK server and registers the tools; `run()` serves stdio.
- `reader`   — opens a fresh connection as the reader role, runs the role `guard`, starts a
  read-only transaction with a statement timeout, and closes it after the call.
- `guard`    — refuses roles that could write or read server files (checks declared as data).
- `tools/`   — thin handlers: arguments → library call → compact JSON (`render`), every result
  naming the namespaces it covered (`scope`).
- `sqltool`  — the `sql` tool: one statement, extended protocol, ≤ 200 rows, cells ≤ 2,000 chars.
"""
