"""Dependency audit: every version pinned in constraints.txt (what CI installs and the tests
cover) against the known-vulnerability databases, with pip-audit (PyPI's advisories; ``-s
osv`` for OSV).

    python .ci/audit.py            # make audit; .ci/run
    python .ci/audit.py -s osv     # extra pip-audit arguments are passed through

Exit codes:
    0: every pinned package was audited and none has a known vulnerability;
    1: a known vulnerability (each one is listed with its id and the fixed versions);
    3: the audit could not run or did not cover every package (no network to the advisory
       service, a package it cannot find): the packages are listed. CI fails on this too: an
       audit that audited nothing is not a pass. Set RUMMY_AUDIT_ALLOW_UNAUDITED=1 on a runner
       without network to report it and exit 0 instead (a vulnerability still fails).

Only standard library; pip-audit runs as ``python -m pip_audit`` of this interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def pinned_requirements(constraints: Path) -> list[str]:
    """The ``name==version`` lines of a constraints file (comments and blanks dropped)."""
    lines = [ln.split("#", 1)[0].strip() for ln in constraints.read_text().splitlines()]
    return [ln for ln in lines if ln]


def classify(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(vulnerabilities, unaudited)``: one line per known vulnerability, one per package
    that could not be audited, from pip-audit's JSON report."""
    vulns, unaudited = [], []
    for dep in report.get("dependencies", []):
        name = f"{dep['name']} {dep.get('version', '')}".strip()
        if "skip_reason" in dep:
            unaudited.append(f"{name}: {dep['skip_reason']}")
        for v in dep.get("vulns", []):
            fixed = ", ".join(v.get("fix_versions", [])) or "no fixed version"
            vulns.append(f"{name}: {v['id']} (fixed in {fixed})")
    return vulns, unaudited


def main(argv: list[str]) -> int:
    """Run the audit; see the module docstring for the exit codes."""
    reqs = pinned_requirements(REPO / "constraints.txt")
    with tempfile.TemporaryDirectory() as tmp:
        req_file = Path(tmp) / "requirements.txt"
        req_file.write_text("\n".join(reqs) + "\n")
        out = subprocess.run(
            [sys.executable, "-m", "pip_audit", "-r", str(req_file), "--no-deps",
             "--disable-pip", "--progress-spinner", "off", "--format", "json", *argv],
            capture_output=True, text=True, check=False)
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        print(f"audit: pip-audit did not run (exit {out.returncode}):\n{tail}", file=sys.stderr)
        return _unaudited_exit()
    vulns, unaudited = classify(report)
    audited = len(report.get("dependencies", [])) - len(unaudited)
    print(f"audit: {audited} of {len(reqs)} pinned packages audited, "
          f"{len(vulns)} known vulnerabilities")
    for line in vulns:
        print(f"  VULNERABLE {line}")
    if vulns:
        return 1
    if unaudited:
        print(f"audit: {len(unaudited)} packages could not be audited (no access to the "
              "advisory service?):", file=sys.stderr)
        for line in unaudited[:10]:
            print(f"  {line}", file=sys.stderr)
        if len(unaudited) > 10:
            print(f"  ... and {len(unaudited) - 10} more", file=sys.stderr)
        return _unaudited_exit()
    return 0


def _unaudited_exit() -> int:
    if os.environ.get("RUMMY_AUDIT_ALLOW_UNAUDITED") == "1":
        print("audit: RUMMY_AUDIT_ALLOW_UNAUDITED=1: not failing", file=sys.stderr)
        return 0
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
