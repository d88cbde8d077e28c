"""Shared fixtures of the static deployment tests: the repository root, parsed compose and
Prometheus files, and the metric names declared in the code.

No container engine runs here, so these tests check the deployment files statically: they
parse, reference each other consistently, and match the code (metric names, ports, commands).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"

#: every metric docs/architecture.md ("Metrics") promises, with its Prometheus type.
DESIGN_METRICS = {
    "rummy_rule_validation_seconds": "histogram",
    "rummy_commands_total": "counter",
    "rummy_events_appended_total": "counter",
    "rummy_event_append_seconds": "histogram",
    "rummy_games_active": "gauge",
    "rummy_sim_games_total": "counter",
    "rummy_sim_turns_total": "counter",
    "rummy_sim_game_seconds": "histogram",
    "rummy_solver_seconds": "histogram",
}

_DECL = re.compile(r"\b(Counter|Gauge|Histogram|Summary)\(\s*[\"'](rummy_[a-z0-9_]+)[\"']")


def load_yaml(path: Path) -> Any:
    """The single YAML document in ``path``."""
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def load_yaml_all(path: Path) -> list[Any]:
    """Every non-empty YAML document in ``path``."""
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def declared_metrics() -> dict[str, str]:
    """Exposed metric name -> type (``counter``, ``gauge``, ``histogram``, ``summary``) of
    every ``prometheus_client`` metric declared in ``services/`` and ``workers/``.

    prometheus-client appends ``_total`` to a counter's name, so ``Counter("rummy_x", ...)``
    and ``Counter("rummy_x_total", ...)`` both expose ``rummy_x_total``.
    """
    found: dict[str, str] = {}
    for root in (REPO / "services", REPO / "workers"):
        for path in root.rglob("*.py"):
            if "rummy_api" in path.parts:
                continue
            for kind, name in _DECL.findall(path.read_text(encoding="utf-8")):
                kind = kind.lower()
                if kind == "counter" and not name.endswith("_total"):
                    name += "_total"
                found[name] = kind
    return found


def series_base(series: str) -> str:
    """The metric a series belongs to: ``x_bucket``/``x_sum``/``x_count`` -> ``x``."""
    return re.sub(r"_(bucket|sum|count)$", "", series)


@pytest.fixture(scope="session")
def compose() -> dict[str, Any]:
    """``deploy/compose.yaml``, parsed."""
    return load_yaml(DEPLOY / "compose.yaml")


@pytest.fixture(scope="session")
def prometheus_config() -> dict[str, Any]:
    """``deploy/prometheus/prometheus.yml``, parsed."""
    return load_yaml(DEPLOY / "prometheus" / "prometheus.yml")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``deploy`` marker (tests that build images and run the compose stack)."""
    config.addinivalue_line(
        "markers", "deploy: builds the images and runs deploy/compose.yaml with podman "
        "(make deploy-test); skipped unless -m selects it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``deploy`` tests unless the ``-m`` expression names ``deploy``: plain ``make
    test`` must not build images (minutes, root and podman); ``make deploy-test`` runs them."""
    if "deploy" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="needs podman and minutes: make deploy-test (-m deploy)")
    for item in items:
        if item.get_closest_marker("deploy") is not None:
            item.add_marker(skip)
