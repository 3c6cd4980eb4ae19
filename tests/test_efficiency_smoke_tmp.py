from tests.corpus_db import corpus_db  # noqa: F401
import psycopg

def test_smoke(corpus_db):
    with psycopg.connect(corpus_db.dsn) as conn:
        for r in conn.execute("SELECT agent, trigger, count(*) FROM ah.model_call GROUP BY 1,2 ORDER BY 1,2"):
            print(r)
        for r in conn.execute("SELECT agent, thread_role, count(*) FROM ah.session GROUP BY 1,2 ORDER BY 1,2"):
            print(r)
        for r in conn.execute("SELECT agent, count(*), count(output_byte_offset) FROM ah.tool_call GROUP BY 1"):
            print(r)
        for r in conn.execute("SELECT agent, record_type, record_origin, count(*) FROM ah.message GROUP BY 1,2,3 ORDER BY 1,2,3"):
            print(r)
