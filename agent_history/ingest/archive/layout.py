"""Where a copy lives in the archive (pure).

``<namespace>/<rel_path>.v<version>.<sha256 hex[:12]>.zst`` relative to the archive root: the
namespace keeps two homes of one harness apart, the home-relative path keeps the home's layout
readable by a person, the version and content hash make every copy's name unique (a grown file's
new copy never lands on its old one's name). Temporary files start with ``.tmp-`` in the same
directory (a rename within one filesystem is atomic). The manifest stores the name, so readers
never rebuild it from this rule.
"""

from __future__ import annotations

from pathlib import PurePosixPath

SUFFIX = ".zst"
TMP_PREFIX = ".tmp-"


def archive_file(namespace: str, rel_path: str, version: int, sha256: bytes) -> str:
    """The copy's path relative to the archive root (``/`` separators).

    Raises ValueError for a relative path that would leave its namespace directory (absolute, or
    with ``..``)."""
    rel = PurePosixPath(rel_path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ValueError(f"not a home-relative path: {rel_path!r}")
    if "/" in namespace or namespace in ("", ".", ".."):
        raise ValueError(f"not a namespace: {namespace!r}")
    return f"{namespace}/{rel_path}.v{version}.{sha256.hex()[:12]}{SUFFIX}"
