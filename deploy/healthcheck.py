"""Container health probe (stdlib + grpcio-health-checking; no downloaded binaries).

Usage::

    python healthcheck.py grpc [HOST:PORT] [SERVICE]   # grpc.health.v1 Check == SERVING
    python healthcheck.py http [URL]                   # HTTP 200 (e.g. a /metrics endpoint)

Exit status 0 when healthy, 1 when not (the reason on stderr), 2 on bad usage: what Docker's
``HEALTHCHECK`` and compose ``healthcheck`` expect. Defaults: ``127.0.0.1:50051`` and the
overall server health (service ``""``); ``http://127.0.0.1:9101/metrics``. Each probe gives up
after ``RUMMY_HEALTH_TIMEOUT`` seconds (default 3).
"""

from __future__ import annotations

import os
import sys
import urllib.request


def check_grpc(target: str = "127.0.0.1:50051", service: str = "",
               timeout: float = 3.0) -> str | None:
    """``None`` if the gRPC health service at ``target`` reports ``service`` SERVING, else
    the reason (status name or RPC error)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as e:
            return f"{e.code().name}: {e.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return None


def check_http(url: str = "http://127.0.0.1:9101/metrics", timeout: float = 3.0) -> str | None:
    """``None`` if ``url`` answers HTTP 200, else the reason."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return None if r.status == 200 else f"HTTP {r.status}"
    except OSError as e:
        return str(e)


def main(argv: list[str]) -> int:
    """Run the probe named by ``argv[0]``; returns the exit status."""
    timeout = float(os.environ.get("RUMMY_HEALTH_TIMEOUT") or 3)
    if not argv or argv[0] not in ("grpc", "http"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "grpc":
        problem = check_grpc(*argv[1:3], timeout=timeout)
    else:
        problem = check_http(*argv[1:2], timeout=timeout)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
