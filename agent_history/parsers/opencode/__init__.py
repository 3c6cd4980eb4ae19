"""OpenCode: SQLite database (`opencode.db`), the older `storage/` JSON tree, `opencode export` documents."""
