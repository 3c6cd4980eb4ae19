"""The archive: compressed, verified, versioned copies of every transcript (docs/design.md §18).

Agents delete their own transcripts (Claude Code after ``cleanupPeriodDays``, 30 by default);
the archive keeps them. `archive_pass` (`agent-history archive`, and `index --archive` in the
indexer service) copies every file discovery finds in the configured homes — every harness and
source kind of the registry — into the archive root (``[archive] path``, default
``<data dir>/archive``):

- **What is copied** (`plan`): a file with no copy yet; a file whose size or mtime changed since
  its copy (a database: its file or its ``-wal``), judged by kind — a JSONL file that grew with
  its copied bytes as its prefix (`ingest.prefix` evidence: head, checkpoint and sampled windows),
  a document that did not shrink, a database snapshot with no table losing rows *replace* the
  copy of their version; anything else (shrunk, rewritten, older than the copy) becomes the next
  *version* beside the old copy, which is never touched. A change of mtime alone (same bytes) only
  updates the manifest.
- **How** (`copy`): zstd (pyzstd) into a temporary file in the destination directory, fsync, the
  temporary file decompressed and hashed — the copy counts only when its size and sha256 are the
  source bytes' — then linked to its final name (never over an existing file), the directory
  fsynced, and only then the manifest row written (`manifest`, table ``ah.archive_copy``). A
  SQLite database is copied from a snapshot taken with the sqlite3 backup API (consistent, WAL
  included), never from its file.
- **Where** (`layout`): ``<namespace>/<home-relative path>.v<version>.<sha256[:12]>.zst``; each
  manifest row stores its own ``archive_file``, so a later layout (a host directory) adds rows
  without moving a file.
- **Reading it back** (`restore`): `rebuild` and `rebuild-check` treat the archive as a cold tier:
  a catalogued file missing from its home is found there; `rebuild` decompresses the chosen
  version of each missing file (the newest verified version that is not a truncation of another)
  into a staging home and reads it like any home, recording the rows under the original path.
- **Checking it** (`verify`): `archive --verify` re-hashes every copy.
- **Warning about deletion** (`retention`): a harness whose row declares a retention setting
  (Claude Code's ``cleanupPeriodDays``) gets a warning when it is unset or below 90 days.
"""
