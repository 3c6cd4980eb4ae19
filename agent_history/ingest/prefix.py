"""Evidence that a file's indexed prefix is unchanged (docs/design.md §7, issue 10 defect 3).

Three kinds, from cheapest to complete; all are pure functions of the file's bytes and the offset
(never of batch boundaries), so indexing in one batch or many stores the same values:

- ``head`` / ``checkpoint``: sha256 of the first `HASH_WINDOW` bytes and of the `HASH_WINDOW`
  bytes before the offset (docs/design.md §7). An edit that changes the file's length shifts every byte
  after it, so it always reaches the checkpoint; only a *same-length* edit in the middle can hide.
- ``windows``: sha256 (first 16 hex digits) of `WINDOW_BYTES`-byte windows at every multiple of a
  stride inside the middle (between the head and the checkpoint), at most `MAX_WINDOWS` of them:
  the stride is the smallest `WINDOW_STRIDE` · 2^k that fits, so the windows sample
  ``WINDOW_BYTES / stride`` of the middle (25 % up to ~1.1 MB, 12.5 % up to ~2.2 MB, then halving
  as files double). When the stride doubles, the windows at even multiples are kept as they are.
  Checked every time a file grows: a same-length edit inside a window is caught then.
- ``crc``: CRC-32 of the whole prefix, extended batch by batch as the loader reads (the bytes are
  in memory anyway; `zlib.crc32` resumes from a saved value, which sha256 in hashlib cannot).
  Only `rebuild-check --verify` re-reads whole files to compare it: that finds any change,
  including a same-size edit that restored the mtime (1 in 2^32 random edits collide).

Stored in ``ah.source_file``: head_sha256, checkpoint_sha256, prefix_windows (jsonb
``{"w": bytes, "stride": bytes, "at": {"<offset>": "<16 hex>"}}``), prefix_crc32 (bigint).
"""

from __future__ import annotations

import hashlib
import zlib
from typing import BinaryIO

HASH_WINDOW = 64 * 1024
"""Bytes hashed at the head of a file and before its offset (docs/design.md §7)."""
WINDOW_BYTES = 4 * 1024
"""Bytes of one sampled window: one page, one read."""
WINDOW_STRIDE = 16 * 1024
"""Smallest distance between window starts (doubled until at most MAX_WINDOWS fit)."""
MAX_WINDOWS = 64
"""Windows per file: at most 64 reads of 4 KiB (256 KiB) when a file grows."""
CRC_CHUNK = 1024 * 1024
"""Read size when re-hashing a whole prefix."""


def edge_hashes(fh: BinaryIO, offset: int) -> tuple[str, str]:
    """(head, checkpoint) sha256 hex of the first and last `HASH_WINDOW` bytes before `offset`."""
    fh.seek(0)
    head = hashlib.sha256(fh.read(min(HASH_WINDOW, offset))).hexdigest()
    start = max(0, offset - HASH_WINDOW)
    fh.seek(start)
    ckpt = hashlib.sha256(fh.read(offset - start)).hexdigest()
    return head, ckpt


def window_positions(offset: int) -> tuple[int, list[int]]:
    """(stride, window start offsets) for a prefix of `offset` bytes: multiples of the stride
    with the whole window between the head and the checkpoint hashes; at most MAX_WINDOWS."""
    lo, hi = HASH_WINDOW, offset - HASH_WINDOW - WINDOW_BYTES  # window starts in [lo, hi]
    stride = WINDOW_STRIDE
    if hi < lo:
        return stride, []
    while hi // stride - (lo - 1) // stride > MAX_WINDOWS:
        stride *= 2
    first = -(-lo // stride) * stride
    return stride, list(range(first, hi + 1, stride))


def _window_hash(fh: BinaryIO, start: int, size: int) -> str:
    fh.seek(start)
    return hashlib.sha256(fh.read(size)).hexdigest()[:16]


def update_windows(fh: BinaryIO, offset: int, old: dict | None) -> dict:
    """Windows for a prefix of `offset` bytes, reusing the hashes of `old` (already verified)
    and reading only new windows. Returns the jsonb shape described in the module docstring."""
    stride, positions = window_positions(offset)
    known = old.get("at", {}) if isinstance(old, dict) and old.get("w") == WINDOW_BYTES else {}
    at = {}
    for p in positions:
        key = str(p)
        at[key] = known[key] if key in known else _window_hash(fh, p, WINDOW_BYTES)
    return {"w": WINDOW_BYTES, "stride": stride, "at": at}


def first_changed_window(fh: BinaryIO, windows: dict | None) -> int | None:
    """Start offset of the first stored window whose bytes changed, or None when all match."""
    if not isinstance(windows, dict):
        return None
    size = windows.get("w")
    if not isinstance(size, int) or size <= 0:
        return None
    for key, digest in sorted(windows.get("at", {}).items(), key=lambda kv: int(kv[0])):
        if _window_hash(fh, int(key), size) != digest:
            return int(key)
    return None


def prefix_change(
    fh: BinaryIO, offset: int, head: str | None, checkpoint: str | None, windows: dict | None
) -> str | None:
    """Why the first `offset` bytes of a file (at least `offset` long) differ from what was
    indexed, as a short phrase, or None when the head, checkpoint and windows all match."""
    now_head, now_ckpt = edge_hashes(fh, offset)
    if now_head != head:
        return f"the first {min(HASH_WINDOW, offset):,} bytes changed"
    if now_ckpt != checkpoint:
        return f"the {min(HASH_WINDOW, offset):,} bytes before byte {offset:,} changed"
    at = first_changed_window(fh, windows)
    if at is not None:
        return f"the window at byte {at:,} changed"
    return None


def extend_crc(data: bytes | memoryview, crc: int | None) -> int | None:
    """CRC-32 of the prefix extended by `data`; None stays None (no baseline)."""
    return None if crc is None else zlib.crc32(data, crc)


def crc_range(fh: BinaryIO, start: int, end: int, crc: int | None = 0) -> int | None:
    """Extend `crc` with the file's bytes [start, end); None when the file ends before `end`
    (or `crc` is None)."""
    if crc is None:
        return None
    fh.seek(start)
    pos = start
    while pos < end:
        chunk = fh.read(min(CRC_CHUNK, end - pos))
        if not chunk:
            return None
        crc = extend_crc(chunk, crc)
        pos += len(chunk)
    return crc
