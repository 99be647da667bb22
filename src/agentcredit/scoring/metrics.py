"""Partial credit, evidence coverage and Perfect. Pure.

Partial credit = Yes / (Yes + No), Abstain excluded; it is undefined (None) when no item
is decided, never silently 0. Coverage = (Yes + No) / items. Perfect = no item judged No,
without the endpoint item (``perfect``) and with it (``perfect_with_endpoint``). The
endpoint item counts in partial credit and coverage when present.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentcredit.schema import Label


@dataclass(frozen=True)
class Score:
    """The metrics of one trial."""

    items: int
    yes: int
    no: int
    abstain: int
    partial_credit: float | None
    coverage: float | None
    perfect: bool
    perfect_with_endpoint: bool


def score(labels: Iterable[Label], endpoint: Label | None = None) -> Score:
    """Metrics from item labels and the optional endpoint label.

    >>> s = score(["yes"] * 6 + ["no"] * 3 + ["abstain"], endpoint="no")
    >>> (s.yes, s.no, s.abstain, s.partial_credit, s.coverage, s.perfect)
    (6, 4, 1, 0.6, 0.9090909090909091, False)
    >>> score(["abstain", "abstain"]).partial_credit is None
    True
    """
    item_labels = list(labels)
    all_labels = [*item_labels, endpoint] if endpoint is not None else item_labels
    yes = sum(1 for label in all_labels if label == "yes")
    no = sum(1 for label in all_labels if label == "no")
    abstain = len(all_labels) - yes - no
    decided = yes + no
    return Score(
        items=len(all_labels), yes=yes, no=no, abstain=abstain,
        partial_credit=yes / decided if decided else None,
        coverage=decided / len(all_labels) if all_labels else None,
        perfect=not any(label == "no" for label in item_labels),
        perfect_with_endpoint=not any(label == "no" for label in all_labels),
    )


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values (None when there are none).

    >>> mean([1.0, None, 0.5]), mean([None])
    (0.75, None)
    """
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None
