"""Alembic environment for the `ah` schema: raw-SQL revisions on a connection we provide.

`agent_history.db.migrate` passes an open SQLAlchemy connection in
``config.attributes["connection"]``; the version table is ``public.ah_alembic_version`` so that
downgrading to base (which drops schema `ah`) leaves alembic's bookkeeping intact.
"""

from alembic import context

VERSION_TABLE = "ah_alembic_version"

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `agent-history db upgrade`, not the alembic CLI")

context.configure(connection=connection, version_table=VERSION_TABLE, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
