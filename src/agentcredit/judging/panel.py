"""Several judges, several samples, one label per item: the majority of the decided votes.

A :class:`JudgePanel` asks every judge model ``samples`` times for each trial (sample ``s``
with seed ``seed + s``; with more than one sample every sample is drawn at
:data:`SAMPLE_TEMPERATURE`, so the samples are exchangeable and their cache keys distinct).
Each answer is checked against the evidence exactly as a single judge's is
(:func:`agentcredit.judging.llm_judge.judge_trial`), and becomes one :class:`Vote` per item.
The item's label is the majority of the decided votes (yes against no); a tie, or no decided
vote, is abstain (``split_vote`` when the decided votes tie). The majority label cites the
evidence of the first vote that agrees with it. A failed call of any judge leaves the whole
trial unjudged (nothing is voted with a missing voter); the answers that came back stay in
the cache, so the next run asks only what failed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentcredit.evidence.quotes import DEFAULT_SPECIFICITY
from agentcredit.evidence.view import EvidenceView
from agentcredit.judging.llm_judge import JudgeResult, judge_trial
from agentcredit.llm.client import Model
from agentcredit.llm.types import GenerationConfig
from agentcredit.schema import Checklist, EvidenceRules, ItemJudgment

SAMPLE_TEMPERATURE = 0.7
"""The temperature of every sample when a judge is asked more than once."""


@dataclass(frozen=True)
class Vote:
    """One judge's label of one item in one sample."""

    item_id: str
    judge: str
    sample: int
    judgment: ItemJudgment


@dataclass
class PanelResult(JudgeResult):
    """The majority judgments, with every vote behind them."""

    votes: list[Vote] = field(default_factory=list)


@dataclass(frozen=True)
class JudgePanel:
    """The judges (each a model client, its own usage ledger) and the samples per judge."""

    judges: tuple[Model, ...]
    samples: int = 1

    @property
    def name(self) -> str:
        """The panel as provenance records it: ``a,b×2`` (judges, samples)."""
        ids = ",".join(judge.model_id for judge in self.judges)
        return ids if self.samples == 1 else f"{ids}×{self.samples}"

    @property
    def single(self) -> bool:
        return len(self.judges) == 1 and self.samples == 1

    def config(self, base: GenerationConfig, sample: int) -> GenerationConfig:
        """The generation settings of one sample."""
        if self.samples == 1:
            return base
        return base.model_copy(update={"seed": (base.seed or 0) + sample,
                                       "temperature": SAMPLE_TEMPERATURE})


async def judge_with_panel(panel: JudgePanel, checklist: Checklist, instruction: str,
                           view: EvidenceView, *, config: GenerationConfig,
                           per_item: bool = False, evidence: str = "outputs",
                           specificity: EvidenceRules = DEFAULT_SPECIFICITY) -> PanelResult:
    """Every judge's every sample for one trial, and the majority label of each item."""
    asked = [(judge, sample) for judge in panel.judges for sample in range(panel.samples)]
    results = await asyncio.gather(*(
        judge_trial(judge, checklist, instruction, view, per_item=per_item,
                    config=panel.config(config, sample), evidence=evidence,
                    specificity=specificity) for judge, sample in asked))
    out = PanelResult(judgments=[])
    for (judge, sample), result in zip(asked, results, strict=True):
        out.responses += result.responses
        out.failures += result.failures
        out.votes += [Vote(j.item_id, judge.model_id, sample, j) for j in result.judgments]
    if not out.failures:
        out.judgments = majority(out.votes, [item.id for item in checklist.items])
    return out


def majority(votes: Sequence[Vote], item_ids: Sequence[str]) -> list[ItemJudgment]:
    """One judgment per item: the label most decided votes give (ties and no decided vote:
    abstain), citing the first agreeing vote's evidence.

    >>> from agentcredit.schema import ItemJudgment as J
    >>> v = lambda judge, label: Vote("C1", judge, 0, J(item_id="C1", label=label,
    ...                                                  source="llm"))
    >>> [j.label for j in majority([v("a", "yes"), v("b", "yes"), v("c", "no")], ["C1"])]
    ['yes']
    >>> [(j.label, j.reason) for j in majority([v("a", "yes"), v("b", "no")], ["C1"])]
    [('abstain', 'split_vote')]
    """
    by_item: dict[str, list[Vote]] = {}
    for vote in votes:
        by_item.setdefault(vote.item_id, []).append(vote)
    out: list[ItemJudgment] = []
    for item_id in item_ids:
        mine = by_item.get(item_id, [])
        counts = Counter(v.judgment.label for v in mine if v.judgment.label in ("yes", "no"))
        tally = ", ".join(f"{v.judge}#{v.sample}: {v.judgment.label}" for v in mine)
        if counts["yes"] != counts["no"]:
            label: Literal["yes", "no"] = "yes" if counts["yes"] > counts["no"] else "no"
            first = next(v.judgment for v in mine if v.judgment.label == label)
            out.append(first.model_copy(update={
                "rationale": f"{counts[label]} of {len(mine)} votes ({tally}); "
                             f"{first.rationale}"}))
        elif mine:
            reason = "split_vote" if counts["yes"] else mine[0].judgment.reason
            out.append(ItemJudgment(item_id=item_id, label="abstain", reason=reason,
                                    rationale=f"no majority ({tally})", source="llm"))
    return out
