"""The fixed generic checklist: the same questions for every task (GCPC RQ4 ablation).

It shows what task-specific, grounded checklists add over generic questions. It is never
gated (it quotes nothing and references no check by design) and never used for scores
other than that ablation.
"""

from __future__ import annotations

from agentcredit.schema import Checklist, ChecklistItem, RulesRef
from agentcredit.schema.checklist import checklist_hash

GENERIC_VERSION = "1"
GENERIC_QUESTIONS = (
    "The main deliverable the task asks for exists at the end of the run.",
    "The deliverable's content is correct according to the task instruction.",
    "The deliverable has the format and location the task requires.",
    "Every explicit constraint of the task (what must not be done or changed) is respected.",
    "Errors met during the run were resolved rather than left unhandled.",
)


def generic_checklist(task_id: str) -> Checklist:
    """The generic checklist for a task (deterministic, so its hash is stable)."""
    items = tuple(ChecklistItem(id=f"G{i}", text=text, route="judge")
                  for i, text in enumerate(GENERIC_QUESTIONS, start=1))
    return Checklist(task_id=task_id, items=items, rules=RulesRef(id="generic",
                                                                  version=GENERIC_VERSION),
                     synthesizer="generic", prompt_version="none", created_at="",
                     hash=checklist_hash(task_id, items))
