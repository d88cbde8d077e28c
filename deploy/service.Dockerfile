# syntax=docker/dockerfile:1
# The gRPC game service: `rummy serve` (rummy_api.v1.GameService + health + reflection).
# Build from the repository root:  docker build -f deploy/service.Dockerfile -t rummy-service .
# (deploy/service.Dockerfile.dockerignore keeps .venv, .git and caches out of the context.)

# BASE_IMAGE: the official Python image by default. Without a registry, deploy/local-base.sh
# builds an equivalent one from Debian packages (--build-arg BASE_IMAGE=localhost/rummy-local/python:3.11).
ARG BASE_IMAGE=python:3.11-slim

# ---- build: generate the gRPC code from proto/ (never committed) and build one wheel
FROM ${BASE_IMAGE} AS build
# lets a cleanup find this stage's leftover images (tests/deploy/stack.py)
LABEL rummy.build-stage=service
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# the wheel build generates the gRPC code itself (setup.py runs
# services/rummy_grpc/codegen.py, the one place protoc runs; grpcio-tools is a build
# requirement in pyproject.toml)
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- runtime: the wheel with the service extra, as an unprivileged user
FROM ${BASE_IMAGE}
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    RUMMY_LOG_LEVEL=INFO
# the dependencies first, at the versions CI tests (constraints.txt): a layer that is rebuilt
# only when pyproject.toml or constraints.txt change, not on every source change
COPY pyproject.toml constraints.txt /tmp/deps/
RUN python -c "import tomllib; p = tomllib.load(open('/tmp/deps/pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['service']))" > /tmp/deps/requirements.txt \
 && pip install -c /tmp/deps/constraints.txt -r /tmp/deps/requirements.txt && rm -rf /tmp/deps \
 && groupadd --system --gid 10001 rummy && useradd --system --uid 10001 --gid 10001 --no-create-home rummy
COPY --from=build /wheels /wheels
COPY constraints.txt /tmp/constraints.txt
RUN pip install -c /tmp/constraints.txt "$(ls /wheels/*.whl)[service]" && rm -rf /wheels /tmp/constraints.txt
COPY deploy/healthcheck.py /usr/local/bin/rummy-healthcheck.py
USER 10001:10001
# 50051: gRPC; 9100: Prometheus /metrics
EXPOSE 50051 9100
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python", "/usr/local/bin/rummy-healthcheck.py", "grpc", "127.0.0.1:50051"]
ENTRYPOINT ["rummy"]
# Without --redis-url games live in memory; compose and k8s pass the event store's URL.
CMD ["serve", "--port", "50051", "--metrics-port", "9100"]
