"""Prompt cost of the turn verifier against the default GCPC judge, same trajectories.

For every trajectory: the default judge's prompt (all checklist items in one call over the
evidence view; the checklist derived from the task's verifier) and every prompt the turn
verifier sends (one coarse call, then one fine call per group of criteria whose candidate
turns overlap) under a 3-criterion rubric. Prints prompt tokens (characters / 4) verifier /
judge; the issue's target is <= 1.5. Synthetic 30-step trials always; the 20 real
SkillsBench trials of ``../shared/corpus/skillsbench/trials-more`` (each under the clean
skill written for its task in the gate corpus) when the corpus is present.

    python benchmarks/verifier_cost.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge_prompt_ratio import judged  # the same trials and judge prompts
from tests.judging.synthetic import write_task, write_trials
from tests.rewards import scripted_verifier
from tests.skills import gate_corpus
from tests.skills.helpers import make_skill

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import Lineage, Skill

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SENT: list[int] = []


def _recording(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    SENT.append(len(scripted_verifier.text_of(messages)))
    return scripted_verifier.answer(messages, schema)


def cost(tasks_dir: Path, trials_dir: Path, skill_for: Any,
         rubric: str = "skill") -> tuple[int, int, int, int]:
    """(trajectories, judge tokens, verifier tokens, verifier calls); ``rubric`` checklist or
    both verifies the task's derived checklist (the one the judge is asked about) too."""
    model = ModelClient(make_provider("scripted/verifier-cost"))
    judge = verifier = calls = n = 0
    for task, trial, judge_tokens, _ in judged(tasks_dir, trials_dir):
        judge += judge_tokens
        SENT.clear()
        checklist = derive_checklist(task, load_rules()) if rubric != "skill" else None
        asyncio.run(verify_trial(trial, skill_for(task.id), model, task.instruction,
                                 checklist=checklist,  # type: ignore[arg-type]
                                 rubric=rubric))  # type: ignore[arg-type]
        verifier += sum(SENT) // 4
        calls += len(SENT)
        n += 1
    return n, judge, verifier, calls


def _corpus_skill(task_id: str) -> Skill:
    entry = next(e for e in gate_corpus.built_entries() if e["id"] == task_id)
    return gate_corpus._built_skill(task_id, entry["clean"])


def main() -> None:
    register_script("verifier-cost", _recording)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_task(root / "tasks")
        write_trials(root / "trials", 20, steps=30)
        skill = make_skill("s1", lineage=Lineage(stage="import", sources=("x",)))
        for rubric in ("skill", "checklist", "both"):
            n, j, v, c = cost(root / "tasks", root / "trials", lambda _: skill, rubric)
            print(f"synthetic, --rubric {rubric}: {n} trajectories, judge {j} vs turn "
                  f"verifier {v} prompt tokens in {c} calls: ratio {v / j:.3f} "
                  "(target <= 1.5)")
    if CORPUS.is_dir():
        for rubric in ("skill", "checklist", "both"):
            n, j, v, c = cost(CORPUS / "skillsbench" / "tasks",
                              CORPUS / "skillsbench" / "trials-more", _corpus_skill, rubric)
            print(f"SkillsBench trials-more, --rubric {rubric}: {n} trajectories, judge {j} "
                  f"vs turn verifier {v} prompt tokens in {c} calls: ratio {v / j:.3f}")


if __name__ == "__main__":
    main()
