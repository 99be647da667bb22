"""Which rubric's turn-level S tracks the official outcome: checklist, skill, both, judge.

On the real SkillsBench trials of ``../shared/corpus/skillsbench/trials-more`` (those with
steps whose task's checklist derives from its verifier), every model request is answered
by one scripted model that decides from the log (``tests/rewards/log_reader.py``: a
requirement is met when an OUTPUT line shown shares enough of its content words; the line
is cited). The same rule answers the GCPC judge and the turn verifier, and it never sees
the outcome or the checks. Per trial:

- judge: the GCPC judge's labels of the derived checklist, fused with the official outcome
  (PASS credits assertion items, FAIL adds the endpoint), partial credit;
- checklist: the turn verifier's S with ``--rubric checklist`` (items grounded by the
  trial's per-check results and the outcome, with the endpoint criterion);
- skill: S with ``--rubric skill`` (the clean skill written for the task in the gate
  corpus, ``tests/skills/gate_corpus``);
- both: S of each part from the ``--rubric both`` verdict (the same calls);
- and, to show what the outcome and the checks contribute, the judge's labels and the
  checklist S without them (no fusion; per-check results and outcome withheld).

Prints AUC against PASS with task-clustered 95% intervals and the command's criteria.
Circularity: the judge's and the checklist's scores both fold in the official outcome (and
the checklist's the per-check results); the rows without them are the fair comparison of
what the log shows.

    python benchmarks/checklist_rubric.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge_prompt_ratio import judged  # the same trials and evidence views
from tests.rewards import log_reader
from tests.skills import gate_corpus

from agentcredit.analysis.stats import clustered_auc
from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.judging.llm_judge import judge_trial
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.rewards.checklist import criteria_of
from agentcredit.rewards.table import rubric_satisfaction
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import Checklist, Skill, TrialVerdict
from agentcredit.scoring.fusion import fuse
from agentcredit.scoring.metrics import score

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def _skill(task_id: str) -> Skill:
    entry = next(e for e in gate_corpus.built_entries() if e["id"] == task_id)
    return gate_corpus._built_skill(task_id, entry["clean"])


def _s(verdict: Any, criteria: Any) -> float:
    assert isinstance(verdict, TrialVerdict), verdict
    value = rubric_satisfaction(verdict, criteria)
    return 0.0 if value is None else value


def collect() -> tuple[dict[str, list[float]], list[bool], list[str]]:
    register_script("log-reader", log_reader.answer)
    model = ModelClient(make_provider("scripted/log-reader"))
    rules = load_rules()
    scores: dict[str, list[float]] = {}
    passed, tasks = [], []
    for task, trial, _, view in judged(CORPUS / "skillsbench" / "tasks",
                                       CORPUS / "skillsbench" / "trials-more"):
        checklist = derive_checklist(task, rules)
        assert isinstance(checklist, Checklist)
        skill = _skill(task.id)
        labels = asyncio.run(judge_trial(model, checklist, task.instruction, view)).judgments
        fused = fuse(checklist, labels, trial.outcome)
        row = {"judge": score(fused.labels.values(), fused.endpoint).partial_credit or 0.0,
               "judge, log only": score(j.label for j in labels).partial_credit or 0.0}
        for mode in ("checklist", "skill", "both"):
            verdict = asyncio.run(verify_trial(trial, skill, model, task.instruction,
                                               checklist=checklist, rubric=mode))
            row[mode] = _s(verdict, criteria_of(skill, checklist, mode))  # type: ignore[arg-type]
            if mode == "both":
                row["both: checklist part"] = _s(verdict, criteria_of(None, checklist,
                                                                      "checklist"))
                row["both: skill part"] = _s(verdict, skill.rubric)
        blind = trial.model_copy(update={"checks": {}, "outcome": "none"})
        verdict = asyncio.run(verify_trial(blind, None, model, task.instruction,
                                           checklist=checklist, rubric="checklist"))
        row["checklist, log only"] = _s(verdict, criteria_of(None, checklist, "checklist"))
        for name, value in row.items():
            scores.setdefault(name, []).append(value)
        passed.append(trial.outcome == "pass")
        tasks.append(task.id)
    return scores, passed, tasks


def main() -> None:
    if not CORPUS.is_dir():
        raise SystemExit(f"no shared corpus at {CORPUS}")
    scores, passed, tasks = collect()
    print("python benchmarks/checklist_rubric.py (answers: tests/rewards/log_reader.py)")
    print(f"{len(passed)} trials ({sum(passed)} PASS / {len(passed) - sum(passed)} FAIL), "
          f"{len(set(tasks))} tasks; AUC of S against PASS, task-clustered 95% interval")
    auc: dict[str, float] = {}
    for name, values in scores.items():
        interval, _ = clustered_auc(values, passed, tasks, np.random.default_rng(0), draws=2000)
        auc[name] = interval.estimate or float("nan")
        low, high = interval.ci_low or 0.0, interval.ci_high or 0.0
        print(f"  {name:22s} AUC {auc[name]:.3f} [{low:.3f}, {high:.3f}]  "
              f"mean S {np.mean(values):.3f}")
    print(f"checklist vs judge: {auc['checklist'] - auc['judge']:+.3f} (within 0.05: "
          f"{abs(auc['checklist'] - auc['judge']) <= 0.05}); checklist vs skill: "
          f"{auc['checklist'] - auc['skill']:+.3f} (>= 0.15: "
          f"{auc['checklist'] - auc['skill'] >= 0.15}); log only: checklist "
          f"{auc['checklist, log only']:.3f} vs judge {auc['judge, log only']:.3f}")


if __name__ == "__main__":
    main()
