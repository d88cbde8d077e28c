"""Bulk bot-versus-bot simulation on Celery (docs/architecture.md, Simulation).

Modules:
    batches: the batch spec, Redis key layout and batch state (chunks merged idempotently).
    chunks: one chunk of games, computed purely (no Celery): aggregate, paired A/B stats.
    paired: per-game paired statistics of an A/B batch and their confidence intervals.
    recording: sampled games written to the event store (``--record-every K``).
    metrics: Prometheus metrics in multiprocess mode.
    celery_app, tasks: the Celery app (settings from the environment) and the chunk task.
    output: the balance report as rich tables, JSON, CSV and self-contained HTML.
    cli: ``rummy worker`` and ``rummy batch ...`` sub-commands (``add_parsers``).

This package imports :mod:`rummy` and :mod:`rummy_store`; nothing imports it, and
:mod:`rummy` never imports Celery, Redis or Prometheus.
"""
