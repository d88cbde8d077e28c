"""``rummy_grpc``: the event-sourced gRPC game service (docs/architecture.md, "Service").

Layers: :mod:`~rummy_grpc.servicer` (thin: parse, call, map errors) over
:mod:`~rummy_grpc.app` (load/decide/append, bots, turn timers) over the pure core ``rummy``
and the event store ``rummy_store``. :mod:`~rummy_grpc.server` assembles the server with
health, reflection and the metrics interceptor; :mod:`~rummy_grpc.cli` holds the ``rummy
serve`` / ``export`` / ``replay`` subcommands.
"""

from rummy_grpc.codegen import ensure_generated

ensure_generated()  # a source checkout without `make proto` still works
