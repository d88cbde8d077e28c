"""``.ci/audit.py`` (``make audit``): what it audits and how it reads pip-audit's report, with
a fake report (the real audit needs the advisory service, so CI runs it, not this test)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from .conftest import REPO


def _audit() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_audit", REPO / ".ci" / "audit.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_audits_every_pinned_version_including_pip_audit_itself() -> None:
    reqs = _audit().pinned_requirements(REPO / "constraints.txt")
    assert reqs and all("==" in r and not r.startswith("#") for r in reqs)
    names = {r.split("==")[0].lower().replace("_", "-") for r in reqs}
    assert {"redis", "celery", "grpcio", "pip-audit"} <= names
    assert "pip-audit" in (REPO / "pyproject.toml").read_text()  # the dev extra


def test_vulnerabilities_fail_and_unaudited_packages_are_reported() -> None:
    report = {"dependencies": [
        {"name": "redis", "version": "8.1.0", "vulns": []},
        {"name": "oldlib", "version": "1.0", "vulns": [
            {"id": "PYSEC-2099-1", "fix_versions": ["1.1"], "aliases": []}]},
        {"name": "celery", "skip_reason": "Dependency not found on PyPI"},
    ]}
    vulns, unaudited = _audit().classify(report)
    assert vulns == ["oldlib 1.0: PYSEC-2099-1 (fixed in 1.1)"]
    assert unaudited == ["celery: Dependency not found on PyPI"]


def test_ci_runs_the_audit() -> None:
    # this runner cannot reach the advisory data: CI reports unaudited packages and fails
    # only on a known vulnerability (.ci/run says why)
    assert "\nRUMMY_AUDIT_ALLOW_UNAUDITED=1 make audit\n" in (REPO / ".ci" / "run").read_text()
    assert "\naudit: setup" in (REPO / "Makefile").read_text()
