"""Prometheus and Grafana: every scrape target is a compose service on the port its command
serves metrics on, and every metric the dashboard queries is declared in the code."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import DEPLOY, DESIGN_METRICS, declared_metrics, load_yaml, series_base

DASHBOARD = DEPLOY / "grafana" / "dashboards" / "rummy.json"
PROVISIONING = DEPLOY / "grafana" / "provisioning"


def _metrics_port(svc: dict[str, Any], name: str) -> int:
    """The port a compose service serves /metrics on (from its command)."""
    if name == "prometheus":
        return 9090
    cmd = [str(p) for p in svc["command"]]
    return int(cmd[cmd.index("--metrics-port") + 1])


def _targets(cfg: dict[str, Any]) -> list[tuple[str, str, int]]:
    """``(job, host, port)`` of every static and DNS scrape target."""
    out = []
    for job in cfg["scrape_configs"]:
        for sc in job.get("static_configs", []):
            for t in sc["targets"]:
                host, port = t.rsplit(":", 1)
                out.append((job["job_name"], host, int(port)))
        for dns in job.get("dns_sd_configs", []):
            out.extend((job["job_name"], n, int(dns["port"])) for n in dns["names"])
    return out


def _dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def _exprs() -> list[str]:
    return [t["expr"] for p in _dashboard()["panels"] for t in p.get("targets", [])]


def test_prometheus_scrapes_the_service_and_the_workers(prometheus_config: dict[str, Any],
                                                        compose: dict[str, Any]) -> None:
    hosts = {h for _, h, _ in _targets(prometheus_config)}
    assert {"service", "worker"} <= hosts


def test_every_scrape_target_is_a_compose_service_on_its_metrics_port(
        prometheus_config: dict[str, Any], compose: dict[str, Any]) -> None:
    targets = _targets(prometheus_config)
    assert targets
    for job, host, port in targets:
        assert host in compose["services"], f"job {job}: {host} is not a compose service"
        assert port == _metrics_port(compose["services"][host], host), (
            f"job {job}: {host}:{port} is not where {host} serves /metrics")


def test_grafana_datasource_and_dashboard_are_provisioned(compose: dict[str, Any]) -> None:
    mounts = dict(str(m).split(":")[:2] for m in compose["services"]["grafana"]["volumes"])
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    ds = load_yaml(PROVISIONING / "datasources" / "prometheus.yaml")["datasources"]
    uids = {d["uid"] for d in ds if d["type"] == "prometheus"}
    assert any(d["url"] == "http://prometheus:9090" for d in ds)
    providers = load_yaml(PROVISIONING / "dashboards" / "rummy.yaml")["providers"]
    assert mounts["./grafana/dashboards"] == providers[0]["options"]["path"]
    dash = _dashboard()
    for p in dash["panels"]:
        assert p["datasource"]["uid"] in uids, p["title"]
        assert p["targets"], p["title"]
        for t in p["targets"]:
            assert t["datasource"]["uid"] in uids
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("needle", [
    "rate(rummy_commands_total",                                   # commands/s
    "histogram_quantile(0.99, sum by (le) (rate(rummy_rule_validation_seconds_bucket",
    "rummy_event_append_seconds_bucket",                           # event append latency
    "rummy_games_active",                                          # games active
    "rate(rummy_sim_games_total",                                  # simulation games/s
    "rummy_solver_seconds_bucket",                                 # solver latency
])
def test_dashboard_shows_every_required_panel(needle: str) -> None:
    assert any(needle in e for e in _exprs()), needle


def test_every_dashboard_metric_is_declared_in_the_code() -> None:
    declared = declared_metrics()
    used = {s for e in _exprs() for s in re.findall(r"\brummy_[a-z0-9_]+", e)}
    assert used
    missing = sorted(s for s in used if series_base(s) not in declared)
    assert not missing, f"dashboard queries metrics no code declares: {missing}"
    for s in used:
        if s.endswith("_bucket"):
            assert declared[series_base(s)] == "histogram", f"{s}: not a histogram"


@pytest.mark.parametrize("name,kind", sorted(DESIGN_METRICS.items()))
def test_design_metric_is_declared_in_the_code(name: str, kind: str) -> None:
    declared = declared_metrics()
    assert name in declared, \
        f"{name} (docs/architecture.md) is not declared in services/ or workers/"
    assert declared[name] == kind


def test_alert_rules_are_loaded_and_use_declared_metrics(prometheus_config: dict[str, Any],
                                                         compose: dict[str, Any]) -> None:
    mounts = dict(str(m).split(":")[:2] for m in compose["services"]["prometheus"]["volumes"])
    for rule_file in prometheus_config["rule_files"]:
        source = next(src for src, dst in mounts.items() if dst == rule_file)
        groups = load_yaml(DEPLOY / source)["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert rules and all(r["alert"] and r["expr"] for r in rules)
        declared = declared_metrics()
        jobs = {j["job_name"] for j in prometheus_config["scrape_configs"]}
        for r in rules:
            for series in re.findall(r"\brummy_[a-z0-9_]+", r["expr"]):
                assert series_base(series) in declared, f"{r['alert']}: {series}"
            for job in re.findall(r'job="([^"]+)"', r["expr"]):
                assert job in jobs, f"{r['alert']}: no scrape job {job}"


def test_every_served_metric_is_documented_in_the_readme():
    # the README's metric table missed four served metrics
    import re

    from .conftest import REPO
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`(rummy_[a-z_]+)(?:\{[^}]*\})?`", readme))
    missing = sorted(set(declared_metrics()) - documented)
    assert not missing, f"served but not in the README's metric tables: {missing}"
