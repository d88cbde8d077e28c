# Manipulation Rummy — the targets CI and the README use.
# `make demo` sets everything up and runs the main job; `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
RUMMY  := $(VENV)/bin/rummy
STAMP  := $(VENV)/.installed

.PHONY: setup accel demo test test-fast test-slow node-deps chaos lint proto bench golden conformance clean help up down secrets audit deploy-test

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/:/'

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[service,worker,dev,fast,rl,ratings,report,tune]"
	@touch $(STAMP)

setup: $(STAMP) proto accel  ## create .venv, install everything, generate the gRPC code, compile the hot modules

accel: $(STAMP)  ## compile the hot pure modules with mypyc unless built for these sources (python -m rummy.accel)
	$(PY) -m rummy.accel build --optional

proto: $(STAMP)  ## generate services/rummy_api/v1/*_pb2*.py from proto/ (never edit those)
	$(PY) services/rummy_grpc/codegen.py

demo: setup  ## the main job: a 200-game, 4-player bot-versus-bot simulation
	$(RUMMY) simulate --games 200 --players 4 --seed 7

# test-fast's selection is by marker, not by directory, so it cannot drift: tests/conftest.py
# gives needs_redis to every test that needs a server (tests/unit/test_harness.py checks it)
FAST_MARKERS := not needs_redis and not slow and not chaos

test: setup node-deps  ## every test but the long slow/chaos ones (Redis at 127.0.0.1:6379, else a private redis-server)
	$(PY) -m pytest -q -m "not slow and not chaos"

test-slow: setup node-deps  ## the long tests: soaks, cluster, kills and floods (slow or chaos), with the chaos summary; CI runs them after make test
	$(PY) -m pytest -q -m "slow or chaos" -p no:randomly --timeout 600

test-fast: setup  ## every test that needs no server and is not slow or chaos (10 min on 2 busy cores)
	$(PY) -m pytest -q -m "$(FAST_MARKERS)"

# The Node.js client test's packages (tests/node/package-lock.json). Without npm: a note
# here, and the test skips; under CI=true a missing npm fails (here and in the test).
node-deps:
	@if command -v npm >/dev/null 2>&1; then \
	  [ tests/node/node_modules/.package-lock.json -nt tests/node/package-lock.json ] \
	    || npm ci --prefix tests/node --silent --no-audit --no-fund; \
	elif [ "$$CI" = "true" ] || [ "$$CI" = "1" ]; then \
	  echo "npm is not installed: CI needs it for the Node.js client test (apt-get install -y nodejs npm)" >&2; exit 1; \
	else \
	  echo "npm is not installed: tests/service/test_node_client.py will skip (apt-get install -y nodejs npm)" >&2; \
	fi

chaos: setup  ## fault and flood tests on real processes (Redis SIGKILL, dead replica, 1,000 streams, cancel storm, 10,000 malformed requests), with a summary table
	$(PY) -m pytest -q -m chaos -p no:randomly --timeout 300

conformance: setup  ## run every shared conformance case through the CLI
	$(RUMMY) conformance tests/conformance/cases/*.jsonl

lint: setup  ## ruff, mypy (strict on the core) and the import contract
	$(VENV)/bin/ruff check rummy rummy_cli rummy_env services/rummy_store services/rummy_grpc workers tests benchmarks examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

audit: setup  ## pip-audit every version in constraints.txt (fails on a known vulnerability)
	$(PY) .ci/audit.py

bench: setup  ## print the benchmark figures (see benchmarks/); installs the bench extra (OpenSpiel), h2load, and boardgame.io (npm ci) for bench_peer
	$(PY) -m pip install --quiet -c constraints.txt -e ".[bench]"
	@command -v h2load >/dev/null 2>&1 || { apt-get install -y -qq nghttp2-client >/dev/null 2>&1 \
	  || (apt-get update -qq && apt-get install -y -qq nghttp2-client) >/dev/null 2>&1 \
	  || echo "h2load (Debian's nghttp2-client) could not be installed: its rows are skipped"; }
	$(PY) benchmarks/bench_engine.py
	@command -v npm >/dev/null 2>&1 || { apt-get install -y -qq nodejs npm >/dev/null 2>&1 \
	  || (apt-get update -qq && apt-get install -y -qq nodejs npm) >/dev/null 2>&1 \
	  || echo "node/npm could not be installed: bench_peer (boardgame.io) is skipped"; }
	@if command -v npm >/dev/null 2>&1 && [ ! -d benchmarks/peer/node_modules ]; then \
	  (cd benchmarks/peer && npm ci --no-audit --no-fund --loglevel=error); fi
	@for b in benchmarks/bench_solver.py benchmarks/bench_env.py benchmarks/bench_service.py benchmarks/bench_peer.py benchmarks/bench_storage.py benchmarks/bench_workers.py benchmarks/bench_cluster.py; do \
	  if [ -f $$b ]; then $(PY) $$b; fi; done

golden: setup  ## regenerate the golden playthroughs in tests/golden/
	$(PY) tests/golden/regenerate.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache services/rummy_api/v1/*_pb2*

SECRETS := deploy/secrets/redis_password deploy/secrets/broker_password deploy/secrets/admin_token

secrets: $(SECRETS)  ## random Redis passwords and admin token for compose (kept if present)

deploy/secrets/%:
	@mkdir -p deploy/secrets && chmod 700 deploy/secrets
	@umask 022 && $(PYTHON) -c "import secrets; print(secrets.token_hex(24))" > $@
	@echo "wrote $@ (gitignored)"

up: secrets  ## start the whole stack with Docker (service, workers, Redis, Prometheus, Grafana)
	docker compose -f deploy/compose.yaml up -d --build

down:  ## stop the stack
	docker compose -f deploy/compose.yaml down

# The stack run for real with podman (no Docker engine needed): installs podman, runc and
# debootstrap if missing, builds Debian stand-ins for the registry images (deploy/local-base.sh),
# then tests/deploy/test_stack.py builds the service and worker images, starts compose.yaml
# with podman-compose and plays a game, runs batches, reads Prometheus and restarts each Redis.
deploy-test: setup secrets  ## build the images and test the compose stack under podman (root; about 3 minutes warm)
	deploy/podman-setup.sh
	$(PY) -m pip install --quiet -c constraints.txt -e ".[deploy]"
	deploy/local-base.sh
	RUMMY_BASE_IMAGE=localhost/rummy-local/python:3.11 RUMMY_REDIS_IMAGE=localhost/rummy-local/redis:7 \
	  RUMMY_PROMETHEUS_IMAGE=localhost/rummy-local/prometheus:2 \
	  $(PY) -m pytest -q -p no:randomly -m deploy --timeout 1800 -s tests/deploy/test_stack.py
