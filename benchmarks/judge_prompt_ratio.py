"""Prompt size of the default judge (all items in one call) versus the holistic judge.

Both prompts share the trajectory's evidence view; the checklist adds its items. Prints the
ratio of prompt tokens default / holistic over the same trajectories (target <= 1.15), for
synthetic 30-step trials with 10-item checklists and, when ../shared/corpus is present, for
the real SkillsBench trials with their derived checklists.

    python benchmarks/judge_prompt_ratio.py
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.judging.synthetic import write_task, write_trials

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.evidence.view import EvidenceView
from agentcredit.formats import load
from agentcredit.judging import render_evidence
from agentcredit.judging.prompts import holistic_messages, items_messages
from agentcredit.schema import Checklist, Task, Trial

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def tokens(messages: list) -> int:  # type: ignore[type-arg]
    return sum(len(m.text()) for m in messages) // 4


def judged(tasks_dir: Path, trials_dir: Path) -> Iterator[tuple[Task, Trial, int, EvidenceView]]:
    """(task, trial, default judge prompt tokens, evidence view) of every trial with steps
    whose task has a derivable checklist."""
    rules = load_rules()
    tasks = {t.id: t for t in load([tasks_dir]).tasks}
    for trial in load([trials_dir]).trials:
        task = tasks.get(trial.task_id or "")
        if task is None or not trial.steps:
            continue
        checklist = derive_checklist(task, rules)
        if not isinstance(checklist, Checklist):
            continue
        view = render_evidence(trial)
        yield task, trial, tokens(items_messages(task.instruction, view,
                                                 list(checklist.items))), view


def ratio(tasks_dir: Path, trials_dir: Path) -> tuple[int, int, int]:
    default = holistic = n = 0
    for task, _, judge_tokens, view in judged(tasks_dir, trials_dir):
        default += judge_tokens
        holistic += tokens(holistic_messages(task.instruction, view))
        n += 1
    return n, default, holistic


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_task(root / "tasks")
        write_trials(root / "trials", 50, steps=30)
        n, d, h = ratio(root / "tasks", root / "trials")
    print(f"synthetic: {n} trials, default {d} vs holistic {h} prompt tokens: "
          f"ratio {d / h:.3f} (target <= 1.15)")
    if CORPUS.is_dir():
        n, d, h = ratio(CORPUS / "skillsbench" / "tasks", CORPUS / "skillsbench" / "trials-more")
        print(f"SkillsBench trials-more: {n} trials, default {d} vs holistic {h}: "
              f"ratio {d / h:.3f}")


if __name__ == "__main__":
    main()
