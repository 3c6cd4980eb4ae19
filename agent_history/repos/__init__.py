"""Reading repositories (issue 30): `git` plumbing output with fixed formats, and Backlog.md.

- `repos.git`: runs ``git`` (never porcelain meant for people: every command names its
  ``--format``; ``-z`` where a path may hold anything) and returns its bytes; `GitError` when a
  command fails. The only module here that starts a process; nothing here opens a database.
- `repos.log`: parses those outputs into `Commit` / `Push` values, the trailers a commit may keep,
  and when each commit reached the default branch — pure.
- `repos.backlog`: Backlog.md task files (YAML frontmatter) and status histories — pure.
The collector that writes them is `agent_history.ingest.collect`.
"""
