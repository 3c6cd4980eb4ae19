"""`ah.skill_use` (sql/60_collector.sql) matches a `Skill` tool call to the installed skills of
the harness whose session made the call — read from the data (``tool_call.agent`` =
``installed_skill.harness``), not a literal ``'claude'``: two harnesses each with a skill named
``review``, one `Skill` call from each, give each call its own harness's skill."""

from __future__ import annotations

import json

from tests.catalogue_rows import session, tool_call, write

SKILLS = (("claude", "/h/.claude/skills/review/SKILL.md"), ("droid", "/h/.factory/skills/review/SKILL.md"))


def test_a_skill_call_uses_its_own_harness_skill(db):
    write(
        db.dsn,
        [session("s-claude"), tool_call("k1", "s-claude", "Skill", json.dumps({"skill": "review"}), "ok", offset=100)],
    )
    write(
        db.dsn,
        [
            session("s-droid", agent="droid"),
            tool_call("k2", "s-droid", "Skill", json.dumps({"command": "review"}), "ok", agent="droid", offset=10),
        ],
        path="/t/droid.jsonl",
        namespace="droid-local",
        agent="droid",
    )
    with db.connect() as conn:
        for harness, path in SKILLS:
            conn.execute(
                "INSERT INTO ah.installed_skill (harness, kind, scope, name, path) VALUES (%s, 'skill', 'user', 'review', %s)",
                (harness, path),
            )
        used = conn.execute(
            "SELECT k.harness, s.session_uid, u.uses FROM ah.skill_use u JOIN ah.installed_skill k ON k.id = u.skill_id "
            "JOIN ah.session s ON s.id = u.session_id ORDER BY 1"
        ).fetchall()
    assert used == [("claude", "s-claude", 1), ("droid", "s-droid", 1)]
