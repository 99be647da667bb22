"""CTRF test reports (``verifier/ctrf.json`` written by pytest-json-ctrf)."""

from __future__ import annotations

import math
import os
from typing import Any

from agentcredit.errors import InputError
from agentcredit.safe_io import StrPath
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


def read_ctrf(path: StrPath, doc: Any) -> tuple[dict[str, CheckStatus], list[str]]:
    """Check id -> status, and what was odd in the report.

    A test reported twice keeps its worst status; a test without a name cannot be joined to a
    check and is reported; an unknown status is kept as ``error`` and reported; non-finite
    numbers (NaN, Infinity) are reported.
    """
    if not is_ctrf(doc):
        raise InputError(os.fspath(path), "not a CTRF report (no results.tests list)")
    checks: dict[str, CheckStatus] = {}
    nameless = 0
    unknown: list[str] = []
    odd_numbers = 0
    for test in doc["results"]["tests"]:
        if type(test) is not dict:
            nameless += 1
            continue
        odd_numbers += sum(1 for v in test.values()
                           if isinstance(v, float) and not math.isfinite(v))
        name = test.get("name")
        if type(name) is not str or not name.strip():
            nameless += 1
            continue
        raw = test.get("status")
        status = _STATUS.get(raw) if type(raw) is str else None
        if status is None:
            unknown.append(f"{name}: {raw!r}")
            status = "error"
        old = checks.get(name)
        checks[name] = status if old is None else _worst(old, status)
    problems = []
    if nameless:
        problems.append(f"{nameless} test(s) without a name or not an object were left out")
    if unknown:
        problems.append(f"unknown status kept as error for {len(unknown)} test(s): "
                        + "; ".join(unknown[:3]))
    if odd_numbers:
        problems.append(f"{odd_numbers} non-finite number(s) (NaN or Infinity) in test entries")
    return checks, problems


_RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}


def _worst(old: CheckStatus, new: CheckStatus) -> CheckStatus:
    return old if _RANK[old] >= _RANK[new] else new
