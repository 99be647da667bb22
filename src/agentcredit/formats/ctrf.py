"""CTRF test reports (``verifier/ctrf.json`` written by pytest-json-ctrf)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.schema import CheckStatus

_STATUS: dict[str, CheckStatus] = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "pending": "skipped",
    "other": "error",
    "error": "error",
}


def is_ctrf(value: Any) -> bool:
    """A CTRF report has results.tests as a list."""
    results = value.get("results") if isinstance(value, dict) else None
    return isinstance(results, dict) and isinstance(results.get("tests"), list)


def read_ctrf(path: Path, doc: Any) -> tuple[dict[str, CheckStatus], list[str]]:
    """Check id -> status, and what was odd in the report.

    A test reported twice keeps its worst status; a test without a name cannot be joined to a
    check and is reported; an unknown status is kept as ``error`` and reported; non-finite
    numbers (NaN, Infinity) are reported.
    """
    if not is_ctrf(doc):
        raise InputError(str(path), "not a CTRF report (no results.tests list)")
    checks: dict[str, CheckStatus] = {}
    nameless = 0
    unknown: list[str] = []
    non_finite = 0
    for test in doc["results"]["tests"]:
        if not isinstance(test, dict):
            nameless += 1
            continue
        non_finite += sum(1 for v in test.values()
                          if isinstance(v, float) and not math.isfinite(v))
        name = test.get("name")
        if not isinstance(name, str) or not name.strip():
            nameless += 1
            continue
        raw = test.get("status")
        status = _STATUS.get(str(raw))
        if status is None:
            unknown.append(f"{name}: {raw!r}")
            status = "error"
        checks[name] = _worst(checks.get(name), status)
    problems = []
    if nameless:
        problems.append(f"{nameless} test(s) without a name or not an object were left out")
    if unknown:
        problems.append(f"unknown status kept as error for {len(unknown)} test(s): "
                        + "; ".join(unknown[:3]))
    if non_finite:
        problems.append(f"{non_finite} non-finite number(s) (NaN or Infinity) in test entries")
    return checks, problems


_RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}


def _worst(old: CheckStatus | None, new: CheckStatus) -> CheckStatus:
    if old is None:
        return new
    return old if _RANK[old] >= _RANK[new] else new
