"""deploy/k8s: every manifest parses; the kustomize base and the dev overlay render (when
``kubectl`` is installed); the rendered objects have gRPC probes, resource limits, a durable
event store, a horizontally scaled worker and scrape annotations; least privilege: Redis
passwords and the admin token from mounted Secrets, restricted pod security contexts, and
NetworkPolicies that let each pod be reached only by the pods that need it."""

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


def _pod(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]


WORKLOADS = [("Deployment", "rummy-service"), ("Deployment", "rummy-worker"),
             ("Deployment", "broker"), ("StatefulSet", "redis-events")]


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
    secrets = {o["metadata"]["name"] for o in objs if o["kind"] == "Secret"}
    for kind, name in WORKLOADS:
        for volume in _pod(_get(objs, kind, name)).get("volumes", []):
            if "secret" in volume:  # every mounted Secret is generated (hash-suffixed name)
                assert volume["secret"]["secretName"] in secrets, (name, volume)


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


def test_worker_pool_size_follows_the_cpu_limit(objects: list[dict[str, Any]]) -> None:
    """Celery's default pool is one process per core of the node (os.cpu_count()), not of
    the container's CPU limit: the worker passes its limit, in whole CPUs, as --concurrency."""
    c = _container(_get(objects, "Deployment", "rummy-worker"))
    args = c["args"]
    value = args[args.index("--concurrency") + 1]
    assert value == "$(RUMMY_WORKER_CONCURRENCY)"  # expanded by the kubelet from env
    (env,) = [e for e in c["env"] if e["name"] == "RUMMY_WORKER_CONCURRENCY"]
    assert env["valueFrom"]["resourceFieldRef"] == {
        "containerName": c["name"], "resource": "limits.cpu", "divisor": "1"}
    assert c["resources"]["limits"]["cpu"] == "2"


def test_keda_rabbitmq_overlay_scales_on_the_amqp_queue() -> None:
    objs = _render(K8S / "overlays" / "keda-rabbitmq")
    assert not [o for o in objs if o["kind"] == "HorizontalPodAutoscaler"]
    scaled = _get(objs, "ScaledObject", "rummy-worker")
    assert scaled["metadata"]["namespace"] == "rummy-dev"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "rabbitmq"
    assert trigger["metadata"] == {"protocol": "amqp", "queueName": "rummy-sim",
                                   "mode": "QueueLength", "value": "4"}
    auth = _get(objs, "TriggerAuthentication", trigger["authenticationRef"]["name"])
    (ref,) = auth["spec"]["secretTargetRef"]
    assert ref["parameter"] == "host"
    secret = _get(objs, "Secret", ref["name"])  # the generated, hashed name
    import base64
    url = base64.b64decode(secret["data"][ref["key"]]).decode()
    assert url.startswith("amqp://") and ".rummy-dev.svc.cluster.local:" in url
    # the workers consume the same broker KEDA measures
    worker = _container(_get(objs, "Deployment", "rummy-worker"))
    (env,) = [e for e in worker["env"] if e["name"] == "RUMMY_BROKER_URL"]
    assert env["valueFrom"]["secretKeyRef"] == {"name": secret["metadata"]["name"],
                                                "key": ref["key"]}


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


# --------------------------------------------------------------------------- least privilege

#: the Dockerfiles' ``USER`` of the project's images, and the redis image's user
IMAGE_USERS = {"rummy-service": 10001, "rummy-worker": 10001, "broker": 999, "redis-events": 999}


def _dockerfile_user(name: str) -> tuple[int, int]:
    """The ``USER uid:gid`` of the image's Dockerfile."""
    text = (DEPLOY / f"{name.removeprefix('rummy-')}.Dockerfile").read_text(encoding="utf-8")
    user = [line.split()[1] for line in text.splitlines() if line.startswith("USER ")][-1]
    uid, gid = user.split(":")
    return int(uid), int(gid)


@pytest.mark.parametrize("kind,name", WORKLOADS)
def test_pods_run_restricted(objects: list[dict[str, Any]], kind: str, name: str) -> None:
    pod = _pod(_get(objects, kind, name))
    ctx = pod["securityContext"]
    assert ctx["runAsNonRoot"] is True and ctx["runAsUser"] == IMAGE_USERS[name]
    if name.startswith("rummy-"):
        assert (ctx["runAsUser"], ctx["runAsGroup"]) == _dockerfile_user(name), \
            "pod user != the image's USER"
    assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod.get("automountServiceAccountToken") is False
    writable = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable |= {t["metadata"]["name"] for t in _get(objects, kind, name)["spec"].get(
        "volumeClaimTemplates", [])}
    for c in pod["containers"]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False, name
        assert sc["readOnlyRootFilesystem"] is True, name
        assert sc["capabilities"]["drop"] == ["ALL"] and "add" not in sc["capabilities"]
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        assert mounts.get("/tmp") in writable, f"{name}: /tmp must be a writable emptyDir"
        for e in c.get("env", []):  # e.g. PROMETHEUS_MULTIPROC_DIR, under a writable mount
            if e["name"].endswith("_DIR"):
                assert any(e["value"].startswith(m.rstrip("/") + "/") and mounts[m] in writable
                           for m in mounts), (name, e)


def _secret_files(pod: dict[str, Any], c: dict[str, Any]) -> dict[str, tuple[str, str, bool]]:
    """Path of each file a container sees from a Secret -> (Secret, key, optional)."""
    volumes = {v["name"]: v["secret"] for v in pod["volumes"] if "secret" in v}
    files = {}
    for m in c["volumeMounts"]:
        if m["name"] in volumes:
            sec = volumes[m["name"]]
            assert m.get("readOnly") is True
            for item in sec["items"]:
                files[f"{m['mountPath']}/{item['path']}"] = (
                    sec["secretName"], item["key"], bool(sec.get("optional")))
    return files


@pytest.mark.parametrize("name,variables", [
    ("rummy-service", {"RUMMY_REDIS_PASSWORD_FILE": "rummy-redis",
                       "RUMMY_ADMIN_TOKEN_FILE": "rummy-admin"}),
    ("rummy-worker", {"RUMMY_REDIS_PASSWORD_FILE": "rummy-redis",
                      "RUMMY_BROKER_PASSWORD_FILE": "rummy-broker"}),
])
def test_secrets_reach_the_services_as_files(objects: list[dict[str, Any]], name: str,
                                             variables: dict[str, str]) -> None:
    dep = _get(objects, "Deployment", name)
    c = _container(dep)
    env = {e["name"]: e for e in c["env"]}
    files = _secret_files(_pod(dep), c)
    for var, secret in variables.items():
        assert env[var]["value"] in files, f"{name}: {var} names no mounted Secret file"
        assert files[env[var]["value"]][0].startswith(secret)
    assert not any("secretKeyRef" in e.get("valueFrom", {}) for e in c["env"]), \
        "secrets as files, not environment values"
    assert "RUMMY_ADMIN_TOKEN" not in env
    urls = [v for k, v in _config(objects).items() if k.endswith("_URL")]
    assert urls and not any("@" in u for u in urls), "no password in the ConfigMap's URLs"


@pytest.mark.parametrize("name,secret", [("redis-events", "rummy-redis"),
                                         ("broker", "rummy-broker")])
def test_redis_demands_the_password_from_its_secret(objects: list[dict[str, Any]], name: str,
                                                    secret: str) -> None:
    kind = "StatefulSet" if name == "redis-events" else "Deployment"
    pod = _pod(_get(objects, kind, name))
    c = pod["containers"][0]
    files = _secret_files(pod, c)
    (path, (sname, key, optional)), = files.items()
    assert sname.startswith(secret) and key == "password" and not optional
    script = " ".join(c["command"] + c["args"])
    assert f"requirepass $(cat {path})" in script and "- <<EOF" in script  # on stdin
    assert "--requirepass" not in script, "a password in argv shows in ps"
    probe = " ".join(c["readinessProbe"]["exec"]["command"])
    assert f"REDISCLI_AUTH=\"$(cat {path})\"" in probe and "PONG" in probe


def _config(objects: list[dict[str, Any]]) -> dict[str, str]:
    cms = [o for o in objects if o["kind"] == "ConfigMap"
           and o["metadata"]["name"].startswith("rummy-config")]
    if cms:
        return dict(cms[0]["data"])
    gen = load_yaml(BASE / "kustomization.yaml")["configMapGenerator"]
    literals = next(g for g in gen if g["name"] == "rummy-config")["literals"]
    return dict(lit.split("=", 1) for lit in literals)


# A pod of each kind that might try to connect, by its labels (all in the rummy namespace but
# the last one, which is in another namespace without the ingress label).
CLIENTS = {
    "rummy-service": {"app.kubernetes.io/name": "rummy-service"},
    "rummy-worker": {"app.kubernetes.io/name": "rummy-worker"},
    "rummy-batch": {"app.kubernetes.io/name": "rummy-batch"},
    "prometheus": {"app.kubernetes.io/name": "prometheus"},
    "broker": {"app.kubernetes.io/name": "broker"},
    "redis-events": {"app.kubernetes.io/name": "redis-events"},
    "other-pod": {"app.kubernetes.io/name": "debug-shell"},
}


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, "only matchLabels selectors are modelled here"
    return selector.get("matchLabels", {}).items() <= labels.items()


def _reachers(objects: list[dict[str, Any]], target: str, port: str) -> set[str]:
    """The clients of :data:`CLIENTS` (same namespace, namespace without labels) that the
    NetworkPolicies let connect to the pods of workload ``target`` on the named ``port``."""
    pods = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet")
            and o["metadata"]["name"] == target]
    labels = pods[0]["spec"]["template"]["metadata"]["labels"]
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"
                and _matches(o["spec"]["podSelector"], labels)
                and "Ingress" in o["spec"].get("policyTypes", ["Ingress"])]
    assert policies, f"no NetworkPolicy selects {target}"
    allowed = set()
    for pol in policies:
        for rule in pol["spec"].get("ingress", []):
            if not any(p.get("port") == port for p in rule.get("ports", [{"port": port}])):
                continue
            for peer in rule.get("from", []):
                ns = peer.get("namespaceSelector")
                if ns is not None and ns.get("matchLabels"):
                    continue  # another, labelled namespace: none of CLIENTS
                sel = peer.get("podSelector", {})
                allowed |= {name for name, lab in CLIENTS.items() if _matches(sel, lab)}
    return allowed


def test_ingress_is_denied_by_default(objects: list[dict[str, Any]]) -> None:
    deny = _get(objects, "NetworkPolicy", "default-deny-ingress")
    assert deny["spec"]["podSelector"] == {} and deny["spec"]["policyTypes"] == ["Ingress"]
    assert "ingress" not in deny["spec"]
    for _kind, name in WORKLOADS:  # and every workload has a policy of its own
        _reachers(objects, name, "redis" if name in ("broker", "redis-events") else "metrics")


@pytest.mark.parametrize("target,port,expected", [
    ("redis-events", "redis", {"rummy-service", "rummy-worker"}),
    ("broker", "redis", {"rummy-worker", "rummy-batch"}),
    ("rummy-service", "metrics", {"prometheus"}),
    ("rummy-worker", "metrics", {"prometheus"}),
    ("rummy-service", "grpc", set(CLIENTS)),
])
def test_only_the_pods_that_need_a_port_reach_it(objects: list[dict[str, Any]], target: str,
                                                 port: str, expected: set[str]) -> None:
    assert _reachers(objects, target, port) == expected
    # the named port is one the target's container really exposes
    kind = "StatefulSet" if target == "redis-events" else "Deployment"
    assert port in {p["name"] for p in _container(_get(objects, kind, target))["ports"]}


def test_grpc_is_open_to_an_ingress_namespace_and_metrics_to_prometheus_anywhere(
        objects: list[dict[str, Any]]) -> None:
    pol = _get(objects, "NetworkPolicy", "rummy-service")
    peers = [(p, r["ports"][0]["port"]) for r in pol["spec"]["ingress"] for p in r["from"]]
    assert ({"namespaceSelector": {"matchLabels": {"rummy/grpc-ingress": "true"}}}, "grpc") \
        in peers
    prom = [p for p, port in peers if port == "metrics"]
    assert prom == [{"namespaceSelector": {}, "podSelector": {"matchLabels": {
        "app.kubernetes.io/name": "prometheus"}}}]


def test_keda_overlay_scales_workers_on_the_queue_not_cpu() -> None:
    # scale workers on queue length with KEDA, rendered here
    objs = _render(K8S / "overlays" / "keda")
    assert not [o for o in objs if o["kind"] == "HorizontalPodAutoscaler"]  # KEDA owns it
    scaled = _get(objs, "ScaledObject", "rummy-worker")
    assert scaled["metadata"]["namespace"] == "rummy-dev"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "rummy-worker"
    _get(objs, "Deployment", "rummy-worker")
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis"
    assert trigger["metadata"]["listName"] == "rummy-sim"  # RUMMY_QUEUE's default
    # KEDA's operator resolves the address in its own namespace: a bare `broker:6379` is
    # "no such host" there; the Service's full name in the overlay's namespace
    assert trigger["metadata"]["address"] == "broker.rummy-dev.svc.cluster.local:6379"
    _get(objs, "Service", "broker")
    assert 1 <= scaled["spec"]["minReplicaCount"] < scaled["spec"]["maxReplicaCount"]
    auth = _get(objs, "TriggerAuthentication", trigger["authenticationRef"]["name"])
    (ref,) = auth["spec"]["secretTargetRef"]
    secret = _get(objs, "Secret", ref["name"])  # the generated, hashed name
    worker_secrets = {v.get("secret", {}).get("secretName")
                      for v in _pod(_get(objs, "Deployment", "rummy-worker"))["volumes"]}
    assert secret["metadata"]["name"] in worker_secrets  # the workers' broker password
    policy = _get(objs, "NetworkPolicy", "broker-from-keda")
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "keda"}
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
