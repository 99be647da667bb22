"""Prompts and answer schemas of the SkillBank stages (versioned together).

Every prompt takes records the stage may see: a :class:`Task` (no oracle material by
construction), trials rendered through the judge's evidence view, and earlier stages'
answers. Applicability, guidance and rubric rules follow SkillRubric §3.1 and C.1-C.4.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from pydantic import BaseModel, Field

from agentcredit.evidence.view import render_evidence
from agentcredit.llm.types import Message
from agentcredit.schema import Skill, Task, Trial
from agentcredit.schema.outcomes import GateFailure

PROMPT_VERSION = "skillbank-2"

DUAL_VIEW_RULES = """\
A skill has three parts.
- applicability: 1-3 sentences saying which tasks the skill fits (kind of input, goal, \
constraints), written so that it can be matched against a new task's instruction.
- guidance: 3 to 5 stages for the acting agent, each a short name and what to achieve and \
how to approach it. Guidance is non-prescriptive: any other method that reaches the same \
evidence state is equally good. No fixed paths, no task-specific answers, no values that \
only this task's solution or tests contain.
- rubric: 3 to 5 criteria for an evaluator who reads the execution log. Each criterion has \
a statement (an intermediate goal that causally matters for the final outcome), evidence \
(which observable output - tool output, file content, message, value shown - would show it \
met) and failure (which observable output would show it not met), and a positive weight. \
Criteria are method-agnostic: never name a specific tool, command, program or library; \
judge what was achieved and shown, not how."""

SYSTEM = ("You distil reusable procedural skills from AI agents' execution logs, for "
          "other agents to act with and for evaluators to check progress with. You answer "
          "with one JSON object in the requested schema.")


class TeacherAnalysis(BaseModel):
    """Stage 1 (intra-teacher): what one teacher's trials of one task teach."""

    recurring_strategies: list[str] = Field(description="Strategies used across trials.")
    effective_decisions: list[str] = Field(description="Decisions that led to progress.")
    failure_patterns: list[str] = Field(description="What went wrong and where.")
    transferable_techniques: list[str] = Field(description="Techniques useful beyond this task.")
    summary: str = Field(description="The candidate skill in two or three sentences.")


class ConsolidatedSkill(BaseModel):
    """Stage 2 (cross-teacher): one model-agnostic skill for a task."""

    title: str
    shared_strategies: list[str] = Field(description="Strategies the teachers agree on.")
    alternatives: list[str] = Field(description="Complementary valid approaches, kept.")
    disagreements: list[str] = Field(default_factory=list, description="Where they differ.")
    pitfalls: list[str] = Field(description="Failure patterns to avoid.")
    checkpoints: list[str] = Field(description="Intermediate states that show progress.")


class DraftStage(BaseModel):
    name: str
    action: str


class DraftCriterion(BaseModel):
    statement: str
    evidence: str
    failure: str
    weight: float = 1.0


class DualViewDraft(BaseModel):
    """Stage 3 (dual view): applicability, guidance stages, rubric criteria."""

    title: str
    applicability: str
    guidance: list[DraftStage]
    rubric: list[DraftCriterion]


class MergeAnswer(BaseModel):
    """Stage 4 (cross-task): merge a cluster into one skill, or reject the merge."""

    coherent: bool = Field(description="False when the skills do not share one procedure.")
    reason: str = Field(description="Why the merge is or is not coherent.")
    merged: DualViewDraft | None = Field(default=None, description="The merged skill.")


class RubricDraft(BaseModel):
    """A rubric derived from imported guidance."""

    rubric: list[DraftCriterion]


def _task_block(task: Task) -> str:
    return f"TASK ID: {task.id}\n<instruction>\n{task.instruction}\n</instruction>"


def teacher_messages(task: Task, teacher: str, trials: Sequence[Trial], *,
                     budget_tokens: int) -> list[Message]:
    """Stage 1: one teacher's trials of one task, through the evidence view (each trial
    gets an equal share of ``budget_tokens``, at least 1,000 unless the budget is smaller:
    a small context window asks for less)."""
    per_trial = max(min(1_000, budget_tokens), budget_tokens // max(1, len(trials)))
    blocks = []
    for trial in trials:
        view = render_evidence(trial, budget_tokens=per_trial)
        blocks.append(f'<trial id="{escape(trial.id)}" outcome="{trial.outcome}">\n{view.text}\n'
                      "</trial>")
    user = (
        f"{_task_block(task)}\n\nTEACHER: {teacher}\n\n" + "\n\n".join(blocks) + "\n\n"
        "Analyse these trials of one teacher together (successes and failures alike): the "
        "recurring strategies, the decisions that made progress, the failure patterns and "
        "the techniques that would transfer to similar tasks. Reduce the variation between "
        "single trials to one candidate skill. Do not copy task-specific answers or values.\n"
        "Answer as JSON: {\"recurring_strategies\": [...], \"effective_decisions\": [...], "
        "\"failure_patterns\": [...], \"transferable_techniques\": [...], \"summary\": \"...\"}")
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def consolidate_messages(task: Task, analyses: dict[str, TeacherAnalysis]) -> list[Message]:
    """Stage 2: the teachers' candidates for one task."""
    blocks = "\n\n".join(f'<candidate teacher="{teacher}">\n'
                         f"{json.dumps(a.model_dump(), indent=1)}\n</candidate>"
                         for teacher, a in sorted(analyses.items()))
    user = (
        f"{_task_block(task)}\n\n{blocks}\n\n"
        "Consolidate these candidates from different teachers into one skill: separate the "
        "strategies they share (high confidence) from complementary alternatives and "
        "disagreements, keep every valid alternative procedure, keep intermediate "
        "checkpoints, and make the result model-agnostic and actionable. Exclude "
        "task-specific answers and ground-truth values.\n"
        "Answer as JSON: {\"title\", \"shared_strategies\", \"alternatives\", "
        "\"disagreements\", \"pitfalls\", \"checkpoints\"}")
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def dual_view_messages(task: Task, consolidated: ConsolidatedSkill) -> list[Message]:
    """Stage 3: restructure a consolidated skill into applicability, guidance and rubric."""
    user = (
        f"{_task_block(task)}\n\n<skill>\n{json.dumps(consolidated.model_dump(), indent=1)}"
        f"\n</skill>\n\n{DUAL_VIEW_RULES}\n\nRestructure the skill into these three parts.\n"
        "Answer as JSON: {\"title\", \"applicability\", \"guidance\": [{\"name\", "
        "\"action\"}], \"rubric\": [{\"statement\", \"evidence\", \"failure\", \"weight\"}]}")
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def merge_messages(skills: Sequence[Skill]) -> list[Message]:
    """Stage 4: a cluster of task-level skills with similar applicability."""
    blocks = "\n\n".join(
        f'<skill id="{s.id}">\n' + json.dumps(
            {"title": s.title, "applicability": s.applicability,
             "guidance": [g.model_dump() for g in s.guidance],
             "rubric": [c.model_dump(exclude={"id"}) for c in s.rubric or ()]}, indent=1)
        + "\n</skill>" for s in skills)
    user = (
        f"{blocks}\n\nThese task-level skills have similar applicability. If they share one "
        "procedure, merge them into one capability-level skill: consolidate the shared "
        "principles, keep alternatives that the skills support, and remove what is specific "
        "to a single task. If they do not share one procedure, reject the merge "
        "(coherent: false) and say why.\n\n" + DUAL_VIEW_RULES + "\n\nAnswer as JSON: "
        "{\"coherent\": true|false, \"reason\": \"...\", \"merged\": {\"title\", "
        "\"applicability\", \"guidance\", \"rubric\"} or null}")
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def import_rubric_messages(skill: Skill) -> list[Message]:
    """A rubric for imported guidance: 3-5 observable, method-agnostic checkpoints."""
    user = (
        f"SKILL: {skill.title}\nAPPLIES WHEN: {skill.applicability}\n\n<guidance>\n"
        f"{skill.guidance_text()}\n</guidance>\n\nWrite the evaluator-facing rubric for this "
        "guidance: 3 to 5 criteria, each an intermediate goal the guidance leads to, with the "
        "observable evidence that shows it met and the observable output that shows it not "
        "met, and a positive weight. Criteria are method-agnostic: never name a tool, "
        "command, program or library.\nAnswer as JSON: {\"rubric\": [{\"statement\", "
        "\"evidence\", \"failure\", \"weight\"}]}")
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def repair_message(failures: Sequence[GateFailure]) -> Message:
    """What the model is told when its skill fails gates."""
    listed = "\n".join(f"- {f}" for f in failures)
    return Message(role="user", content=(
        "The skill failed these deterministic gates:\n" + listed + "\nReturn the complete "
        "corrected answer as one JSON object in the same schema."))
