"""Run an `agent-history` command in this process with the loader's client work timed by phase
(`just bench-profile`; a measurement, not a test).

    AH_PROFILE_PHASES=out.json python -m benchmarks.client_phases index

The command is the real one (`agent_history.cli.app.main`); before it runs, the functions that
mark a phase boundary are wrapped with timers. Each phase gets *exclusive* wall and CPU seconds
(``time.thread_time`` of the calling thread; a wrapped call inside another is subtracted from the
outer one), summed over threads — the parse thread and the writer thread overlap, so wall times
add up to more than the elapsed time. Phases (DESIGN §7's pipeline):

| phase | what is timed |
|---|---|
| read | ``chunks.read_batch`` — complete lines read from the file |
| hash | prefix hashes and CRC of what was read (``edge_hashes``, ``update_windows``, CRCs) |
| decode | ``orjson.loads`` of each line (`parsers.common.lines`) |
| parse | ``feed_bytes`` — the harness parser turning records into rows, less decode |
| search text | the search-text analysis of messages and tool calls (`ingest.search_ready`), as a batch is encoded (or in the parse workers) |
| row build | ``writer.encode_parts`` less the below: row value lists, Jsonb, COPY text encoding (in the parsing thread) |
| fold | ``writer._fold_parts`` — merging re-observed rows across a batch |
| send | ``Copy.write`` / end of COPY — writing the encoded rows to the socket (the writer thread) |
| wait | ``Connection.wait`` outside a COPY — the server executing merges, commits, post-passes |
| other | the rest of ``Loader.run`` / ``BatchWriter._write`` (discovery, stat, state, bookkeeping) |

The wrappers cost about a microsecond per call (one per line decoded, one per row sent); the
profile reports the whole-process CPU of the same run beside the phases.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import defaultdict
from functools import wraps


class Phases:
    """Exclusive wall/CPU seconds per phase, nested calls subtracted from their callers."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._local = threading.local()
        self._lock = threading.Lock()

    def _stack(self) -> list[list]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def enter(self, phase: str) -> None:
        """Start timing `phase` in this thread."""
        self._stack().append([phase, time.perf_counter(), time.thread_time(), 0.0, 0.0])

    def exit(self) -> None:
        """Stop the innermost phase of this thread; charge its exclusive time."""
        phase, w0, c0, child_w, child_c = self._stack().pop()
        w, c = time.perf_counter() - w0, time.thread_time() - c0
        with self._lock:
            self.wall[phase] += w - child_w
            self.cpu[phase] += c - child_c
            self.calls[phase] += 1
        stack = self._stack()
        if stack:
            stack[-1][3] += w
            stack[-1][4] += c

    def current(self) -> str | None:
        """The innermost phase of this thread, if any."""
        stack = self._stack()
        return stack[-1][0] if stack else None

    def wrap(self, owner: object, name: str, phase: str, *, materialise: bool = False, unless: str | None = None):
        """Replace ``owner.name`` by a timed version charging `phase` (a generator's items are
        collected into a list when `materialise`; calls made inside phase `unless` are charged
        to it, not to `phase`)."""
        fn = getattr(owner, name)

        @wraps(fn)
        def timed(*args, **kwargs):
            if unless is not None and self.current() == unless:
                return fn(*args, **kwargs)
            self.enter(phase)
            try:
                out = fn(*args, **kwargs)
                return list(out) if materialise else out
            finally:
                self.exit()

        setattr(owner, name, timed)

    def as_dict(self) -> dict:
        """JSON-ready: {phase: {wall_s, cpu_s, calls}}."""
        return {
            p: {"wall_s": round(self.wall[p], 3), "cpu_s": round(self.cpu[p], 3), "calls": self.calls[p]}
            for p in self.wall
        }


class _TimedOrjson:
    """Stands in for the ``orjson`` module inside `parsers.common.lines`: ``loads`` is timed."""

    def __init__(self, phases: Phases) -> None:
        import orjson

        self._orjson = orjson
        self._phases = phases

    def __getattr__(self, name: str):
        return getattr(self._orjson, name)

    def loads(self, data):
        self._phases.enter("decode")
        try:
            return self._orjson.loads(data)
        finally:
            self._phases.exit()


def install(phases: Phases) -> None:
    """Wrap the phase boundaries (see the module docstring)."""
    import psycopg

    from agent_history.ingest import batch_writer, chunks, loader, writer
    from agent_history.parsers.common import lines

    phases.wrap(loader.Loader, "run", "other")
    phases.wrap(batch_writer.BatchWriter, "_write", "other")
    phases.wrap(chunks, "read_batch", "read")
    for name in ("edge_hashes", "update_windows", "extend_crc", "crc_range"):
        phases.wrap(chunks, name, "hash")
    phases.wrap(chunks, "feed_bytes", "parse", materialise=True)
    lines.orjson = _TimedOrjson(phases)
    phases.wrap(writer, "encode_parts", "row build")
    phases.wrap(writer, "_fold_parts", "fold")
    from agent_history.ingest import search_ready

    phases.wrap(search_ready, "ready", "search text")  # what `analysis_of` and `prepare_map` call
    phases.wrap(psycopg.Copy, "write", "send")
    phases.wrap(psycopg.Copy, "__exit__", "send")
    phases.wrap(psycopg.Connection, "wait", "wait", unless="send")


def main() -> None:
    """Run the CLI with `sys.argv[1:]`; write the phases to ``$AH_PROFILE_PHASES``."""
    phases = Phases()
    install(phases)
    from agent_history.cli.app import main as cli

    sys.argv = ["agent-history", *sys.argv[1:]]
    started = time.perf_counter()
    try:
        cli()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    finally:
        out = os.environ.get("AH_PROFILE_PHASES")
        if out:
            usage = os.times()
            with open(out, "w") as fh:
                json.dump(
                    {
                        "phases": phases.as_dict(),
                        "elapsed_s": round(time.perf_counter() - started, 3),
                        "process_cpu_s": round(usage.user + usage.system, 3),
                    },
                    fh,
                )
    sys.exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    main()
