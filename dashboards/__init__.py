"""Grafana dashboards generated from Python (docs/design.md §11): never edited in Grafana.

``python -m dashboards.generate`` (``just dashboards``) writes ``dashboards/*.json`` and the
Prometheus rule files under ``alerts/``; ``--check`` (``just check``) fails when a committed file
differs from what its builder produces.
"""
