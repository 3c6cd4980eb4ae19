"""Keyword search on the plain-PostgreSQL backend: BM25 ranking with IDF, OR-matching, phrases,
filters, scopes, candidate tiers and snippets — on synthetic catalogues with exact expectations."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest

from agent_history.db.bm25 import ensure_bm25_indexes
from agent_history.model import classes
from agent_history.search import fts, fts_candidates, fts_corpus, fts_phrase
from agent_history.search.keyword import search
from agent_history.search.query import analyze
from agent_history.search.request import HL_END, HL_START, Scope, SearchRequest
from tests.catalogue_rows import message, session, tool_call, write


def uids(db, query: str, **kw) -> list[str]:
    """Message/tool uids of the hits, best first."""
    with db.connect() as conn:
        hits = search(conn, SearchRequest(query, **kw))
        ids = {("message", h.id) for h in hits if h.kind == "message"}
        names = dict(
            conn.execute("SELECT id, message_uid FROM ah.message WHERE id = ANY(%s)", ([i for _, i in ids],)).fetchall()
        )
        tools = dict(conn.execute("SELECT id, tool_call_uid FROM ah.tool_call").fetchall())
    return [names[h.id] if h.kind == "message" else tools[h.id] for h in hits]


def test_a_rare_identifier_outranks_a_common_word_however_often_it_repeats(db):
    rows = [session("s1")]
    rows += [message(f"common{i}", "s1", "the build build build is green again", offset=i * 100) for i in range(30)]
    rows += [message("rare", "s1", "getUserById returns null for deleted users", offset=9000)]
    write(db.dsn, rows)
    assert uids(db, "getUserById build")[0] == "rare"


def test_three_of_four_question_words_outrank_one_word_repeated(db):
    rows = [session("s1")]
    # background so that every question word has the same document frequency (4)
    for i, w in enumerate(["cache", "eviction", "handle", "ttl"]):
        rows += [
            message(f"bg-{w}-{j}", "s1", f"{w} appears in passing here", offset=(i * 10 + j) * 100) for j in range(3)
        ]
    rows += [message("three", "s1", "the cache eviction policy respects the ttl", offset=10_000)]
    rows += [message("one", "s1", "handle handle handle handle the request", offset=10_100)]
    write(db.dsn, rows)
    got = uids(db, "how does cache eviction handle ttl")
    assert got[0] == "three"
    assert got.index("three") < got.index("one")


def test_a_missing_word_never_empties_the_result(db):
    write(db.dsn, [session("s1"), message("m1", "s1", "the cache ttl is five minutes")])
    assert uids(db, "what did we decide about the cache ttl xyzzyplugh") == ["m1"]
    assert uids(db, "xyzzyplugh") == []
    assert uids(db, "what is the") == []


def test_a_quoted_phrase_ranks_the_verbatim_occurrence_first(db):
    write(
        db.dsn,
        [
            session("s1"),
            message("scattered", "s1", "reset the connection, then the peer retries", offset=0),
            message("verbatim", "s1", "read failed: connection reset by peer", offset=100),
        ],
    )
    assert uids(db, '"connection reset by peer"') == ["verbatim", "scattered"]


def test_a_quoted_phrase_beats_any_score_without_it_even_across_a_hyphenated_word(db):
    rows = [session("s1")]
    rows += [
        message(f"dense{i}", "s1", "sidechain sidechain fixed fixed sidechain tests fixed", offset=i * 100)
        for i in range(5)
    ]
    rows += [message("verbatim", "s1", "We've fixed all the sidechain-related tests.", offset=9000)]
    write(db.dsn, rows)
    assert uids(db, '"fixed all the sidechain"')[0] == "verbatim"


def test_pasted_error_text_ranks_the_verbatim_occurrence_first(db):
    write(
        db.dsn,
        [
            session("s1"),
            message("scattered", "s1", "push failed after the refs were updated, some said", offset=0),
            message("verbatim", "s1", "error: failed to push some refs to origin " + "padding " * 30, offset=100),
        ],
    )
    assert uids(db, "failed to push some refs") == ["verbatim", "scattered"]


def _filter_corpus(db) -> None:
    write(
        db.dsn,
        [
            session("s-claude", cwd="/home/u/alpha"),
            message("c-prompt", "s-claude", "deploy the widget", cls="human_prompt", minutes=0, offset=0),
            message("c-reply", "s-claude", "the widget is deployed", minutes=1, offset=100),
            message("c-reason", "s-claude", "thinking about the widget", cls="reasoning", minutes=2, offset=200),
            tool_call(
                "c-tool",
                "s-claude",
                "Bash",
                '{"command": "deploy widget"}',
                "widget deployed ok",
                minutes=3,
                offset=300,
            ),
        ],
        path="/t/claude.jsonl",
    )
    write(
        db.dsn,
        [
            session("s-codex", agent="codex", cwd="/home/u/beta"),
            message(
                "x-prompt", "s-codex", "widget tests please", agent="codex", cls="human_prompt", minutes=60 * 24 * 3
            ),
        ],
        path="/t/codex.jsonl",
        namespace="codex-work",
        agent="codex",
    )


def test_default_search_covers_conversational_classes_only(db):
    _filter_corpus(db)
    assert sorted(uids(db, "widget")) == ["c-prompt", "c-reply", "x-prompt"]
    assert sorted(uids(db, "widget", classes=classes.ALL)) == ["c-prompt", "c-reason", "c-reply", "x-prompt"]
    assert sorted(uids(db, "widget", classes=classes.PROMPTS)) == ["c-prompt", "x-prompt"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"agents": ("codex",)}, ["x-prompt"]),
        ({"namespaces": ("claude-local",)}, ["c-prompt", "c-reply"]),
        ({"since": datetime(2025, 6, 2, tzinfo=UTC)}, ["x-prompt"]),
        ({"until": datetime(2025, 6, 1, 12, 1, tzinfo=UTC)}, ["c-prompt"]),
        ({"project": "/home/u/alpha"}, ["c-prompt", "c-reply"]),
        ({"project": "/home/u/al"}, []),
        ({"session": "s-codex"}, ["x-prompt"]),
    ],
)
def test_filters_restrict_the_candidates(db, filters, expected):
    _filter_corpus(db)
    assert sorted(uids(db, "widget", **filters)) == expected


def test_scopes_search_tool_io_and_merge_both_by_score(db):
    _filter_corpus(db)
    assert uids(db, "deployed", scope=Scope.TOOLS) == ["c-tool"]
    # "deployed" and "deploy" share the stem: the prompt matches too
    assert sorted(uids(db, "deployed", scope=Scope.ALL)) == ["c-prompt", "c-reply", "c-tool"]
    with db.connect() as conn:
        hit = search(conn, SearchRequest("deployed", scope=Scope.TOOLS))[0]
    assert (hit.kind, hit.label, hit.outcome, hit.namespace, hit.session_uid) == (
        "tool_call",
        "Bash",
        "ok",
        "claude-local",
        "s-claude",
    )


def test_hits_carry_provenance_and_a_highlighted_snippet(db):
    write(
        db.dsn,
        [
            session("s1", title="Fix the pool", cwd="/home/u/p"),
            message("m1", "s1", "We saw ECONNRESET from the pool under load.", offset=4242),
        ],
        path="/t/x.jsonl",
    )
    with db.connect() as conn:
        (hit,) = search(conn, SearchRequest("econnreset"))
    assert (hit.kind, hit.session_uid, hit.agent, hit.namespace, hit.label, hit.title, hit.cwd) == (
        "message",
        "s1",
        "claude",
        "claude-local",
        "assistant_text",
        "Fix the pool",
        "/home/u/p",
    )
    assert (hit.source_path, hit.byte_offset, hit.root_session_uid, hit.matched_terms) == ("/t/x.jsonl", 4242, "s1", 1)
    assert hit.snippet == f"We saw {HL_START}ECONNRESET{HL_END} from the pool under load."


def test_candidate_tiers_keep_all_term_matches_when_every_term_is_common(db, monkeypatch):
    rows = [session("s1")]
    rows += [message(f"a{i}", "s1", "alpha only here", offset=i) for i in range(20)]
    rows += [message(f"b{i}", "s1", "beta only here", offset=100 + i) for i in range(20)]
    rows += [message("both", "s1", "alpha and beta together", offset=50)]
    write(db.dsn, rows)
    monkeypatch.setattr(fts_candidates, "RARE_BUDGET", 0)
    monkeypatch.setattr(fts_candidates, "BUDGET", 5)
    assert uids(db, "alpha beta")[0] == "both"
    # a single common word still answers, newest matches first among equals
    assert len(uids(db, "alpha", limit=3)) == 3


def test_bm25_backend_without_its_indexes_falls_back_to_fts(db):
    write(db.dsn, [session("s1"), message("m1", "s1", "fallback works")])
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        assert ensure_bm25_indexes(conn) == []  # fts: no-op
        conn.execute("UPDATE ah.meta SET value = 'bm25' WHERE key = 'keyword_backend'")
        hits = search(conn, SearchRequest("fallback"))
    assert [(h.backend, h.session_uid) for h in hits] == [("fts", "s1")]


@pytest.mark.parametrize("autocommit", [False, True])
def test_search_leaves_the_callers_planner_settings_alone(db, autocommit):
    write(db.dsn, [session("s1"), message("m1", "s1", "planner settings")])
    with psycopg.connect(db.dsn, autocommit=autocommit) as conn:
        assert uids_of(search(conn, SearchRequest("planner"))) == [("message", "s1")]
        assert conn.execute("SHOW enable_indexscan").fetchone()[0] == "on"
        assert conn.execute("SHOW enable_bitmapscan").fetchone()[0] == "on"


def uids_of(hits) -> list[tuple[str, str]]:
    return [(h.kind, h.session_uid) for h in hits]


def _tier_corpus(db) -> None:
    """40 messages: every third holds both common words (ids ascending with the offset)."""
    rows = [session("s1")]
    for i in range(40):
        text = "alpha beta together" if i % 3 == 0 else ("alpha alone" if i % 2 else "beta alone")
        rows.append(message(f"m{i:02d}", "s1", text, offset=i * 10))
    write(db.dsn, rows)


def _scored(db, query: str) -> dict[int, tuple[float, int]]:
    req = SearchRequest(query, limit=2)
    with db.connect() as conn:
        analysis = analyze(query)
        lexemes, stats = fts_corpus.lexemes_for(conn, "message", analysis.term_texts(), analysis.term_weights())
        return fts.score_candidates(conn, req, analysis, "message", lexemes, stats)


def _newest_with_both(db, n: int) -> set[int]:
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT id FROM ah.message WHERE text = 'alpha beta together' ORDER BY id DESC LIMIT %s", (n,)
        ).fetchall()
    return {r[0] for r in rows}


@pytest.mark.parametrize(
    ("walk_rows", "window_factor"),
    [
        (20_000, 2.0),  # the walk covers the whole table
        (8, 0.5),  # the walk of the newest 8 ids finds 3, a GIN scan below them the other 2
        (0, 0.01),  # no walk: GIN windows widening from the newest 5 ids (2 found), then all
    ],
)
def test_a_tier_scores_exactly_its_newest_matches_however_it_scans(db, monkeypatch, walk_rows, window_factor):
    _tier_corpus(db)
    monkeypatch.setattr(fts_candidates, "RARE_BUDGET", 0)
    monkeypatch.setattr(fts_candidates, "BUDGET", 5)
    monkeypatch.setattr(fts_candidates, "WALK_ROWS", walk_rows)
    monkeypatch.setattr(fts_candidates, "WINDOW_FACTOR", window_factor)
    scored = _scored(db, "alpha beta")
    # one tier (both words): the 5 newest of the 14 messages holding both, each with both matched
    assert set(scored) == _newest_with_both(db, 5)
    assert {matched for _, matched in scored.values()} == {2}


def test_a_tier_leaves_the_callers_bitmap_and_index_scan_settings_after_a_walk(db, monkeypatch):
    _tier_corpus(db)
    monkeypatch.setattr(fts_candidates, "RARE_BUDGET", 0)
    monkeypatch.setattr(fts_candidates, "BUDGET", 5)
    with db.connect() as conn:
        conn.execute("SET enable_bitmapscan = on")
        assert len(uids_of(search(conn, SearchRequest("alpha beta", limit=3)))) == 3
        assert conn.execute("SHOW enable_bitmapscan").fetchone()[0] == "on"
        assert conn.execute("SHOW enable_indexscan").fetchone()[0] == "on"


def test_the_known_floor_is_just_below_the_needed_newest_known_match():
    scorer = fts_candidates.Scorer.__new__(fts_candidates.Scorer)
    # scored documents → how many tier lexemes they hold
    scorer.tier_matched = {10: 3, 20: 2, 30: 1, 40: 2, 50: 3}
    assert scorer._known_floor(2, 2, 60) == 39  # (39, 60] holds 50 and 40
    assert scorer._known_floor(2, 3, 45) == 9  # ≤ 45: 40, 20, 10
    assert scorer._known_floor(3, 3, 60) == 0  # only two hold 3
    assert scorer._known_floor(1, 1, 25) == 19


def test_the_deferred_phrase_bonus_decides_ties_in_the_order_of_the_final_sort(monkeypatch):
    # Two documents whose scores differ only in the last bits (a float sum in another order) are
    # a tie broken by the newest id: the newer one must be checked first, and it holds the phrase.
    checked: list[list[int]] = []

    def holders(conn, corpus, ids, phrase):
        checked.append(sorted(ids))
        return set(ids)

    monkeypatch.setattr(fts_phrase, "phrase_holders", holders)
    scored = {1: (10.0, 2), 2: (10.0 - 1e-12, 2)}
    fts_phrase.resolve_phrase(None, "tool_call", scored, {1, 2}, ("failed to push", 5.0), 1)
    assert checked == [[2]]
    assert scored[2] == (15.0 - 1e-12, 2)
    assert scored[1] == (10.0, 2)


def test_the_deferred_phrase_checks_near_copies_in_rounds_doubling_in_size(monkeypatch):
    # 100 candidates whose scores lie closer together than the bonus, none holding the phrase:
    # every one could reach the top 5, so all are checked — in 5 statements, not 20.
    checked: list[int] = []

    def holders(conn, corpus, ids, phrase):
        checked.append(len(ids))
        return set()

    monkeypatch.setattr(fts_phrase, "phrase_holders", holders)
    scored = {i: (10.0 + i / 1000, 3) for i in range(1, 101)}
    before = dict(scored)
    fts_phrase.resolve_phrase(None, "tool_call", scored, set(scored), ("failed to push", 5.0), 5)
    assert checked == [5, 10, 20, 40, 25]
    assert scored == before


def test_the_deferred_phrase_stops_once_the_top_holds_the_phrase(monkeypatch):
    # the 5 best hold the phrase: one round of 5 decides the top 5, the other 95 stay unchecked
    checked: list[list[int]] = []

    def holders(conn, corpus, ids, phrase):
        checked.append(sorted(ids))
        return set(ids)

    monkeypatch.setattr(fts_phrase, "phrase_holders", holders)
    scored = {i: (10.0 + i / 1000, 3) for i in range(1, 101)}
    fts_phrase.resolve_phrase(None, "tool_call", scored, set(scored), ("failed to push", 5.0), 5)
    assert checked == [[96, 97, 98, 99, 100]]
    assert scored[100] == (15.1, 3) and scored[95] == (10.095, 3)
