"""Spec for the set-based SQL in `sql/20_pricing.sql` and `sql/30_postpass.sql`, on a real database.

- `ah.price_for` / `ah.call_cost_usd`: the name's price row (`ah.model_price_ref`), the latest
  row in effect, NULL when unknown; field case E11 costs $0.027765 at Sonnet 4.5 list prices.
- `ah.refresh_sessions(ids)`: lineage (parent/root over a 3-level tree, late parents, cycles),
  spawn → child in both directions, repo from cwd, rollups with NULL-not-zero, and a second run
  that changes no row (same xmin everywhere).

Rows are inserted directly with SQL; each test gets a fresh migrated database (`db` fixture).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import psycopg
import pytest
from psycopg import sql

from agent_history.db.migrate import apply_sql_files
from agent_history.db.prices import resolve_models, resolve_new_models

T0 = datetime(2025, 10, 14, 10, 0, tzinfo=UTC)


# --- helpers -----------------------------------------------------------------------------------


def insert(conn: psycopg.Connection, table: str, **cols) -> int:
    """INSERT one row into ah.<table>; returns its id."""
    query = sql.SQL("INSERT INTO ah.{} ({}) VALUES ({}) RETURNING id").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, cols)),
        sql.SQL(", ").join(sql.Placeholder() * len(cols)),
    )
    return conn.execute(query, list(cols.values())).fetchone()[0]


def source(conn: psycopg.Connection, name: str = "s.jsonl", agent: str = "claude") -> int:
    return insert(conn, "source_file", path=f"/home/u/{name}", namespace=f"{agent}-local", agent=agent)


def session(conn: psycopg.Connection, uid: str, agent_id: str = "", agent: str = "claude", **cols) -> int:
    return insert(conn, "session", agent=agent, session_uid=uid, agent_id=agent_id, namespace=f"{agent}-local", **cols)


def refresh(conn: psycopg.Connection, *ids: int) -> int:
    resolve_new_models(conn, list(ids))  # the post-pass records the model names before the rollup
    return conn.execute("SELECT ah.refresh_sessions(%s::bigint[])", (list(ids),)).fetchone()[0]


def row(conn: psycopg.Connection, query: str, *params):
    return conn.execute(query, params).fetchone()


def lineage(conn: psycopg.Connection, sid: int) -> tuple:
    return row(conn, "SELECT parent_session_id, root_session_id FROM ah.session WHERE id = %s", sid)


def xmins(conn: psycopg.Connection) -> dict[str, list]:
    """Row versions of every table the post-pass writes (a changed row gets a new xmin)."""
    return {
        t: conn.execute(f"SELECT id, xmin::text FROM ah.{t} ORDER BY id").fetchall()
        for t in ("session", "subagent_spawn", "repo")
    }


@pytest.fixture
def conn(db):
    with db.connect(autocommit=True) as c:
        yield c


# --- pricing -----------------------------------------------------------------------------------


def cost(conn, model, at, iu, cr, w5, w1, out):
    resolve_models(conn, [model] if model else [])
    return row(conn, "SELECT ah.call_cost_usd(%s, %s, %s, %s, %s, %s, %s)", model, at, iu, cr, w5, w1, out)[0]


def test_call_cost_e11_nested_cache_creation_at_sonnet_4_5_prices(conn):
    # E11: in 5, cw 3000 (5m 1000, 1h 2000), cr 20000, out 400 at $3 in / $15 out, ×1.25, ×2, ×0.1
    assert cost(conn, "claude-sonnet-4-5-20250929", T0, 5, 20000, 1000, 2000, 400) == Decimal("0.027765")


def test_call_cost_null_when_model_has_no_price(conn):
    assert cost(conn, "acme-proxy-large", T0, 100, 0, None, None, 10) is None
    assert cost(conn, "qwen2.5-coder:7b", T0, 100, 0, None, None, 10) is None
    assert cost(conn, None, T0, 100, 0, None, None, 10) is None
    assert cost(conn, "<synthetic>", T0, 0, 0, 0, 0, 0) is None
    reasons = dict(conn.execute("SELECT model, reason FROM ah.model_price_ref WHERE price_key IS NULL").fetchall())
    assert reasons["qwen2.5-coder:7b"] == "a local model (an Ollama name:tag)"
    assert reasons["acme-proxy-large"].startswith("a name no price list knows")
    assert reasons["<synthetic>"].startswith("Claude Code's name for a message it wrote itself")


def test_call_cost_null_when_every_count_is_null_else_nulls_count_as_zero(conn):
    assert cost(conn, "claude-sonnet-4-5", T0, None, None, None, None, None) is None
    assert cost(conn, "claude-sonnet-4-5", T0, None, None, None, None, 1_000_000) == Decimal("15")


def test_call_cost_cache_buckets_without_a_price_of_their_own_take_the_library_s_parent_rate(conn):
    # genai-prices prices gpt-5 with input 1.25, cached input 0.125, output 10 and no cache-write
    # price: a cache write is charged as input (its leaf rule), as calc_price does
    from genai_prices import Usage, calc_price

    got = cost(conn, "gpt-5-codex", T0, 1_000_000, 1_000_000, 5, None, 1_000_000)
    lib = calc_price(
        Usage(input_tokens=2_000_005, cache_read_tokens=1_000_000, cache_write_tokens=5, output_tokens=1_000_000),
        "gpt-5-codex",
        genai_request_timestamp=T0,
    ).total_price
    assert got == lib == Decimal("11.37500625")


def test_price_for_resolves_names_as_written_and_keeps_them(conn):
    def price(model):
        resolve_models(conn, [model])
        return row(conn, "SELECT (p).price_key, (p).input_per_mtok FROM ah.price_for(%s, '2026-01-01') p", model)

    assert price("claude-opus-4-5-20251101") == ("anthropic/claude-opus-4-5", Decimal("5"))
    assert price("claude-opus-4-1-20250805") == ("anthropic/claude-opus-4-1", Decimal("15"))
    assert price("Claude-Haiku-4-5-20251001") == ("anthropic/claude-haiku-4-5", Decimal("1"))
    assert price("openai/gpt-5.4") == price("gpt-5.4") == ("openai/gpt-5.4", Decimal("2.5"))
    assert (
        price("us.anthropic.claude-sonnet-4-5-20250929-v1:0")[0]
        == "aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0"
    )
    assert price("acme-proxy-large") == (None, None)
    names = [m for (m,) in conn.execute("SELECT model FROM ah.model_price_ref ORDER BY 1")]
    assert "Claude-Haiku-4-5-20251001" in names and "openai/gpt-5.4" in names  # the raw name is the key


def test_price_for_picks_latest_row_in_effect_and_falls_back_to_first(conn):
    for day, usd in (("2025-01-01", 1), ("2025-06-01", 2)):
        conn.execute(
            "INSERT INTO ah.model_pricing (price_key, effective_from, provider, model_id, origin, input_per_mtok, "
            "output_per_mtok, source) VALUES ('test/model-x', %s, 'test', 'model-x', 'ours', %s, %s, 'test')",
            (day, usd, usd),
        )
    conn.execute(
        "INSERT INTO ah.model_price_ref (model, price_key, matched_as, resolved_by) "
        "VALUES ('test-model-x', 'test/model-x', 'test', 'test')"
    )

    def price(at):
        return row(conn, "SELECT (ah.price_for('test-model-x', %s)).input_per_mtok", at)[0]

    assert price("2025-03-01") == 1
    assert price("2025-06-01") == 2
    assert price("2025-12-31") == 2
    assert price("2024-01-01") == 1  # before the first row: the first row
    assert price(None) == 2  # unknown day: today's price


def test_price_rows_name_their_source(conn):
    sources = {r[0] for r in conn.execute("SELECT DISTINCT source FROM ah.model_pricing WHERE origin = 'library'")}
    from agent_history.usage.prices import installed_version

    assert sources == {f"genai-prices {installed_version()}"}
    ours = [s for (s,) in conn.execute("SELECT source FROM ah.model_pricing WHERE origin = 'ours'")]
    assert ours  # the Sonnet 4 long-context tier (usage.prices.OWN_TIERS)
    for s in ours:  # each names the page its figures were read on, and the day
        assert re.search(r"https://\S+ \(retrieved \d{4}-\d{2}-\d{2}\)$", s), s


def test_reapplying_sql_files_and_reloading_prices_rewrites_no_price_row(db, conn):
    from agent_history.db.prices import load_prices

    query = "SELECT price_key, effective_from::text, xmin::text FROM ah.model_pricing ORDER BY 1, 2"
    before = conn.execute(query).fetchall()
    assert len(before) > 1000
    assert "20_pricing.sql" in apply_sql_files(db.dsn, force=True)
    with psycopg.connect(db.dsn) as c:
        load = load_prices(c)
    assert (load.written, load.deleted) == (0, 0)
    assert conn.execute(query).fetchall() == before


# --- lineage -----------------------------------------------------------------------------------


def test_lineage_three_level_claude_tree(conn):
    main = session(conn, "S1")
    sub = session(conn, "S1", "a1", is_subagent=True)  # Claude sub-agent file: no parent uid
    grand = session(conn, "S1", "b1", parent_session_uid="S1", parent_agent_id="a1")
    other_agent = session(conn, "S1", agent="codex")  # same uid, other harness: unrelated

    assert refresh(conn, main, sub, grand, other_agent) == 4

    assert lineage(conn, main) == (None, main)
    assert lineage(conn, sub) == (main, main)
    assert lineage(conn, grand) == (sub, main)
    assert lineage(conn, other_agent) == (None, other_agent)


def test_lineage_parent_indexed_after_child_relinks_child_and_descendants(conn):
    child = session(conn, "C", parent_session_uid="P", agent="codex")
    grand = session(conn, "G", parent_session_uid="C", agent="codex")
    refresh(conn, child, grand)
    assert lineage(conn, child) == (None, child)
    assert lineage(conn, grand) == (child, child)

    parent = session(conn, "P", agent="codex")
    refresh(conn, parent)  # only the newcomer is dirty

    assert lineage(conn, parent) == (None, parent)
    assert lineage(conn, child) == (parent, parent)
    assert lineage(conn, grand) == (child, parent)


def test_lineage_cycle_terminates_and_members_share_the_smallest_id(conn):
    below = session(conn, "X", parent_session_uid="B", agent="codex")  # smallest id, but not on the cycle
    a = session(conn, "A", parent_session_uid="B", agent="codex")
    b = session(conn, "B", parent_session_uid="A", agent="codex")

    refresh(conn, a, b, below)

    assert lineage(conn, a) == (b, min(a, b))
    assert lineage(conn, b) == (a, min(a, b))
    assert lineage(conn, below) == (b, min(a, b))


# --- spawn → child -----------------------------------------------------------------------------


def test_spawn_links_child_that_arrives_later(conn):
    src = source(conn)
    main = session(conn, "S1")
    spawn = insert(
        conn, "subagent_spawn", agent="claude", spawn_uid="toolu_1", session_id=main, source_id=src,
        child_session_uid="S1", child_agent_id="a1",
    )  # fmt: skip
    refresh(conn, main)
    assert row(conn, "SELECT child_session_id FROM ah.subagent_spawn WHERE id = %s", spawn) == (None,)

    child = session(conn, "S1", "a1")
    refresh(conn, child)  # only the child is dirty

    assert row(conn, "SELECT child_session_id FROM ah.subagent_spawn WHERE id = %s", spawn) == (child,)


def test_spawn_links_child_by_spawn_uid_when_child_key_unknown(conn):
    src = source(conn)
    child = session(conn, "T2", agent="codex", spawn_uid="call_9")
    parent = session(conn, "T1", agent="codex")
    spawn = insert(conn, "subagent_spawn", agent="codex", spawn_uid="call_9", session_id=parent, source_id=src)

    refresh(conn, parent)

    assert row(conn, "SELECT child_session_id FROM ah.subagent_spawn WHERE id = %s", spawn) == (child,)
    assert row(conn, "SELECT subagent_count FROM ah.session WHERE id = %s", parent) == (1,)


def test_subagent_count_is_children_plus_spawns_without_one_and_follows_a_late_child(conn):
    src = source(conn)
    main = session(conn, "S1")
    insert(conn, "subagent_spawn", agent="claude", spawn_uid="toolu_1", session_id=main, source_id=src,
           child_session_uid="S1", child_agent_id="a1")  # fmt: skip
    insert(conn, "subagent_spawn", agent="claude", spawn_uid="toolu_2", session_id=main, source_id=src)  # no child
    refresh(conn, main)
    assert row(conn, "SELECT subagent_count FROM ah.session WHERE id = %s", main) == (2,)

    spawned = session(conn, "S1", "a1")  # the spawn's transcript: counted once, not twice
    legacy = session(conn, "S1", "b2")  # a legacy agent-*.jsonl: no spawn names it
    refresh(conn, spawned, legacy)  # only the children are dirty: the parent's count follows

    assert lineage(conn, legacy) == (main, main)
    assert row(conn, "SELECT subagent_count FROM ah.session WHERE id = %s", main) == (3,)
    assert refresh(conn, main) == 1
    assert row(conn, "SELECT subagent_count FROM ah.session WHERE id = %s", main) == (3,)


# --- repo --------------------------------------------------------------------------------------


def test_repo_from_cwd_last_component_shared_and_null(conn):
    a = session(conn, "A", cwd="/home/user/my_proj.v2/sub-dir/")
    b = session(conn, "B", cwd="/home/user/my_proj.v2/sub-dir")
    none = session(conn, "N")

    refresh(conn, a, b, none)

    repos = conn.execute("SELECT id, root_path, name FROM ah.repo").fetchall()
    assert [(p, n) for _, p, n in repos] == [("/home/user/my_proj.v2/sub-dir", "sub-dir")]
    assert row(conn, "SELECT repo_id FROM ah.session WHERE id = %s", a) == (repos[0][0],)
    assert row(conn, "SELECT repo_id FROM ah.session WHERE id = %s", b) == (repos[0][0],)
    assert row(conn, "SELECT repo_id FROM ah.session WHERE id = %s", none) == (None,)


# --- rollup ------------------------------------------------------------------------------------


def populated_session(conn) -> int:
    """A session with 3 messages, 3 tool calls (2 errors), 3 model calls (1 API error), 2 spawns."""
    src = source(conn)
    sid = session(
        conn, "R1", cwd="/w/app", first_prompt="Review this diff for bugs", model="claude-sonnet-4-5-20250929"
    )
    for i, cls in enumerate(("human_prompt", "assistant_text", "queued_prompt")):
        insert(
            conn, "message", agent="claude", message_uid=f"m{i}", session_id=sid, namespace="claude-local",
            source_id=src, message_class=cls, text=f"text {i}", ts=T0 + timedelta(seconds=10 * i), byte_offset=i,
        )  # fmt: skip
    for i, (is_error, error_class) in enumerate(((False, None), (True, "nonzero_exit"), (None, "timeout"))):
        insert(
            conn, "tool_call", agent="claude", tool_call_uid=f"t{i}", session_id=sid, source_id=src,
            is_error=is_error, error_class=error_class,
        )  # fmt: skip
    calls = (  # E11's call, a call with unknown usage, an API-error notice (never counted)
        dict(call_uid="msg_E11A", model="claude-sonnet-4-5-20250929", input_uncached=5, cache_read=20000,
             cache_write_5m=1000, cache_write_1h=2000, output=400, reasoning=None, is_api_error=False),
        dict(call_uid="msg_B", model="claude-sonnet-4-5-20250929"),
        dict(call_uid="msg_err", model="<synthetic>", input_uncached=999, output=999, is_api_error=True),
    )  # fmt: skip
    for c in calls:
        insert(conn, "model_call", agent="claude", session_id=sid, source_id=src, ts=T0, **c)
    for i in range(2):
        insert(conn, "subagent_spawn", agent="claude", spawn_uid=f"toolu_{i}", session_id=sid, source_id=src)
    return sid


ROLLUP = (
    "SELECT message_count, prompt_count, tool_call_count, tool_error_count, model_call_count, subagent_count, "
    "input_uncached, cache_read, cache_write_5m, cache_write_1h, output, reasoning, cost_usd, title, duration_ms "
    "FROM ah.session WHERE id = %s"
)


def test_rollup_counts_tokens_cost_title_duration(conn):
    sid = populated_session(conn)

    assert refresh(conn, sid) == 1

    assert row(conn, ROLLUP, sid) == (
        3, 2,  # messages, prompts (human + queued)
        3, 2,  # tool calls, errors (is_error or error_class)
        2, 2,  # model calls without the API error, spawns
        5, 20000, 1000, 2000, 400, None,  # token buckets; nobody reported reasoning
        Decimal("0.027765"),
        "Review this diff for bugs",
        20_000,  # no started/ended: first to last message ts
    )  # fmt: skip
    assert row(conn, "SELECT rolled_up_at IS NOT NULL FROM ah.session WHERE id = %s", sid) == (True,)


def test_rollup_unknown_usage_is_null_not_zero(conn):
    src = source(conn)
    unknown = session(conn, "U")
    insert(
        conn, "model_call", agent="claude", call_uid="u1", session_id=unknown, source_id=src, model="claude-opus-4-5"
    )
    empty = session(conn, "E")

    refresh(conn, unknown, empty)

    assert row(conn, ROLLUP, unknown) == (0, 0, 0, 0, 1, 0, None, None, None, None, None, None, None, None, None)
    assert row(conn, ROLLUP, empty) == (0, 0, 0, 0, 0, 0, None, None, None, None, None, None, None, None, None)


def test_rollup_cost_null_when_no_call_is_priced(conn):
    src = source(conn, agent="codex")
    sid = session(conn, "C", agent="codex")
    insert(
        conn, "model_call", agent="codex", call_uid="c1", session_id=sid, source_id=src, model="acme-proxy-large",
        input_uncached=1300, cache_read=1200, output=420, reasoning=60,
    )  # fmt: skip

    refresh(conn, sid)

    assert row(conn, "SELECT input_uncached, cache_read, output, reasoning, cost_usd FROM ah.session WHERE id = %s", sid) == (
        1300, 1200, 420, 60, None,
    )  # fmt: skip


def test_rollup_cost_equals_sum_of_call_cost_per_model_and_day(conn):
    src = source(conn)
    sid = session(conn, "M", model="claude-haiku-4-5-20251001", started_at=T0)
    calls = (  # E11 on Sonnet 4.5; 1M in on Opus 4.5; unpriced; no model (session's); no ts (session start)
        dict(call_uid="k1", model="claude-sonnet-4-5-20250929", ts=T0, input_uncached=5, cache_read=20000,
             cache_write_5m=1000, cache_write_1h=2000, output=400),
        dict(call_uid="k2", model="claude-opus-4-5-20251101", ts=T0 + timedelta(days=80), input_uncached=1_000_000),
        dict(call_uid="k3", model="acme-proxy-large", ts=T0, input_uncached=1_000_000, output=1_000_000),
        dict(call_uid="k4", model=None, ts=T0, output=1_000_000),
        dict(call_uid="k5", model="claude-sonnet-4-5", ts=None, output=1_000_000),
    )  # fmt: skip
    for c in calls:
        insert(conn, "model_call", agent="claude", session_id=sid, source_id=src, **c)

    refresh(conn, sid)

    expected = row(
        conn,
        "SELECT round(sum(ah.call_cost_usd(coalesce(mc.model, s.model), coalesce(mc.ts, s.started_at), "
        "mc.input_uncached, mc.cache_read, mc.cache_write_5m, mc.cache_write_1h, mc.output)), 6) "
        "FROM ah.model_call mc JOIN ah.session s ON s.id = mc.session_id WHERE s.id = %s",
        sid,
    )[0]
    assert expected == Decimal("0.027765") + 5 + 5 + 15
    assert row(conn, "SELECT cost_usd FROM ah.session WHERE id = %s", sid) == (expected,)


def test_title_prefers_custom_then_ai_then_prompt_cut_to_200(conn):
    src = source(conn)
    custom = session(conn, "T1", custom_title="Mine", ai_title="AI", first_prompt="p")
    ai = session(conn, "T2", ai_title="AI", first_prompt="p")
    long = session(conn, "T3", first_prompt="x" * 500)
    from_message = session(conn, "T4")
    for i, (cls, text) in enumerate((("system_reminder", "noise"), ("human_prompt", "Fix the flaky test"))):
        insert(
            conn, "message", agent="claude", message_uid=f"t4-{i}", session_id=from_message, namespace="claude-local",
            source_id=src, message_class=cls, text=text, byte_offset=i,
        )  # fmt: skip

    refresh(conn, custom, ai, long, from_message)

    titles = dict(conn.execute("SELECT id, title FROM ah.session").fetchall())
    assert titles == {custom: "Mine", ai: "AI", long: "x" * 200, from_message: "Fix the flaky test"}


def test_duration_from_session_bounds_and_never_negative(conn):
    ok = session(conn, "D1", started_at=T0, ended_at=T0 + timedelta(minutes=2, milliseconds=5))
    backwards = session(conn, "D2", started_at=T0, ended_at=T0 - timedelta(seconds=1))

    refresh(conn, ok, backwards)

    assert row(conn, "SELECT duration_ms FROM ah.session WHERE id = %s", ok) == (120_005,)
    assert row(conn, "SELECT duration_ms FROM ah.session WHERE id = %s", backwards) == (None,)


# --- idempotence, entry point, view ------------------------------------------------------------


def test_second_refresh_changes_no_row(conn):
    sid = populated_session(conn)
    sub = session(conn, "R1", "a1", cwd="/w/app")
    src = source(conn, "t.jsonl")
    insert(
        conn, "subagent_spawn", agent="claude", spawn_uid="toolu_x", session_id=sid, source_id=src,
        child_session_uid="R1", child_agent_id="a1",
    )  # fmt: skip
    refresh(conn, sid, sub)
    before = xmins(conn)
    repo_seq = row(conn, "SELECT last_value FROM ah.repo_id_seq")

    assert refresh(conn, sid, sub) == 2

    assert xmins(conn) == before
    assert row(conn, "SELECT last_value FROM ah.repo_id_seq") == repo_seq


def test_refresh_ignores_unknown_ids(conn):
    sid = session(conn, "K")
    assert refresh(conn) == 0
    assert refresh(conn, 987654) == 0
    assert refresh(conn, sid, sid, 987654) == 1


def test_loader_entry_point_rolls_up_dirty_sessions_and_clears_marks(db):
    from agent_history.ingest.postpass import run_postpasses

    with db.connect() as c:
        sid = session(c, "L", cwd="/w/lib")
        c.execute("INSERT INTO ah.dirty_session (session_id) VALUES (%s), (987654)", (sid,))
        c.commit()

        assert run_postpasses(c) == 1

        assert row(c, "SELECT count(*) FROM ah.dirty_session") == (0,)
        assert row(c, "SELECT root_session_id, message_count FROM ah.session WHERE id = %s", sid) == (sid, 0)


def test_session_overview_totals_and_flags(conn):
    sid = populated_session(conn)
    sub = session(conn, "R1", "a1")
    refresh(conn, sid, sub)

    overview = (
        "SELECT tokens_total, cost_usd, is_subagent, root_session_id, repo_name FROM ah.session_overview WHERE id = %s"
    )
    assert row(conn, overview, sid) == (23405, Decimal("0.027765"), False, sid, "app")
    assert row(conn, overview, sub) == (None, None, True, sid, None)
