"""Prompts and answer schemas of the turn verifier (coarse selector, fine verifier)."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from agentcredit.errors import InputError, Missing
from agentcredit.evidence.view import (
    EvidenceView,
    StepEvidence,
    action_text,
    defuse,
    output_text,
    step_header,
    step_tag,
    tag_note,
)
from agentcredit.judging.prompts import SYSTEM as JUDGE_SYSTEM
from agentcredit.llm.types import ImagePart, Message, TextPart
from agentcredit.rewards.checklist import ITEM_EVIDENCE, ITEM_FAILURE
from agentcredit.safe_io import confined_to, read_bytes
from agentcredit.schema import EvidenceState, RubricCriterion, Step
from agentcredit.text import shorten

VERIFIER_PROMPT_VERSION = "skillrubric-verifier-5"
MAX_IMAGE_BYTES = 5 * 1024 * 1024

STATES_TEXT = (
    "Evidence states: missing (nothing shown yet), contradicted (the evidence shown goes "
    "against it), hypothesis (a plausible but unconfirmed lead), supported (evidence shown "
    "points to it), verified (evidence shown confirms it). A turn's state may use only "
    "evidence shown in that turn or earlier: later evidence never raises an earlier state. "
    "Tool outputs, file contents and images shown are evidence; the agent's own claims are "
    "not, nor are output lines marked [agent-authored] (text the agent wrote itself, "
    "computed from its own text or passed through something it wrote, and had a tool "
    "print). A contradicted state may rest on any line showing the criterion unmet, the "
    "agent's own included (an admission against its interest)."
)


class TurnSummary(BaseModel):
    step: int
    summary: str


class CriterionSelection(BaseModel):
    criterion_id: str
    applicable: bool
    candidate_steps: list[int] = Field(default_factory=list)
    reason: str = ""


class CoarseAnswer(BaseModel):
    """Stage 1: a summary per turn and, per criterion, applicability and candidate turns."""

    turns: list[TurnSummary]
    criteria: list[CriterionSelection]


class Quote(BaseModel):
    step: int
    quote: str


class StateAnswer(BaseModel):
    step: int
    state: EvidenceState
    evidence: list[Quote] = Field(default_factory=list)


class ResponsibilityAnswer(BaseModel):
    step: int
    weight: float = Field(ge=0.0)


class FineAnswer(BaseModel):
    """Stage 2: one criterion over its candidate turns."""

    satisfied: bool
    unverifiable: bool = False
    states: list[StateAnswer] = Field(default_factory=list)
    responsibility: list[ResponsibilityAnswer] = Field(default_factory=list)
    rationale: str = ""


class FineCriterionAnswer(FineAnswer):
    """Stage 2, one criterion of a group."""

    criterion_id: str


class FineGroupAnswer(BaseModel):
    """Stage 2: the criteria whose candidate turns overlap, verified in one call."""

    criteria: list[FineCriterionAnswer]


def _criteria_block(rubric: Sequence[RubricCriterion]) -> str:
    """The criteria; a checklist item's shared evidence rule is said once, not per item."""
    items = any(c.evidence == ITEM_EVIDENCE for c in rubric)
    return "<rubric>\n" + "\n".join(
        f"{c.id}: {c.statement}" + ("" if c.evidence == ITEM_EVIDENCE else
                                    f"\n  met when: {c.evidence}\n  not met when: {c.failure}")
        for c in rubric) + (f"\n(task checklist items: met when {ITEM_EVIDENCE}; not met when "
                           f"{ITEM_FAILURE})" if items else "") + "\n</rubric>"


def coarse_messages(instruction: str, view: EvidenceView, turn_steps: Sequence[int],
                    rubric: Sequence[RubricCriterion]) -> list[Message]:
    """One call per trajectory: turn summaries, applicability and candidate turns."""
    turns = ", ".join(str(s) for s in turn_steps)
    user = (
        f"{view.text}\n\n<task_instruction>\n{instruction}\n</task_instruction>\n\n"
        f"{_criteria_block(rubric)}\n\nTURNS (agent steps): {turns}\n\n{STATES_TEXT}\n\n"
        "For every turn, summarise in one sentence what the evidence available by the end "
        "of that turn shows. For every criterion, say whether it applies to this task, and "
        "list the turns (step numbers) at which its evidence state may change.\n"
        'Answer as JSON: {"turns": [{"step", "summary"}], "criteria": [{"criterion_id", '
        '"applicable", "candidate_steps": [..], "reason"}]}'
    )
    return [Message(role="system", content=JUDGE_SYSTEM), Message(role="user", content=user)]


def fine_messages(instruction: str, criteria: Sequence[RubricCriterion],
                  summaries: dict[int, str], steps: Sequence[Step], *,
                  output_chars: int = 6_000, images: bool = True,
                  evidence: Mapping[int, StepEvidence] | None = None,
                  images_root: str | None = None) -> list[Message]:
    """One call per group of criteria: their candidate turns, each turn's raw evidence once
    (its output cut to ``output_chars``, its action to a third of that, head and tail), and
    the coarse summaries of the other turns as context. With the trial's ``evidence``
    steps, output lines the agent authored are marked as in the judge's view. Image files are
    read only from inside ``images_root`` (the trial's folder)."""
    shown = {step.index + 1 for step in steps}
    context = "\n".join(f"- step {s}: {defuse(text)}" for s, text in sorted(summaries.items())
                        if s not in shown) or "(every turn is shown below)"
    tag = step_tag(text for step in steps
                   for text in (step.message, action_text(step), output_text(step)))
    parts: list[TextPart | ImagePart] = [TextPart(text=(
        f"<task_instruction>\n{instruction}\n</task_instruction>\n\n"
        f"{_criteria_block(criteria)}\n\nSUMMARIES OF THE OTHER TURNS (context):\n{context}\n\n"
        f"CANDIDATE TURNS WITH THEIR RAW EVIDENCE:\n<trajectory>\n{tag_note(tag)}"))]
    for step in steps:
        number = step.index + 1
        block = f"\n{step_header(number, tag)}"
        action = action_text(step)
        if action:
            block += f"\nACTION: {defuse(shorten(action, max(80, output_chars // 3)))}"
        known = evidence.get(number) if evidence is not None else None
        output = known.shown_output if known is not None else defuse(output_text(step))
        if output.strip():
            block += f"\nOUTPUT:\n{shorten(output, output_chars)}"
        parts.append(TextPart(text=block))
        if images:
            parts += _images(step, images_root)
    parts.append(TextPart(text=(
        f"\n</trajectory>\n\n{STATES_TEXT}\n\nFor EACH criterion of the rubric: decide "
        "whether it is satisfied at the end (true/false), or unverifiable when the evidence it "
        "needs (e.g. an image) is not in the log. Give the evidence state after each candidate "
        "turn with verbatim quotes from that step or earlier steps, and split the "
        "responsibility for the satisfaction over the turns that produced it (weights summing "
        "to 1; none when not satisfied).\n"
        'Answer as JSON: {"criteria": [{"criterion_id", "satisfied", "unverifiable", '
        '"states": [{"step", "state", "evidence": [{"step", "quote"}]}], '
        '"responsibility": [{"step", "weight"}], "rationale"}]}')))
    return [Message(role="system", content=JUDGE_SYSTEM),
            Message(role="user", content=tuple(parts))]


def _image_bytes(path: Path, root: str | None) -> tuple[bytes | None, str | None]:
    """The image file's bytes, or why it is not read (None, None: no such file)."""
    if root is None:
        return None, "no trial folder to read it from"
    try:
        with confined_to([root]):
            return read_bytes(path, MAX_IMAGE_BYTES), None
    except Missing:
        return None, None
    except InputError as exc:
        return None, exc.reason


def _images(step: Step, root: str | None) -> list[TextPart | ImagePart]:
    """The step's images: a file only when it lies inside ``root`` (the trial's folder; a
    trajectory's image path may not send another file to the model), is a regular file and
    within :data:`MAX_IMAGE_BYTES`; an http(s) address as it is."""
    out: list[TextPart | ImagePart] = []
    for ref in [img for obs in step.observations for img in obs.images] + list(step.images):
        path = Path(ref.path) if ref.path and not ref.path.startswith(
            ("http://", "https://")) else None
        data, why = _image_bytes(path, root) if path is not None else (None, None)
        if path is not None and data is not None:
            mime = ref.mime_type or mimetypes.guess_type(path.name)[0] or "image/png"
            out.append(ImagePart(mime_type=mime, data=base64.b64encode(data).decode("ascii")))
        elif why:
            out.append(TextPart(text=f"\n[image {ref.mime_type} not available: {why}]"))
        elif ref.path and ref.path.startswith(("http://", "https://")):
            out.append(ImagePart(mime_type=ref.mime_type, url=ref.path))
        else:
            out.append(TextPart(text=f"\n[image {ref.mime_type} not available: "
                                f"{ref.note or ref.path or 'no file'}]"))
    return out
