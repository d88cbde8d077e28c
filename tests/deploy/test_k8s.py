"""deploy/k8s: every manifest parses; the kustomize base and the dev overlay render (when
``kubectl`` is installed); the rendered objects have gRPC probes, resource limits, a durable
event store, a horizontally scaled worker and scrape annotations."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import DEPLOY, load_yaml, load_yaml_all, yaml

K8S = DEPLOY / "k8s"
BASE = K8S / "base"
KUSTOMIZATIONS = [BASE, K8S / "overlays" / "dev"]
EXTERNAL = K8S / "overlays" / "external-redis"


def _base_objects() -> list[dict[str, Any]]:
    """The base's resources, read directly (no kustomize needed)."""
    kust = load_yaml(BASE / "kustomization.yaml")
    return [d for r in kust["resources"] for d in load_yaml_all(BASE / r)]


def _render(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    out = subprocess.run([kubectl, "kustomize", str(path)], check=False, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def _get(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    assert found, f"no {kind} {name}"
    return found[0]


def _container(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]["containers"][0]


@pytest.fixture(params=["files", "base", "dev"])
def objects(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The base read from its files, the rendered base, and the rendered dev overlay."""
    if request.param == "files":
        return _base_objects()
    return _render(BASE if request.param == "base" else K8S / "overlays" / "dev")


def test_every_manifest_parses() -> None:
    files = sorted(K8S.rglob("*.yaml"))
    assert len(files) >= 7
    for f in files:
        docs = load_yaml_all(f)
        assert docs, f
        for d in docs:
            assert "apiVersion" in d and "kind" in d, f


@pytest.mark.parametrize("path", KUSTOMIZATIONS, ids=lambda p: p.name)
def test_kustomize_renders(path: Path) -> None:
    objs = _render(path)
    kinds = {o["kind"] for o in objs}
    assert {"Deployment", "StatefulSet", "Service", "ConfigMap",
            "HorizontalPodAutoscaler"} <= kinds


def test_dev_overlay_uses_local_images_and_its_namespace() -> None:
    objs = _render(K8S / "overlays" / "dev")
    for o in objs:
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == "rummy-dev", o["metadata"]["name"]
    assert _container(_get(objs, "Deployment", "rummy-service"))["image"] == "rummy-service:dev"
    assert _container(_get(objs, "Deployment", "rummy-worker"))["image"] == "rummy-worker:dev"
    env = _container(_get(objs, "Deployment", "rummy-service"))["env"]
    secret = env[0]["valueFrom"]["secretKeyRef"]["name"]
    assert any(o["kind"] == "Secret" and o["metadata"]["name"] == secret for o in objs)


def test_service_has_grpc_probes_and_limits(objects: list[dict[str, Any]]) -> None:
    c = _container(_get(objects, "Deployment", "rummy-service"))
    grpc_port = next(p["containerPort"] for p in c["ports"] if p["name"] == "grpc")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == grpc_port, probe
    args = c["args"]
    assert args[0] == "serve" and args[args.index("--port") + 1] == str(grpc_port)


@pytest.mark.parametrize("kind,name", [("Deployment", "rummy-service"),
                                       ("Deployment", "rummy-worker"),
                                       ("Deployment", "broker"),
                                       ("StatefulSet", "redis-events")])
def test_every_workload_has_resource_limits_and_probes(objects: list[dict[str, Any]],
                                                       kind: str, name: str) -> None:
    for c in _get(objects, kind, name)["spec"]["template"]["spec"]["containers"]:
        assert {"cpu", "memory"} <= set(c["resources"]["limits"]), f"{name}/{c['name']}"
        assert {"cpu", "memory"} <= set(c["resources"]["requests"]), f"{name}/{c['name']}"
        assert "livenessProbe" in c or "readinessProbe" in c


def test_service_pods_are_drained_one_at_a_time(objects: list[dict[str, Any]]) -> None:
    pdb = _get(objects, "PodDisruptionBudget", "rummy-service")
    pod_labels = _get(objects, "Deployment", "rummy-service")["spec"]["template"]["metadata"][
        "labels"]
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()


def test_event_store_is_a_durable_statefulset() -> None:
    objs = _base_objects()
    sts = _get(objs, "StatefulSet", "redis-events")
    assert sts["spec"]["volumeClaimTemplates"], "the AOF needs a persistent volume"
    conf = (BASE / "redis-events.conf").read_text(encoding="utf-8").split("\n")
    assert "appendonly yes" in conf
    assert "appendfsync everysec" in conf or "appendfsync always" in conf
    assert "maxmemory-policy noeviction" in conf


def test_workers_scale_horizontally(objects: list[dict[str, Any]]) -> None:
    hpa = _get(objects, "HorizontalPodAutoscaler", "rummy-worker")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "rummy-worker"}
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"] >= 1
    assert "volumeClaimTemplates" not in _get(objects, "Deployment", "rummy-worker")["spec"]


@pytest.mark.parametrize("name", ["rummy-service", "rummy-worker"])
def test_scrape_annotations_match_the_metrics_port(objects: list[dict[str, Any]],
                                                   name: str) -> None:
    dep = _get(objects, "Deployment", name)
    ann = dep["spec"]["template"]["metadata"]["annotations"]
    c = _container(dep)
    port = next(p["containerPort"] for p in c["ports"] if p["name"] == "metrics")
    assert ann["prometheus.io/scrape"] == "true"
    assert ann["prometheus.io/port"] == str(port)
    assert c["args"][c["args"].index("--metrics-port") + 1] == str(port)


def test_broker_is_separate_from_the_event_store(objects: list[dict[str, Any]]) -> None:
    cms = [o for o in objects if o["kind"] == "ConfigMap"
           and o["metadata"]["name"].startswith("rummy-config")]
    if cms:
        data = cms[0]["data"]
    else:  # the unrendered base: read the configMapGenerator
        gen = load_yaml(BASE / "kustomization.yaml")["configMapGenerator"]
        literals = next(g for g in gen if g["name"] == "rummy-config")["literals"]
        data = dict(lit.split("=", 1) for lit in literals)
    assert data["RUMMY_BROKER_URL"].startswith("redis://broker:")
    assert data["RUMMY_EVENT_STORE_URL"].startswith("redis://redis-events:")


def test_external_redis_overlay_drops_the_statefulset_and_reads_a_secret() -> None:
    objs = _render(EXTERNAL)
    assert not [o for o in objs if o["metadata"]["name"] == "redis-events"]
    secrets = {o["metadata"]["name"] for o in objs if o["kind"] == "Secret"}
    for name in ("rummy-service", "rummy-worker"):
        env = {e["name"]: e for e in _container(_get(objs, "Deployment", name))["env"]}
        ref = env["RUMMY_EVENT_STORE_URL"]["valueFrom"]["secretKeyRef"]
        assert ref["name"] in secrets and ref["key"] == "url"


def test_podmonitors_select_the_workloads() -> None:
    docs = load_yaml_all(K8S / "monitoring" / "podmonitors.yaml")
    selected = {d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] for d in docs}
    assert selected == {"rummy-service", "rummy-worker"}
    assert all(e["port"] == "metrics" for d in docs for e in d["spec"]["podMetricsEndpoints"])
