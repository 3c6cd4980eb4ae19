"""The revision chain read without alembic (start-up cost) equals alembic's own reading of it."""

from __future__ import annotations

import subprocess
import sys

from agent_history.db.migrate import _config, head_revision, known_revisions, revision_graph


def test_the_chain_read_from_the_files_is_alembics():
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_config())
    assert head_revision() == script.get_current_head() == "0030_key_digests"
    assert known_revisions() == {s.revision for s in script.walk_revisions()}
    assert revision_graph() == {s.revision: s.down_revision for s in script.walk_revisions()}
    assert revision_graph()["0001_core"] is None and revision_graph()["0009_source_type"] == "0008_journal"


#: Modules a command imports when it runs, not at every command's start-up (CPU per start of
#: `agent-history --help`, min of 8 on the shared 2-core machine: 1.58 s → 0.74 s).
DEFERRED = ("alembic", "sqlalchemy", "httpx", "agent_history.embed.worker", "agent_history.journal.sync")


def test_starting_any_command_and_the_schema_check_skip_the_deferred_modules():
    code = (
        "import sys\n"
        "from agent_history.cli import app\n"
        "app._register()  # every command module, as main() does\n"
        "import agent_history.db.connection, agent_history.db.status\n"
        "from agent_history.db.migrate import head_revision\n"
        "head_revision()\n"
        f"deferred = {DEFERRED!r}\n"
        "print(sorted(m for m in sys.modules if any(m == d or m.startswith(d + '.') for d in deferred)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
