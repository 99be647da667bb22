"""The verifier-evidence judge: labels from per-check results, no LLM. Pure.

An assertion item is Yes when all of its referenced checks passed, No when any failed or
errored, and Abstain when one was skipped or has no result. Other routes have no verifier
evidence and abstain (``needs_model`` for the items a derived checklist lists for a model).
"""

from __future__ import annotations

from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.schema import Checklist, CheckStatus, ItemJudgment


def verifier_judgments(checklist: Checklist,
                       results: dict[str, CheckStatus]) -> list[ItemJudgment]:
    """One verifier-sourced judgment per checklist item.

    >>> from agentcredit.schema import ChecklistItem, RulesRef
    >>> c = Checklist(task_id="t", items=(ChecklistItem(id="C1", text="x", route="assertion",
    ...     checks=("t.py::test_a",)),), rules=RulesRef(id="r", version="1"),
    ...     synthesizer="derived", prompt_version="none", created_at="", hash="h")
    >>> verifier_judgments(c, {"t.py::test_a": "passed"})[0].label
    'yes'
    """
    by_base: dict[str, list[CheckStatus]] = {}
    for check_id, status in results.items():
        by_base.setdefault(strip_parameters(check_id), []).append(status)
        by_base.setdefault(check_id.rsplit("::", 1)[-1], []).append(status)
    out: list[ItemJudgment] = []
    for item in checklist.items:
        if item.route != "assertion" or not item.checks:
            out.append(ItemJudgment(item_id=item.id, label="abstain", source="verifier",
                                    reason="needs_model" if item.needs_model else "no_checks"))
            continue
        statuses = [s for check in item.checks
                    for s in by_base.get(strip_parameters(check),
                                         by_base.get(check.rsplit("::", 1)[-1], []))]
        missing = [c for c in item.checks
                   if strip_parameters(c) not in by_base and c.rsplit("::", 1)[-1] not in by_base]
        out.append(_label(item.id, statuses, missing))
    return out


def _label(item_id: str, statuses: list[CheckStatus], missing: list[str]) -> ItemJudgment:
    failed = [s for s in statuses if s in ("failed", "error")]
    if failed:
        return ItemJudgment(item_id=item_id, label="no", source="verifier",
                            rationale=f"{len(failed)} referenced check(s) failed")
    if missing:
        return ItemJudgment(item_id=item_id, label="abstain", reason="check_missing",
                            source="verifier",
                            rationale=f"no result for {', '.join(missing[:3])}")
    if any(s == "skipped" for s in statuses):
        return ItemJudgment(item_id=item_id, label="abstain", reason="check_skipped",
                            source="verifier", rationale="a referenced check was skipped")
    return ItemJudgment(item_id=item_id, label="yes", source="verifier",
                        rationale="all referenced checks passed")
