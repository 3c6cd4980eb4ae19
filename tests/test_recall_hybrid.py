"""Cross-agent exclusion happens before vector retrieval and fusion (issue 17): the recall home
embedded by the loopback server; the near-duplicate of the excluded agent never appears."""

from __future__ import annotations

import psycopg

from agent_history.embed.provider import OpenAIEmbedder
from agent_history.embed.worker import EmbedWorker
from agent_history.ingest.discovery import Source, agent_of_namespace, home_layout
from agent_history.ingest.loader import Loader
from agent_history.search.hybrid import run_search
from agent_history.search.request import SearchRequest
from tests.embed_corpus import *  # noqa: F403 - fixtures
from tests.recall_home import HEARTBEAT, UIDS, write_recall_home

QUERY = "make the heartbeat interval longer so the reconnect loop stops losing messages"


def test_excluded_agent_never_appears_in_vector_or_hybrid_results(db, own_tmp, embed_settings):
    home = own_tmp / "home"
    write_recall_home(home)
    with psycopg.connect(db.dsn, autocommit=True) as conn:
        Loader(conn).run([Source(ns, agent_of_namespace(ns), p) for ns, p in home_layout(home).items()])
        EmbedWorker(conn, embed_settings, OpenAIEmbedder(embed_settings)).run()
    with psycopg.connect(db.dsn) as conn:
        for mode in ("vector", "hybrid"):
            both = run_search(conn, SearchRequest(QUERY, limit=10), mode, embed_settings).hits
            dupes = {(h.agent, h.session_uid) for h in both if h.plain_snippet() == HEARTBEAT}
            assert dupes == {("pi", UIDS["P1"]), ("claude", UIDS["C1"])}, mode
            for excluded, kept in (("pi", "claude"), ("claude", "pi")):
                # limit 1: a post-filter would have dropped the excluded agent's copy and left nothing
                result = run_search(
                    conn, SearchRequest(QUERY, limit=1, exclude_agents=(excluded,)), mode, embed_settings
                )
                assert result.mode == mode and result.note is None
                assert [h.agent for h in result.hits] == [kept], (mode, excluded)
            wide = run_search(conn, SearchRequest(QUERY, limit=50, exclude_agents=("pi",)), mode, embed_settings).hits
            assert wide and {h.agent for h in wide} == {"claude"}
