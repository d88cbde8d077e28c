"""deploy/compose.yaml: parses, every service is health-checked, the event store is durable
and separate from the broker, the workers scale, every referenced file exists, and both Redis
demand a password from a compose secret that only their clients hold."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
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


# --------------------------------------------------------------------------- secrets

#: Redis service -> the secret holding its password; client service -> variable -> secret
REDIS_SECRETS = {"redis-events": "redis_password", "broker": "broker_password"}
CLIENT_SECRETS = {
    "service": {"RUMMY_REDIS_PASSWORD_FILE": "redis_password",
                "RUMMY_ADMIN_TOKEN_FILE": "admin_token"},
    "worker": {"RUMMY_REDIS_PASSWORD_FILE": "redis_password",
               "RUMMY_BROKER_PASSWORD_FILE": "broker_password"},
}


def test_secret_files_are_gitignored_and_have_examples(compose: dict[str, Any]) -> None:
    secrets = compose["secrets"]
    assert set(secrets) == {"redis_password", "broker_password", "admin_token"}
    for name, spec in secrets.items():
        path = (DEPLOY / spec["file"]).resolve()
        assert path.parent == DEPLOY / "secrets" and path.name == name
        assert (path.parent / f"{name}.example").is_file()
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=REPO,
                                 check=False).returncode
        assert ignored == 0, f"{path} must be gitignored"
    assert (DEPLOY / "secrets" / "README.md").is_file()


@pytest.mark.parametrize("name", sorted(CLIENT_SECRETS))
def test_clients_read_passwords_and_tokens_from_secret_files(compose: dict[str, Any],
                                                             name: str) -> None:
    svc = compose["services"][name]
    env = svc["environment"]
    for var, secret in CLIENT_SECRETS[name].items():
        assert env[var] == f"/run/secrets/{secret}" and secret in svc["secrets"], var
    assert "RUMMY_ADMIN_TOKEN" not in env
    urls = [str(v) for k, v in env.items() if k.endswith("_URL")]
    urls += [p for p in map(str, svc["command"]) if "://" in p]
    assert urls and not any("@" in u for u in urls), "no password in a URL of compose.yaml"


@pytest.mark.parametrize("name", sorted(REDIS_SECRETS))
def test_redis_demands_the_password_of_its_secret(compose: dict[str, Any], name: str) -> None:
    svc = compose["services"][name]
    secret = REDIS_SECRETS[name]
    assert svc["secrets"] == [secret]
    assert svc["environment"]["REDIS_PASSWORD_SECRET"] == secret
    script = svc["entrypoint"][2]
    assert "requirepass $$(cat /run/secrets/$$REDIS_PASSWORD_SECRET)" in script
    assert '"$$@" - <<EOF' in script, "the password goes on stdin, not in argv"
    assert f"$$(cat /run/secrets/{secret})" in svc["healthcheck"]["test"][1]
    # only the services that need this Redis hold its password
    holders = {n for n, s in compose["services"].items() if secret in s.get("secrets", [])}
    assert holders == {name} | {c for c, v in CLIENT_SECRETS.items() if secret in v.values()}


@pytest.mark.needs_redis  # a local redis-server
def test_the_redis_entrypoint_starts_redis_with_the_password(compose: dict[str, Any],
                                                             tmp_path: Path) -> None:
    """The entrypoint script and health check, run with a local redis-server (compose's
    ``$$`` unescaped; the image's docker-entrypoint.sh only drops root, so it is left out)."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server is not installed")
    svc = compose["services"]["broker"]
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "broker_password").write_text("pw-from-a-secret\n", encoding="utf-8")

    def local(text: str) -> str:
        return (text.replace("$$", "$").replace("/run/secrets", str(secrets))
                .replace("docker-entrypoint.sh ", ""))

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    entry = [local(str(p)) for p in svc["entrypoint"]]
    flags = [str(p) for p in svc["command"]] + ["--port", str(port), "--dir", str(tmp_path),
                                                 "--bind", "127.0.0.1"]
    proc = subprocess.Popen([*entry, *flags], env={**os.environ, **svc["environment"]},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        check = local(svc["healthcheck"]["test"][1]).replace("redis-cli ping",
                                                            f"redis-cli -p {port} ping")
        for _ in range(100):
            if subprocess.run(["sh", "-c", check], check=False).returncode == 0:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the health check never passed")
        noauth = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                                text=True, check=False)
        assert "NOAUTH" in noauth.stdout + noauth.stderr
        assert "pw-from-a-secret" not in Path(f"/proc/{proc.pid}/cmdline").read_text(
            errors="replace")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _defaults(value: str) -> str:
    """``value`` with every ``${VAR:-default}`` replaced by its default (compose with none of
    the variables set)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def test_without_variables_users_get_the_official_images_and_ports(
        compose: dict[str, Any]) -> None:
    """The ``RUMMY_*`` variables (local stand-in images, moved ports: make deploy-test) change
    nothing for a user who sets none of them."""
    svc = compose["services"]
    images = {name: _defaults(s["image"]) for name, s in svc.items() if "image" in s}
    assert images["redis-events"] == images["broker"] == "redis:7.4-alpine"
    assert images["prometheus"].startswith("prom/prometheus:v")
    assert images["grafana"].startswith("grafana/grafana:")
    for name in ("service", "worker"):
        assert _defaults(svc[name]["build"]["args"]["BASE_IMAGE"]) == "python:3.11-slim"
    ports = {name: [_defaults(str(p)) for p in s.get("ports", [])] for name, s in svc.items()}
    assert ports["redis-events"] == ["127.0.0.1:6379:6379"]
    assert ports["service"] == ["50051:50051", "9100:9100"]
    assert ports["prometheus"] == ["9090:9090"] and ports["grafana"] == ["3000:3000"]


def test_service_and_workers_run_locked_down(compose: dict[str, Any]) -> None:
    """As in deploy/k8s: read-only root with a tmpfs /tmp, no capabilities, no privilege
    escalation (make deploy-test checks the running containers)."""
    for name in ("service", "worker"):
        s = compose["services"][name]
        assert s["read_only"] is True and s["tmpfs"][0] == "/tmp"
        assert s["cap_drop"] == ["ALL"] and "no-new-privileges:true" in s["security_opt"]
    worker = compose["services"]["worker"]
    cpus = float(worker["deploy"]["resources"]["limits"]["cpus"])
    cmd = worker["command"]
    assert int(cmd[cmd.index("--concurrency") + 1]) == cpus  # one pool process per CPU
    assert worker["deploy"]["mode"] == "replicated"
    # the metrics directory exists in one-off containers too (compose run worker batch ...)
    multiproc = compose["x-worker-env"]["PROMETHEUS_MULTIPROC_DIR"]
    assert multiproc in worker["tmpfs"]
