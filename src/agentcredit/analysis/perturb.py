"""Evidence perturbation (GCPC RQ4): does a Yes follow the evidence it cites?

For sampled items judged Yes with cited evidence, the decisive value inside the cited
output is replaced by a plausible wrong one (a number shifted, a boolean flipped, a name
altered) and the item is judged again on the altered log. A judge that reads evidence
should now say No (or at least Abstain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentcredit.evidence.view import render_evidence
from agentcredit.judging.llm_judge import judge_trial
from agentcredit.llm.client import Model
from agentcredit.schema import Checklist, ItemJudgment, Trial

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_BOOLEAN = {"true": "false", "false": "true", "True": "False", "False": "True",
            "yes": "no", "no": "yes", "passed": "failed", "PASSED": "FAILED", "ok": "error",
            "OK": "ERROR", "success": "failure", "Success": "Failure"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def perturb_value(quote: str, rng: np.random.Generator) -> str | None:
    """The quote with its decisive value replaced by a plausible wrong one (None if none).

    >>> perturb_value("Total: 42", np.random.default_rng(0)) != "Total: 42"
    True
    >>> perturb_value("status true", np.random.default_rng(0))
    'status false'
    """
    numbers = list(_NUMBER.finditer(quote))
    if numbers:
        match = numbers[-1]
        text = match.group()
        if "." in text:
            decimals = len(text.split(".")[1])
            value = float(text) * float(rng.choice([0.8, 0.9, 1.1, 1.25])) + 10 ** -decimals
            new = f"{value:.{decimals}f}"
        else:
            new = str(int(text) + int(rng.integers(1, 10)))
        return quote[:match.start()] + new + quote[match.end():]
    for word, flipped in _BOOLEAN.items():
        found = re.search(rf"\b{re.escape(word)}\b", quote)
        if found:
            return quote[:found.start()] + flipped + quote[found.end():]
    names = list(_NAME.finditer(quote))
    if names:
        match = max(names, key=lambda m: len(m.group()))
        word = match.group()
        return quote[:match.start()] + word[::-1] + "_x" + quote[match.end():]
    return None


def perturbed_trial(trial: Trial, step_number: int, quote: str, replacement: str) -> Trial | None:
    """The trial with ``quote`` replaced in the outputs of step ``step_number``."""
    steps = list(trial.steps)
    index = step_number - 1
    if not 0 <= index < len(steps):
        return None
    step = steps[index]
    changed = False
    observations = []
    for obs in step.observations:
        if quote in obs.text:
            observations.append(obs.model_copy(update={"text": obs.text.replace(quote,
                                                                                replacement)}))
            changed = True
        else:
            observations.append(obs)
    if not changed:
        return None
    steps[index] = step.model_copy(update={"observations": tuple(observations)})
    return trial.model_copy(update={"steps": tuple(steps)})


@dataclass(frozen=True)
class Candidate:
    """An item judged Yes whose citation can be perturbed."""

    trial: Trial
    checklist: Checklist
    judgment: ItemJudgment


async def perturbation_study(candidates: list[Candidate], model: Model, instructions: dict[str,
                             str], rng: np.random.Generator, *, n: int) -> dict[str, Any]:
    """Re-judge up to ``n`` perturbed items; shares moving to No and to No-or-Abstain."""
    order: list[int] = [int(i) for i in rng.permutation(len(candidates))[:n]]
    results: list[dict[str, Any]] = []
    for index in order:
        cand = candidates[int(index)]
        citation = cand.judgment.evidence[0]
        replacement = perturb_value(citation.quote, rng)
        altered = perturbed_trial(cand.trial, citation.step, citation.quote, replacement) \
            if replacement else None
        if altered is None or replacement is None:
            continue
        item = next(i for i in cand.checklist.items if i.id == cand.judgment.item_id)
        single = cand.checklist.model_copy(update={"items": (item,)})
        judged = await judge_trial(model, single, instructions.get(cand.trial.id, ""),
                                   render_evidence(altered))
        label = judged.judgments[0].label if judged.judgments else "abstain"
        results.append({"trial_id": cand.trial.id, "item_id": item.id, "step": citation.step,
                        "original": citation.quote, "perturbed": replacement, "label": label})
    total = len(results)
    to_no = sum(1 for r in results if r["label"] == "no")
    to_not_yes = sum(1 for r in results if r["label"] in ("no", "abstain"))
    return {"perturbed": total, "candidates": len(candidates),
            "share_to_no": to_no / total if total else None,
            "share_to_no_or_abstain": to_not_yes / total if total else None,
            "items": results}
