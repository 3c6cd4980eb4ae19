"""`why SHA`: which session, tool call, prompt and sub-agent brief produced a commit.

A sha (7–40 hex digits) matches a git event when one is a prefix of the other (transcripts print
abbreviated shas; a user may paste the full one). For each match, commits before pushes:
- the session and the event's tool call (the command and the start of its output);
- the **last human prompt before it**, by byte order in the committing session's file; when
  the committing session is a sub-agent, its own transcript starts with the brief, so the prompt
  is the parent's last human prompt before the spawn (walking up to the root);
- the **sub-agent brief** when a sub-agent committed: the spawn whose ``child_session_id`` is the
  session, else whose ``spawn_uid`` is the session's ``spawn_uid`` (same agent).
`collected_commits(sha)` adds what `collect` read from the repositories (issue 30), so `why`
answers for a commit no agent printed: "in <repo>, authored by you/someone else at T; no
session made it". Several repositories may hold one commit — a repository and its linked
worktree (`git worktree add`, collected as a repository of its own) share their history, as do
two clones: `why_of` names the linked worktrees among them (`repos.git.work_tree`) and
`one_per_commit` groups them, so a commit is said once, in its main repository, naming the
others ("in /p/project (also the worktree /p/lane), …").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from agent_history.db.tables.merges import key_match
from agent_history.model import classes
from agent_history.model.rows import ToolCallRow
from agent_history.read.requests import WhyRequest
from agent_history.repos import git
from agent_history.session.exclusions import not_excluded
from agent_history.session.refs import SESSION_REF_COLUMNS, SESSION_REF_JOINS, SessionRef, session_ref
from agent_history.timestamps import minute

SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
MIN_SHA = 7
EXCERPT_CHARS = 1000


class BadSha(ValueError):
    """The argument is not 7–40 hex digits."""


@dataclass(slots=True)
class Excerpt:
    """A piece of transcript text with its place: session uid/thread, byte offset, timestamp."""

    text: str
    session_uid: str
    agent_id: str
    byte_offset: int | None
    ts: datetime | None
    truncated: bool = False


@dataclass(slots=True)
class CommitOrigin:
    """One git event matching the sha and what led to it."""

    op: str
    sha: str | None
    branch: str | None
    subject: str | None
    ts: datetime | None
    byte_offset: int | None
    session: SessionRef
    tool_name: str | None
    command: str | None
    output: str | None
    prompt: Excerpt | None
    brief: Excerpt | None
    subagent_type: str | None

    def as_dict(self) -> dict:
        """JSON-ready form."""
        d = asdict(self)
        d["session"] = self.session.as_dict()
        return d


def _cut(text: str | None, n: int = EXCERPT_CHARS) -> tuple[str | None, bool]:
    if text is None or len(text) <= n:
        return text, False
    return text[:n] + "…", True


def _prompt_before(conn: psycopg.Connection, session_id: int, byte_offset: int | None, source_id: int | None):
    """The last human prompt of `session_id` before `byte_offset` in file `source_id` (earlier
    files of a resumed session count as before)."""
    return conn.execute(
        """
        SELECT m.text, m.byte_offset, m.ts
        FROM ah.message AS m
        WHERE m.session_id = %(sid)s AND m.message_class = ANY(%(cls)s)
          AND (m.source_id < %(src)s OR (m.source_id = %(src)s AND m.byte_offset < %(off)s)
               OR %(off)s IS NULL)
        ORDER BY m.source_id DESC, m.byte_offset DESC NULLS LAST
        LIMIT 1
        """,
        {"sid": session_id, "cls": list(classes.PROMPTS), "src": source_id, "off": byte_offset},
    ).fetchone()


def _prompts_before(conn: psycopg.Connection, events: list[tuple[int, int | None, int | None]]) -> list:
    """`_prompt_before` of each ``(session_id, byte_offset, source_id)`` of `events`, in one
    statement (a sha printed in many sessions: one round trip, not one per event); the rows (or
    None) in the order of `events`."""
    if not events:
        return []
    sids, offs, srcs = (list(col) for col in zip(*events, strict=True))
    found = dict(
        (r[0], r[1:])
        for r in conn.execute(
            """
            SELECT q.ord, p.text, p.byte_offset, p.ts
            FROM unnest(%(sid)s::bigint[], %(src)s::bigint[], %(off)s::bigint[]) WITH ORDINALITY AS q(sid, src, off, ord)
            CROSS JOIN LATERAL (
                SELECT m.text, m.byte_offset, m.ts
                FROM ah.message AS m
                WHERE m.session_id = q.sid AND m.message_class = ANY(%(cls)s)
                  AND (m.source_id < q.src OR (m.source_id = q.src AND m.byte_offset < q.off) OR q.off IS NULL)
                ORDER BY m.source_id DESC, m.byte_offset DESC NULLS LAST
                LIMIT 1
            ) AS p
            """,
            {"sid": sids, "src": srcs, "off": offs, "cls": list(classes.PROMPTS)},
        )
    )
    return [found.get(i) for i in range(1, len(events) + 1)]


@dataclass(frozen=True, slots=True)
class _Spawn:
    brief: str | None
    description: str | None
    subagent_type: str | None
    byte_offset: int | None
    ts: datetime | None
    parent_id: int
    parent_source_id: int


def _spawn_of(conn: psycopg.Connection, session_id: int) -> _Spawn | None:
    """The spawn that started sub-agent session `session_id`, if known."""
    row = conn.execute(
        """
        SELECT p.brief, p.description, p.subagent_type, p.byte_offset, p.ts, p.session_id, p.source_id
        FROM ah.subagent_spawn AS p
        JOIN ah.session AS c ON c.id = %(sid)s
        WHERE p.child_session_id = c.id
           OR (p.child_session_id IS NULL AND c.spawn_uid IS NOT NULL
               AND p.agent = c.agent AND p.spawn_uid = c.spawn_uid)
        ORDER BY (p.child_session_id = c.id) DESC NULLS LAST, p.id
        LIMIT 1
        """,
        {"sid": session_id},
    ).fetchone()
    return _Spawn(*row) if row else None


def _thread(conn: psycopg.Connection, session_id: int) -> tuple[str, str]:
    row = conn.execute("SELECT session_uid, agent_id FROM ah.session WHERE id = %s", (session_id,)).fetchone()
    return (row[0], row[1]) if row else ("", "")


_UNKNOWN = object()
"""`_origin`'s `prompt` when the caller has not looked the prompt up."""


def _origin(conn: psycopg.Connection, ref: SessionRef, byte_offset: int | None, source_id: int | None, prompt=_UNKNOWN):
    """(prompt Excerpt | None, brief Excerpt | None, subagent type) for an event of `ref`.
    `prompt`: `_prompt_before` of the event when the caller looked it up already (a row or None;
    used when `ref` is not a sub-agent with a known spawn)."""
    spawn = _spawn_of(conn, ref.id) if ref.is_subagent else None
    if spawn is None:
        p = _prompt_before(conn, ref.id, byte_offset, source_id) if prompt is _UNKNOWN else prompt
        if p is None:
            return None, None, None
        text, cut = _cut(p[0] or "")
        return Excerpt(text, ref.session_uid, ref.agent_id, p[1], p[2], cut), None, None
    uid, aid = _thread(conn, spawn.parent_id)
    text, cut = _cut(spawn.brief or spawn.description or "")
    brief = Excerpt(text, uid, aid, spawn.byte_offset, spawn.ts, cut)
    # The prompt that led to the spawn: the spawning thread's last human prompt before it,
    # walking up through spawning threads (a sub-agent of a sub-agent) to the root.
    current, seen = spawn, {ref.id}
    while current is not None and current.parent_id not in seen:
        seen.add(current.parent_id)
        p = _prompt_before(conn, current.parent_id, current.byte_offset, current.parent_source_id)
        if p is not None:
            puid, paid = _thread(conn, current.parent_id)
            text, cut = _cut(p[0] or "")
            return Excerpt(text, puid, paid, p[1], p[2], cut), brief, spawn.subagent_type
        current = _spawn_of(conn, current.parent_id)
    return None, brief, spawn.subagent_type


def prompt_and_brief(
    conn: psycopg.Connection, ref: SessionRef, byte_offset: int | None, source_id: int | None
) -> tuple[Excerpt | None, Excerpt | None, str | None]:
    """For an event of session `ref` at `byte_offset` in file `source_id`: (the last human prompt
    before it, the sub-agent brief when `ref` is a sub-agent, its sub-agent type) — the rule of
    the module docstring, shared with `read.blame`."""
    return _origin(conn, ref, byte_offset, source_id)


_TOOL_CALL_OF_EVENT = key_match(ToolCallRow, "t", lambda c: f"g.{c}")
"""Join condition: tool call ``t`` is the one git event ``g`` names (digests compared too, so the
lookup uses the natural key's index: `merges.KEY_DIGESTS`)."""


def why(conn: psycopg.Connection, sha: str) -> list[CommitOrigin]:
    """Every git event matching `sha`, commits first, then by time; events of curated-out sessions
    (`search.filters.not_excluded`) are left out. Raises BadSha."""
    sha = sha.strip().lower()
    if not SHA.match(sha):
        raise BadSha(f"not a commit sha: {sha!r} (7–40 hex digits)")
    prefixes = [sha[:n] for n in range(MIN_SHA, len(sha) + 1)]
    rows = conn.execute(
        f"""
        SELECT g.op, g.sha, g.branch, g.subject, g.ts, g.byte_offset, g.source_id,
               t.name, t.input, t.output, {SESSION_REF_COLUMNS}
        FROM ah.git_event AS g
        JOIN ah.session AS s ON s.id = g.session_id
        {SESSION_REF_JOINS}
        LEFT JOIN ah.tool_call AS t ON {_TOOL_CALL_OF_EVENT}
        WHERE (g.sha LIKE %(like)s OR g.sha = ANY(%(prefixes)s)) AND {not_excluded("s")}
        ORDER BY (g.op = 'commit') DESC, g.ts NULLS LAST, g.id
        """,
        {"like": sha + "%", "prefixes": prefixes},
    ).fetchall()
    refs = [session_ref(r[10:]) for r in rows]
    top = [i for i, ref in enumerate(refs) if not ref.is_subagent]
    looked = dict(zip(top, _prompts_before(conn, [(refs[i].id, rows[i][5], rows[i][6]) for i in top]), strict=True))
    out = []
    for i, (r, ref) in enumerate(zip(rows, refs, strict=True)):
        op, gsha, branch, subject, ts, off, src, tname, tinput, toutput = r[:10]
        prompt, brief, subagent_type = _origin(conn, ref, off, src, looked.get(i, _UNKNOWN))
        out.append(
            CommitOrigin(
                op,
                gsha,
                branch,
                subject,
                ts,
                off,
                ref,
                tname,
                _cut(tinput, 2000)[0],
                _cut(toutput, 600)[0],
                prompt,
                brief,
                subagent_type,
            )
        )
    return out


@dataclass(slots=True)
class CollectedCommit:
    """A commit `collect` read from a repository (migration 0019), whatever the transcripts say."""

    repository: str
    sha: str
    subject: str
    committed_at: datetime
    authored_by_me: bool | None
    on_default_branch: bool
    reached_default_at: datetime | None
    task_ids: list[str]
    gone: bool = False
    """Whether `collect` marked the repository gone (no longer a work tree here; rows kept)."""
    worktree_of: str | None = None
    """The path of another repository holding this commit whose linked worktree this repository
    is (set by `why_of`; None otherwise)."""

    def sentence(self, *, sessions: Sequence[str], also: Sequence[CollectedCommit] = ()) -> str:
        """``in <repo>, authored by you at <T>; made in session <uid>`` — or ``made in 2 sessions:
        <uid>, <uid>`` or ``no session made it``, from `sessions`, the session uids of the commit's
        origins (`why`; repeats counted once). The author part says "someone else", or "an
        author not compared" without ``[identity] emails``. `also`: the other repositories
        holding the commit (`one_per_commit`), named after the repository: ``in <repo> (also the
        worktree <path> and <path> (gone)), …``."""
        who = {True: "you", False: "someone else", None: "an author not compared (no [identity] emails)"}
        uids = list(dict.fromkeys(sessions))
        if not uids:
            made = "no session made it"
        elif len(uids) == 1:
            made = f"made in session {uids[0]}"
        else:
            made = f"made in {len(uids)} sessions: {', '.join(uids)}"
        held = ""
        if also:
            places = [("the worktree " if o.worktree_of else "") + o.repository + " (gone)" * o.gone for o in also]
            held = f" (also {places[0] if len(places) == 1 else ', '.join(places[:-1]) + ' and ' + places[-1]})"
        return (
            f"in {self.repository}{held}, authored by {who[self.authored_by_me]} at "
            f"{minute(self.committed_at.astimezone(UTC))} UTC; {made}"
        )

    def as_dict(self) -> dict:
        d = asdict(self)
        d["committed_at"], d["reached_default_at"] = _iso(self.committed_at), _iso(self.reached_default_at)
        return d


def _iso(ts: datetime | None) -> str | None:
    return ts.isoformat() if ts else None


def collected_commits(conn: psycopg.Connection, sha: str) -> list[CollectedCommit]:
    """Collected commits whose sha starts with `sha`, one per repository holding it (gone ones
    too), by repository path; [] before migration 0019 or when none. Raises BadSha."""
    sha = sha.strip().lower()
    if not SHA.match(sha):
        raise BadSha(f"not a commit sha: {sha!r} (7–40 hex digits)")
    if conn.execute("SELECT to_regclass('ah.repo_commit')").fetchone()[0] is None:
        return []
    rows = conn.execute(
        """
        SELECT r.path, c.sha, c.subject, c.committed_at, c.authored_by_me, c.on_default_branch, c.reached_default_at,
               c.task_ids, r.gone
        FROM ah.repo_commit AS c JOIN ah.repository AS r ON r.id = c.repository_id
        WHERE c.sha LIKE %s ORDER BY r.path
        """,
        (sha + "%",),
    ).fetchall()
    return [CollectedCommit(*r) for r in rows]


def name_worktrees(collected: list[CollectedCommit]) -> None:
    """Set `CollectedCommit.worktree_of` of each commit in `collected` held by a linked worktree
    of another repository holding the same sha (`repos.git.work_tree` of each repository of a
    sha held more than once; a path that is no longer a work tree here, or where git fails,
    names nothing)."""
    paths: dict[str, set[str]] = {}
    for c in collected:
        paths.setdefault(c.sha, set()).add(c.repository)
    mains: dict[str, str | None] = {}
    for c in collected:
        if len(paths[c.sha]) < 2:
            continue
        if c.repository not in mains:
            try:
                where = git.work_tree(Path(c.repository))
            except git.GitError:  # git too slow there: the repository names no main one
                where = None
            linked = where is not None and where.linked and str(where.top) == c.repository
            mains[c.repository] = str(where.main) if linked else None
        main = mains[c.repository]
        c.worktree_of = main if main in paths[c.sha] else None


def one_per_commit(collected: list[CollectedCommit]) -> list[list[CollectedCommit]]:
    """`collected` grouped by sha (in the order first met), each group's main repository first:
    a live repository before a gone one, then one that is no other's linked worktree, then by
    path — the first is the one `CollectedCommit.sentence` speaks of, the rest its `also`."""
    groups: dict[str, list[CollectedCommit]] = {}
    for c in collected:
        groups.setdefault(c.sha, []).append(c)
    return [sorted(g, key=lambda c: (c.gone, c.worktree_of is not None, c.repository)) for g in groups.values()]


def why_of(conn: psycopg.Connection, req: WhyRequest) -> tuple[list[CommitOrigin], list[CollectedCommit]]:
    """The answer to a `read.requests.WhyRequest`: ``(origins, collected)`` — `why`'s git events
    of sessions in ``req.namespaces`` (every namespace when empty) and `collected_commits` — the
    one answer the CLI's ``why``, the MCP ``why`` tool and the web UI's ``/api/why`` give; the
    linked worktrees among the repositories named (`name_worktrees`)."""
    origins = why(conn, req.sha)
    if req.namespaces:
        origins = [o for o in origins if o.session.namespace in req.namespaces]
    collected = collected_commits(conn, req.sha)
    name_worktrees(collected)
    return origins, collected
