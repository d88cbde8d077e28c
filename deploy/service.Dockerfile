# syntax=docker/dockerfile:1
# The gRPC game service: `rummy serve` (rummy_api.v1.GameService + health + reflection).
# Build from the repository root:  docker build -f deploy/service.Dockerfile -t rummy-service .
# (deploy/service.Dockerfile.dockerignore keeps .venv, .git and caches out of the context.)

# ---- build: generate the gRPC code from proto/ (never committed) and build one wheel
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# the wheel build generates the gRPC code itself (setup.py runs
# services/rummy_grpc/codegen.py, the one place protoc runs; grpcio-tools is a build
# requirement in pyproject.toml)
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- runtime: the wheel with the service extra, as an unprivileged user
FROM python:3.11-slim
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    RUMMY_LOG_LEVEL=INFO
COPY --from=build /wheels /wheels
RUN pip install "$(ls /wheels/*.whl)[service]" && rm -rf /wheels \
 && useradd --system --uid 10001 --no-create-home rummy
COPY deploy/healthcheck.py /usr/local/bin/rummy-healthcheck.py
USER 10001
# 50051: gRPC; 9100: Prometheus /metrics
EXPOSE 50051 9100
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python", "/usr/local/bin/rummy-healthcheck.py", "grpc", "127.0.0.1:50051"]
ENTRYPOINT ["rummy"]
# Without --redis-url games live in memory; compose and k8s pass the event store's URL.
CMD ["serve", "--port", "50051", "--metrics-port", "9100"]
