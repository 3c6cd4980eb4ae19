"""Metrics over OTLP (DESIGN §11): collectors, label policy, exporter bridge.

The metric families are declared once, in :mod:`agent_history.telemetry.families`; the
collectors, the exporter's label guard, ``docs/metrics.md``, the Grafana dashboards and the
Prometheus alert rules all read that declaration.
"""
