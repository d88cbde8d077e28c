"""deploy/compose.yaml: parses, every service is health-checked, the event store is durable
and separate from the broker, the workers scale, and every referenced file exists."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .conftest import DEPLOY, REPO

REQUIRED = ("redis-events", "broker", "service", "worker", "prometheus", "grafana")


def _flag(command: Any, flag: str) -> str | None:
    """The value after ``flag`` in a compose command (list or string)."""
    parts = command if isinstance(command, list) else str(command).split()
    parts = [str(p) for p in parts]
    return parts[parts.index(flag) + 1] if flag in parts else None


def _dockerfile_healthcheck(svc: dict[str, Any]) -> bool:
    build = svc.get("build")
    if not isinstance(build, dict):
        return False
    path = (DEPLOY / build.get("context", ".") / build.get("dockerfile", "Dockerfile"))
    return path.is_file() and "\nHEALTHCHECK " in path.read_text(encoding="utf-8")


def test_compose_has_every_component(compose: dict[str, Any]) -> None:
    assert set(REQUIRED) <= set(compose["services"])


@pytest.mark.parametrize("name", REQUIRED)
def test_every_service_has_a_healthcheck(compose: dict[str, Any], name: str) -> None:
    svc = compose["services"][name]
    hc = svc.get("healthcheck")
    if hc is None:
        assert _dockerfile_healthcheck(svc), f"{name}: no healthcheck in compose or Dockerfile"
        return
    assert not hc.get("disable"), f"{name}: healthcheck disabled"
    test = hc["test"]
    assert isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL") and len(test) > 1


def test_event_store_redis_is_durable_and_never_evicts(compose: dict[str, Any]) -> None:
    cmd = compose["services"]["redis-events"]["command"]
    assert _flag(cmd, "--appendonly") == "yes"
    assert _flag(cmd, "--appendfsync") in ("everysec", "always")
    assert _flag(cmd, "--maxmemory-policy") == "noeviction"
    mounts = compose["services"]["redis-events"]["volumes"]
    assert any(str(m).endswith(":/data") for m in mounts), "AOF must live on a volume"


def test_celery_broker_is_not_the_event_store(compose: dict[str, Any]) -> None:
    env = compose["services"]["worker"]["environment"]
    host = re.match(r"^\w+://([^:/]+)", env["RUMMY_BROKER_URL"]).group(1)  # type: ignore[union-attr]
    assert host in compose["services"] and host != "redis-events"
    assert re.match(r"^\w+://([^:/]+)", env["RUMMY_RESULT_URL"]).group(1) != "redis-events"  # type: ignore[union-attr]
    assert env["RUMMY_EVENT_STORE_URL"].startswith("redis://redis-events:")
    service_store = _flag(compose["services"]["service"]["command"], "--redis-url")
    assert service_store is not None and service_store.startswith("redis://redis-events:")


def test_workers_scale_horizontally(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert worker["deploy"]["replicas"] >= 2
    assert "ports" not in worker, "published host ports would stop `--scale worker=N`"
    assert "container_name" not in worker
    assert _flag(worker["command"], "--metrics-port") is not None


def test_service_runs_rummy_serve_with_metrics(compose: dict[str, Any]) -> None:
    svc = compose["services"]["service"]
    assert svc["command"][0] == "serve"
    assert _flag(svc["command"], "--port") == "50051"
    assert _flag(svc["command"], "--metrics-port") is not None
    assert any(str(p).endswith(":50051") for p in svc["ports"])


def test_depends_on_and_builds_reference_real_things(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, svc in services.items():
        deps = svc.get("depends_on", [])
        for dep in (deps if isinstance(deps, list) else list(deps)):
            assert dep in services, f"{name} depends on unknown {dep}"
        if isinstance(deps, dict):
            for dep, cond in deps.items():
                if cond.get("condition") == "service_healthy":
                    assert "healthcheck" in services[dep] or _dockerfile_healthcheck(
                        services[dep]), f"{name} waits for {dep} to be healthy, no check"
        build = svc.get("build")
        if build:
            ctx = (DEPLOY / build["context"]).resolve()
            assert ctx == REPO, f"{name}: build context must be the repository root"
            assert (ctx / build["dockerfile"]).is_file()


def test_bind_mounted_files_exist(compose: dict[str, Any]) -> None:
    for name, svc in compose["services"].items():
        for mount in svc.get("volumes", []):
            src = str(mount).split(":")[0]
            if src.startswith("."):
                assert (DEPLOY / src).exists(), f"{name}: {src} is missing"
            else:
                assert src in compose.get("volumes", {}), f"{name}: undeclared volume {src}"
