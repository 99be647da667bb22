"""SkillRubric's dual-view skills and the SkillBank that holds them.

A skill describes one procedure twice: as **guidance** the actor reads (stages, each a name
and what to do; never a fixed path or an answer) and as a **rubric** an evaluator checks
(observable, method-agnostic criteria with the evidence that shows each one met or not).
Its **applicability** text is what retrieval matches against a task. A bank is frozen like
a checklist: a sha256 ``hash`` over its content, and a lock file beside it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentcredit.schema.base import Record

SkillStage = Literal["intra-teacher", "cross-teacher", "dual-view", "cross-task", "import",
                     "evolve"]


SKILL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A skill id is one safe path component: no '/', no '..', nothing hidden, at most 128."""


class SkillFile(Record):
    """One file of a skill folder: its content hash and permission bits."""

    sha256: str = Field(description="sha256 of the file's bytes.")
    mode: int = Field(default=0o644, description="Permission bits (e.g. 0o755 for scripts).")
    size: int = Field(default=0, description="Bytes.")


class GuidanceStage(Record):
    """One stage of the actor-facing procedure."""

    name: str = Field(description="Short name of the stage, e.g. 'Locate the evidence'.")
    action: str = Field(description="What to do in this stage; non-prescriptive: another "
                        "method that reaches the same evidence state is as good.")


class RubricCriterion(Record):
    """One evaluator-facing checkpoint."""

    id: str = Field(description="Criterion id, unique within the skill (R1, R2, ...).")
    statement: str = Field(description="What must have been achieved.")
    evidence: str = Field(description="Which observable output would show it is met.")
    failure: str = Field(description="Which observable output would show it is not met.")
    weight: float = Field(default=1.0, description="Relative weight (positive).")


class ParentRef(Record):
    """A skill this one was made from."""

    skill_id: str = Field(description="The parent skill's id.")
    version: int = Field(description="The parent's version at the time.")


class Lineage(Record):
    """Where a skill came from: the trials, teachers and skills behind it."""

    stage: SkillStage = Field(description="The build stage (or import) that produced it.")
    source_tasks: tuple[str, ...] = Field(default=(), description="Task ids it was built from.")
    teachers: tuple[str, ...] = Field(default=(), description="Teachers (agent+model).")
    trial_ids: tuple[str, ...] = Field(default=(), description="Trials it was distilled from.")
    parents: tuple[ParentRef, ...] = Field(default=(), description="Skills merged into it.")
    sources: tuple[str, ...] = Field(
        default=(), description="Files it was imported from (SKILL.md, SkillRL JSON).")
    model: str | None = Field(default=None, description="provider/model that wrote it.")
    note: str | None = Field(default=None, description="Why it exists (e.g. merge rationale).")


class Skill(Record):
    """A dual-view skill: applicability, guidance for the actor, rubric for the evaluator."""

    id: str = Field(description="Skill id, unique within the bank (lower-case, hyphens); "
                    "also a folder name on export, so one safe path component: letters, "
                    "digits, '.', '_' and '-', starting with a letter or digit.",
                    pattern=SKILL_ID_PATTERN)
    title: str = Field(description="Human-readable title.")
    applicability: str = Field(description="When the skill applies; what retrieval matches.")
    guidance: tuple[GuidanceStage, ...] = Field(
        default=(), description="3-5 actor-facing stages (empty when `body` is verbatim).")
    body: str | None = Field(
        default=None, description="Verbatim actor-facing text (an imported SKILL.md body); "
        "when set it is the guidance shown to actors and exported as is.")
    rubric: tuple[RubricCriterion, ...] | None = Field(
        default=None, description="3-5 evaluator-facing criteria; None = no rubric yet.")
    lineage: Lineage = Field(description="Where the skill came from.")
    version: int = Field(default=1, description="Incremented by every accepted revision.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Other SKILL.md front-matter fields, as written.")
    files: dict[str, SkillFile] = Field(
        default_factory=dict, exclude_if=lambda files: not files,
        description="Every file of an imported skill folder (SKILL.md included), by path "
        "relative to the folder; kept in BANK/files/<id>/ and exported byte for byte.")

    def guidance_text(self) -> str:
        """The actor-facing text: the verbatim body, or the stages as a numbered list."""
        if self.body is not None:
            return self.body
        lines = [f"# {self.title}", ""]
        for number, stage in enumerate(self.guidance, 1):
            lines.append(f"{number}. **{stage.name}**: {stage.action}")
        lines += ["", "These stages describe goals, not a fixed path: any method that reaches "
                  "the same evidence is fine."]
        return "\n".join(lines) + "\n"


class EvolutionEvent(Record):
    """One co-evolution decision: the proposal, the gate's numbers and the outcome."""

    round: int = Field(description="1-based round of `skills evolve`.")
    skill_id: str = Field(description="The skill revised.")
    kind: Literal["guidance", "rubric"] = Field(description="Which view was revised.")
    from_version: int = Field(description="Version the proposal started from.")
    to_version: int | None = Field(default=None, description="New version when accepted.")
    proposed: bool = Field(description="False when no genuine defect was diagnosed.")
    accepted: bool = Field(default=False, description="Whether the gate accepted it.")
    reason: str = Field(description="One line: the gate's (or the proposer's) reason.")
    defects: tuple[str, ...] = Field(default=(), description="The diagnosed defects.")
    before: str = Field(default="", description="The revised view's text before.")
    after: str = Field(default="", description="The proposed text.")
    numbers: dict[str, Any] = Field(default_factory=dict, description="Every gate number.")
    bank_hash: str = Field(description="The bank's hash after this decision.")
    at: str = Field(description="ISO 8601 UTC time of the decision.")


class SkillBank(Record):
    """A frozen set of skills and how it was made."""

    skills: tuple[Skill, ...] = Field(description="The skills, ordered by id.")
    benchmark: str | None = Field(default=None, description="Benchmark the trials came from.")
    embedding: str = Field(description="Embedding backend used for clustering and retrieval.")
    rules_version: str = Field(description="Version of the skill gates' rules.")
    prompt_version: str = Field(description="Version of the build prompts ('none' if unused).")
    synthesizer: str | None = Field(default=None, description="provider/model of the build.")
    tau: float | None = Field(default=None, description="Cross-task clustering threshold.")
    created_at: str = Field(description="ISO 8601 UTC time of freezing.")
    hash: str = Field(description="sha256 of the canonical JSON of the skills.")
    history: tuple[EvolutionEvent, ...] = Field(
        default=(), description="Co-evolution decisions, oldest first.")

    def get(self, skill_id: str) -> Skill | None:
        """The skill with this id, or None."""
        return next((s for s in self.skills if s.id == skill_id), None)
