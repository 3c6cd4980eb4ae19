"""A real OTLP/HTTP metrics receiver on loopback for the telemetry tests.

Decodes each POST body as an ``ExportMetricsServiceRequest`` (opentelemetry-proto) and keeps
it. ``hang=True`` accepts requests and never answers them until :meth:`close`.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)


@dataclass(frozen=True)
class Point:
    """One received data point: metric name, OTLP data kind, labels, value, temporality."""

    name: str
    kind: str  # gauge | sum
    labels: tuple[tuple[str, str], ...]
    value: float
    temporality: int | None  # AggregationTemporality enum value for sums
    monotonic: bool | None


class Receiver:
    """``with Receiver() as r:`` — ``r.endpoint`` is the base URL, ``r.requests`` the decoded
    requests in arrival order, ``r.arrived`` set at the first request, ``r.paths`` the paths."""

    def __init__(self, *, hang: bool = False):
        self.requests: list[ExportMetricsServiceRequest] = []
        self.paths: list[str] = []
        self.arrived = threading.Event()
        self._release = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                req = ExportMetricsServiceRequest()
                req.ParseFromString(body)
                with receiver._lock:
                    receiver.requests.append(req)
                    receiver.paths.append(self.path)
                receiver.arrived.set()
                if hang:
                    receiver._release.wait()
                    return
                out = ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


def resource_attributes(req: ExportMetricsServiceRequest) -> list[dict[str, str]]:
    """The resource attributes of each ResourceMetrics in `req`."""
    return [{a.key: a.value.string_value for a in rm.resource.attributes} for rm in req.resource_metrics]


def points(req: ExportMetricsServiceRequest) -> list[Point]:
    """Every data point of `req`, flattened."""
    out = []
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for dp in data.data_points:
                    value = dp.as_double if dp.WhichOneof("value") == "as_double" else dp.as_int
                    labels = tuple(sorted((a.key, a.value.string_value) for a in dp.attributes))
                    temporality = data.aggregation_temporality if kind == "sum" else None
                    monotonic = data.is_monotonic if kind == "sum" else None
                    out.append(Point(m.name, kind, labels, value, temporality, monotonic))
    return out


def values(req: ExportMetricsServiceRequest, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Labels → value for one metric of `req`."""
    return {p.labels: p.value for p in points(req) if p.name == name}
