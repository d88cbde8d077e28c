# syntax=docker/dockerfile:1
# A Celery simulation worker: `rummy worker` (settings from RUMMY_BROKER_URL, RUMMY_RESULT_URL,
# ... see docs/tour.md "Configuration"). Scale with more containers/replicas, not bigger ones.
# Build from the repository root:  docker build -f deploy/worker.Dockerfile -t rummy-worker .

# BASE_IMAGE: the official Python image by default. Without a registry, deploy/local-base.sh
# builds an equivalent one from Debian packages (--build-arg BASE_IMAGE=localhost/rummy-local/python:3.11).
ARG BASE_IMAGE=python:3.11-slim

# ---- build: same wheel as the service image (gRPC code generated from proto/)
FROM ${BASE_IMAGE} AS build
# lets a cleanup find this stage's leftover images (tests/deploy/stack.py)
LABEL rummy.build-stage=worker
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
# the wheel build generates the gRPC code itself (setup.py runs
# services/rummy_grpc/codegen.py, the one place protoc runs; grpcio-tools is a build
# requirement in pyproject.toml)
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- runtime: the wheel with the worker extra, as an unprivileged user
FROM ${BASE_IMAGE}
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    PROMETHEUS_MULTIPROC_DIR=/tmp/rummy-metrics \
    RUMMY_BROKER_URL=redis://broker:6379/0 \
    RUMMY_RESULT_URL=redis://broker:6379/1
# the dependencies first, at the versions CI tests (constraints.txt): a layer that is rebuilt
# only when pyproject.toml or constraints.txt change, not on every source change
COPY pyproject.toml constraints.txt /tmp/deps/
RUN python -c "import tomllib; p = tomllib.load(open('/tmp/deps/pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['worker']))" > /tmp/deps/requirements.txt \
 && pip install -c /tmp/deps/constraints.txt -r /tmp/deps/requirements.txt && rm -rf /tmp/deps \
 && groupadd --system --gid 10001 rummy && useradd --system --uid 10001 --gid 10001 --no-create-home rummy
COPY --from=build /wheels /wheels
COPY constraints.txt /tmp/constraints.txt
RUN pip install -c /tmp/constraints.txt "$(ls /wheels/*.whl)[worker]" && rm -rf /wheels /tmp/constraints.txt
COPY deploy/healthcheck.py /usr/local/bin/rummy-healthcheck.py
USER 10001:10001
# 9101: Prometheus /metrics of all pool processes (multiprocess mode)
EXPOSE 9101
# The metrics endpoint is served by the worker's main process once it is up; a metrics-port
# probe is cheaper than `celery inspect ping`, which round-trips through the broker.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "/usr/local/bin/rummy-healthcheck.py", "http", "http://127.0.0.1:9101/metrics"]
ENTRYPOINT ["rummy"]
CMD ["worker", "--metrics-port", "9101"]
