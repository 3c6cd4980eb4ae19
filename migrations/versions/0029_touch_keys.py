"""Natural keys and parser state (docs/performance.md, decision 15): a file touch keyed by a 16-byte
digest of its key instead of the key's text; a Claude Code file's remembered record uuids as
8-byte digests.

``ah.key_digest(text) → uuid``: the first 16 bytes of the SHA-256 of the text (UTF-8), as a
``uuid``. A touch's key ``touch_uid`` is ``<tool call uid>:<op>:<path>``
(`parsers.common.shell.touch_uid`; 106 bytes on average on the shared corpus), and those three
parts are columns of the row already: the table keeps ``touch_key = ah.key_digest(touch_uid)``
only, the natural key becomes ``(agent, touch_key)`` (constraint ``file_touch_natural_key``), and
the loader's merges compute the digest of the staged key (`db.tables.merges.KEY_DIGESTS`). The
column changes type in place (``ALTER … TYPE uuid USING``: one rewrite of the table, its indexes
rebuilt), then is renamed. ×10: the key 1.33 → 0.38 MB, the column 0.95 MB → 0.14 MB. Two keys of
one agent share a digest with probability ≈ n² / 2¹²⁹ — SHA-256, not MD5, so no known way to make
one on purpose either.

``source_file.parser_state`` of a Claude Code file: its ``seen`` list (the file's last 256 record
uuids as JSON strings, 0.53 MB at ×10) becomes ``seen_digests``, the base64 of the first 8 bytes
of each uuid's SHA-256 end to end, oldest first — what `parsers.claude_code.parser.uuid_digest`
computes and the parser saves from now on (it still reads a ``seen`` list).

Downgrade: ``touch_uid`` is computed again from the row's columns as `touch_uid` builds it (a key
the value limits had shortened — over 512 bytes — comes back unshortened); the digests of the
parser state cannot be turned back into uuids, so ``seen`` comes back empty (a summary whose
leaf was read before the downgrade titles its session through the loader's leaf lookup only).

Revision ID: 0029_touch_keys
Revises: 0027_ingest
Create Date: 2026-12-03
"""

from alembic import op

revision = "0029_touch_keys"
down_revision = "0028_term_ids"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION ah.key_digest(k text) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.encode(pg_catalog.substr(pg_catalog.sha256(pg_catalog.convert_to(k, 'UTF8')), 1, 16), 'hex')::pg_catalog.uuid;

ALTER TABLE ah.file_touch ALTER COLUMN touch_uid TYPE uuid USING ah.key_digest(touch_uid);
ALTER TABLE ah.file_touch RENAME COLUMN touch_uid TO touch_key;

UPDATE ah.source_file AS f
SET parser_state = (f.parser_state - 'seen') || pg_catalog.jsonb_build_object('seen_digests', coalesce(d.packed, ''))
FROM (
    SELECT s.id,
           pg_catalog.translate(pg_catalog.encode(pg_catalog.string_agg(
               pg_catalog.substr(pg_catalog.sha256(pg_catalog.convert_to(u.uid #>> '{}', 'UTF8')), 1, 8), ''::bytea
               ORDER BY u.n), 'base64'), E'\n', '') AS packed
    FROM ah.source_file AS s
    LEFT JOIN LATERAL pg_catalog.jsonb_array_elements(s.parser_state -> 'seen') WITH ORDINALITY AS u(uid, n)
        ON pg_catalog.jsonb_typeof(u.uid) = 'string'
    WHERE s.agent = 'claude' AND pg_catalog.jsonb_typeof(s.parser_state -> 'seen') = 'array'
    GROUP BY s.id
) AS d
WHERE d.id = f.id;
"""

DOWNGRADE = r"""
UPDATE ah.source_file
SET parser_state = (parser_state - 'seen_digests') || '{"seen": []}'::jsonb
WHERE agent = 'claude' AND parser_state ? 'seen_digests';

ALTER TABLE ah.file_touch RENAME COLUMN touch_key TO touch_uid;
ALTER TABLE ah.file_touch ALTER COLUMN touch_uid TYPE text USING
    coalesce(tool_call_uid, 'None') || ':' || op || ':'
    || CASE WHEN pg_catalog.length(path) > 512
            THEN pg_catalog.left(path, 256) || '#'
                 || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(path, 'UTF8')), 'hex'), 16)
            ELSE path END;

DROP FUNCTION IF EXISTS ah.key_digest(text);
"""


def upgrade() -> None:
    op.get_bind().exec_driver_sql(UPGRADE)


def downgrade() -> None:
    op.get_bind().exec_driver_sql(DOWNGRADE)
