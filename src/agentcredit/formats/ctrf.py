"""CTRF test reports (``verifier/ctrf.json`` written by pytest-json-ctrf)."""

from __future__ import annotations

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


def read_ctrf(path: Path, doc: Any) -> dict[str, CheckStatus]:
    """Check id -> status. A test reported twice keeps its worst status."""
    if not is_ctrf(doc):
        raise InputError(str(path), "not a CTRF report (no results.tests list)")
    checks: dict[str, CheckStatus] = {}
    for test in doc["results"]["tests"]:
        if not isinstance(test, dict) or not isinstance(test.get("name"), str):
            continue
        status = _STATUS.get(str(test.get("status")), "error")
        name = test["name"]
        checks[name] = _worst(checks.get(name), status)
    return checks


_RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}


def _worst(old: CheckStatus | None, new: CheckStatus) -> CheckStatus:
    if old is None:
        return new
    return old if _RANK[old] >= _RANK[new] else new
