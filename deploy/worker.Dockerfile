# syntax=docker/dockerfile:1
# A Celery simulation worker: `rummy worker` (settings from RUMMY_BROKER_URL, RUMMY_RESULT_URL,
# ... see docs/tour.md "Configuration"). Scale with more containers/replicas, not bigger ones.
# Build from the repository root:  docker build -f deploy/worker.Dockerfile -t rummy-worker .

# ---- build: same wheel as the service image (gRPC code generated from proto/)
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# the wheel build generates the gRPC code itself (setup.py runs
# services/rummy_grpc/codegen.py, the one place protoc runs; grpcio-tools is a build
# requirement in pyproject.toml)
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- runtime: the wheel with the worker extra, as an unprivileged user
FROM python:3.11-slim
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    PROMETHEUS_MULTIPROC_DIR=/tmp/rummy-metrics \
    RUMMY_BROKER_URL=redis://broker:6379/0 \
    RUMMY_RESULT_URL=redis://broker:6379/1
COPY --from=build /wheels /wheels
RUN pip install "$(ls /wheels/*.whl)[worker]" && rm -rf /wheels \
 && useradd --system --uid 10001 --no-create-home rummy
COPY deploy/healthcheck.py /usr/local/bin/rummy-healthcheck.py
USER 10001
# 9101: Prometheus /metrics of all pool processes (multiprocess mode)
EXPOSE 9101
# The metrics endpoint is served by the worker's main process once it is up; a metrics-port
# probe is cheaper than `celery inspect ping`, which round-trips through the broker.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "/usr/local/bin/rummy-healthcheck.py", "http", "http://127.0.0.1:9101/metrics"]
ENTRYPOINT ["rummy"]
CMD ["worker", "--metrics-port", "9101"]
