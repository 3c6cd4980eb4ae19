"""`skills`, `permissions`, `closeouts` (issue 30): thin, over `read.installed`; what `collect`
read of the harnesses' configuration and the loops' charters and closeouts. Each exits 1 when
it has nothing to show: before any `collect` it says to run it, after one it says where `collect`
looked (the harness registry's installed places) and found none."""

from __future__ import annotations

import typer

from agent_history.cli.app import app
from agent_history.cli.context import database
from agent_history.cli.output import console, count, print_json
from agent_history.cli.tables import compact_table
from agent_history.harnesses import HARNESSES
from agent_history.timestamps import minute

NOTHING = "nothing collected: run `agent-history collect`"


def _none_found(what: str, repositories: int | None, in_repository: str, in_homes: str = "") -> str:
    """The line for an empty list: `NOTHING` before any `collect` (`repositories` None), else
    what was looked for where: `in_repository` (paths in each collected repository) and
    `in_homes` (paths in the harness homes, when `collect` reads them)."""
    if repositories is None:
        return NOTHING
    homes = f" and in the harness homes ({in_homes})" if in_homes else ""
    return (
        f"no {what} found: `collect` looked in {count(repositories, 'collected repository', 'collected repositories')} "
        f"({in_repository}){homes}"
    )


def _print(text: str) -> None:
    console.print(text, soft_wrap=True, highlight=False, markup=False)


@app.command("skills")
def skills_cmd(
    agent: str = typer.Option(None, "--agent", "-a", help="Only this harness."),
    gone: bool = typer.Option(False, "--gone", help="Also skills and plugins no longer installed."),
    sessions: bool = typer.Option(
        False, "--sessions", help="Under each skill, every session that invoked it (uid, agent, uses, last use, title)."
    ),
    json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Installed skills and plugins (name, source, version or SKILL.md hash) and the sessions that used them."""
    from agent_history.cli.options import _agents
    from agent_history.read.installed import collected_repositories, invoked_skills, list_skills

    if agent is not None:
        (agent,) = _agents([agent])  # an unknown agent is a usage error (exit 2)
    with database().connect() as conn:
        rows = list_skills(conn, harness=agent, include_gone=gone)
        collected = bool(rows) or bool(list_skills(conn, harness=None, include_gone=True))
        invoked: dict[tuple[str, str, str, str], list] = {}
        for i in invoked_skills(conn, harness=agent, include_gone=gone) if sessions and rows else []:
            invoked.setdefault((i.harness, i.kind, i.name, i.path), []).append(i)
        repositories = None if rows or collected else collected_repositories(conn)
    if json:
        skills = [r.as_dict() for r in rows]
        if sessions:
            for r, d in zip(rows, skills, strict=True):
                d["invoked"] = [
                    {k: v for k, v in i.as_dict().items() if k not in ("harness", "kind", "name", "path")}
                    for i in invoked.get((r.harness, r.kind, r.name, r.path), [])
                ]
        print_json({"skills": skills})
    elif not rows and collected:  # the filters (an agent, installed only) leave nothing
        _print("no skill or plugin matches" + ("" if gone else " (`--gone` lists those no longer installed)"))
    elif not rows:
        places = [h for h in HARNESSES if h.installed is not None]
        in_homes = ", ".join(
            [f"{h.name} {d}/" for h in places for d in h.installed.user_skills]
            + [f"{h.name} {path}" for h in places for path, _ in h.installed.plugins]
        )
        in_repository = ", ".join(dict.fromkeys(f"{d}/" for h in places for d in h.installed.project_skills))
        _print(_none_found("skill or plugin", repositories, in_repository, in_homes))
    else:
        table = compact_table("agent", "kind", "scope", "name", "source", "version", "sessions", "last used")
        for r in rows:
            version = (r.version or "-")[:12]
            where = r.scope + (f" {r.repository}" if r.repository else "") + (" (gone)" if r.gone else "")
            last = minute(r.last_used_at) if r.last_used_at else "-"
            table.add_row(r.harness, r.kind, where, r.name, r.source or "-", version, f"{r.sessions:,}", last)
        console.print(table)
        for r in rows if sessions else []:
            uses = invoked.get((r.harness, r.kind, r.name, r.path), [])
            _print(f"{r.harness} {r.kind} {r.name}: " + (count(len(uses), "session") if uses else "never invoked"))
            for i in uses:
                last = minute(i.last_used_at) if i.last_used_at else "-"
                title = f"  {i.title}" if i.title else ""
                _print(f"  {i.session_uid}  {i.agent}  {count(i.uses, 'use')}  {last}{title}")
    if not rows:
        raise typer.Exit(1)


@app.command("permissions")
def permissions_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Allow/deny/ask rules of the harnesses' settings files, beside the denials transcripts record."""
    from agent_history.read.installed import collected_repositories, permission_view

    with database().connect() as conn:
        rules, denials = permission_view(conn)
        repositories = None if rules else collected_repositories(conn)
    if json:
        print_json({"rules": [r.as_dict() for r in rules], "denials": [d.as_dict() for d in denials]})
    else:
        if rules:
            table = compact_table("agent", "scope", "list", "rule", "denied")
            for r in rules:
                denied = "-" if r.denials is None else f"{r.denials:,}"  # an execpolicy rule names no tool
                table.add_row(r.harness, r.scope, r.list, r.rule, denied)
            console.print(table)
        else:
            places = [h for h in HARNESSES if h.installed is not None]
            files = [(h.name, f) for h in places for f in h.installed.permissions]
            in_repository = ", ".join(dict.fromkeys(f.path for _, f in files if f.scope != "user"))
            in_homes = ", ".join(f"{name} {f.path}" for name, f in files if f.scope == "user")
            _print(_none_found("permission rule", repositories, in_repository, in_homes))
        if denials:
            _print("denied tool calls in transcripts:")
            table = compact_table("agent", "tool", "denied", "sessions", "last")
            for d in denials:
                last = minute(d.last_at) if d.last_at else "-"
                table.add_row(d.agent, d.tool or "-", f"{d.denials:,}", f"{d.sessions:,}", last)
            console.print(table)
    if not rules and not denials:
        raise typer.Exit(1)


@app.command("closeouts")
def closeouts_cmd(json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Loop charters and closeouts in the collected repositories: path, SHA-256, first line, mtime (never the body)."""
    from agent_history.read.installed import collected_repositories, loop_files
    from agent_history.repos.git import LOOP_FILES_PATHSPEC

    with database().connect() as conn:
        rows = loop_files(conn)
        repositories = None if rows else collected_repositories(conn)
    if json:
        print_json({"files": [r.as_dict() for r in rows]})
    elif not rows:
        pathspec = LOOP_FILES_PATHSPEC.removeprefix(":(glob)")
        _print(
            _none_found(
                "loop charter or closeout",
                repositories,
                f"{pathspec}: closeouts codex/closeout-<date>-loop<N>.md and the charters beside them",
            )
        )
    for r in [] if json else rows:
        gone = " (gone)" if r.gone else ""
        _print(f"{r.kind} {r.repository}/{r.path}{gone}  {minute(r.mtime)}  {count(r.size_bytes, 'byte')}")
        _print(f"  sha256 {r.sha256}")
        _print(f"  {r.first_line}")
    if not rows:
        raise typer.Exit(1)
