"""Checklist synthesis with an LLM, checked by the gates, repaired a capped number of times.

The prompt is built from the rules, the task instruction and the verifier source only. The
synthesizer takes a :class:`Task`, which by construction holds no oracle material, and
nothing else from the task's world: no trial, trajectory or outcome can reach the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from agentcredit.checklists.derive import tested_words
from agentcredit.checklists.freeze import make_checklist
from agentcredit.checklists.gates import instruction_units, run_gates
from agentcredit.checklists.rules import Rules
from agentcredit.gating import generate_gated
from agentcredit.llm.client import Model
from agentcredit.llm.types import Message
from agentcredit.llm.window import fit_to_window
from agentcredit.redact import task_owned_values, task_text
from agentcredit.schema import Checklist, ChecklistItem, Route, Task, Waiver
from agentcredit.schema.outcomes import Deferred, Failed, GateFailure, Rejected
from agentcredit.text import shorten

PROMPT_VERSION = "gcpc-synth-3"
MAX_VERIFIER_CHARS = 60_000
MIN_FILE_CHARS = 400  # less of a file than this tells the model nothing useful
MIN_VERIFIER_CHARS = 0  # the floor when fitting a window: the instruction and check ids only


class DraftItem(BaseModel):
    """One item as the model proposes it."""

    id: str = Field(description="C1, C2, ...")
    text: str = Field(description="The requirement-level outcome, one sentence.")
    route: Route
    quotes: list[str] = Field(default_factory=list, description="Verbatim instruction quotes.")
    checks: list[str] = Field(default_factory=list, description="Verifier check ids.")


class DraftWaiver(BaseModel):
    """A requirement sentence deliberately not covered."""

    sentence: str
    reason: str


class DraftChecklist(BaseModel):
    """The synthesis answer schema."""

    items: list[DraftItem]
    waivers: list[DraftWaiver] = Field(default_factory=list)


@dataclass(frozen=True)
class Rejection:
    """Why synthesis produced no checklist for a task."""

    task_id: str
    reason: str
    failures: list[GateFailure] = field(default_factory=list)
    attempts: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"task_id": self.task_id, "reason": self.reason, "attempts": self.attempts,
                "failures": [{"code": f.code, "item_id": f.item_id, "message": f.message}
                             for f in self.failures]}


def synthesis_messages(task: Task, rules: Rules, *,
                       verifier_chars: int = MAX_VERIFIER_CHARS) -> list[Message]:
    """The synthesis prompt: rules, instruction and verifier source; nothing else.

    The instruction and the check ids are always whole (items quote and reference them);
    the verifier source is cut to ``verifier_chars`` (see :func:`_verifier_text`)."""
    if not isinstance(task, Task):
        raise TypeError(f"synthesis takes a Task, not {type(task).__name__}")
    routes = "\n".join(f"- {name}: {text}" for name, text in rules.routes.items())
    system = (
        "You write evaluation checklists for agent benchmark tasks, following fixed rules.\n\n"
        f"ITEM CONTRACT\n{rules.item_contract}\n\nPROVENANCE\n{rules.provenance}\n\n"
        f"ROUTES\n{routes}\n\nCOVERAGE\n"
        + ("- Every verifier check id listed must be referenced by at least one item.\n"
           if rules.coverage.every_check_referenced else "")
        + ("- Every requirement unit listed must be quoted by an item, answered by an item "
           "that references a check testing it, or waived with a reason in `waivers`.\n"
           if rules.coverage.every_requirement_covered else "")
        + f"\nBOUNDS\nBetween {rules.bounds.min_items} and {rules.bounds.max_items} items.\n\n"
        "Answer with one JSON object: {\"items\": [{\"id\", \"text\", \"route\", \"quotes\", "
        "\"checks\"}], \"waivers\": [{\"sentence\", \"reason\"}]}."
    )
    verifier, note = _verifier_text(task, verifier_chars)
    checks = "\n".join(f"- {c}" for c in task.checks) or "(none: the verifier reports no checks)"
    requirements = _units_by_kind(task, rules)
    user = (
        f"TASK ID: {task.id}\n\n<instruction>\n{task.instruction}\n</instruction>\n\n"
        f"<verifier>\n{verifier}\n</verifier>{note}\n\n"
        f"VERIFIER CHECK IDS (reference exactly these):\n{checks}\n\n"
        "REQUIREMENT UNITS (quote each in an item, reference a check that tests it, or "
        f"waive it with a reason):\n{requirements or '(none found)'}\n\n"
        "Write the checklist."
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


_ROLE_TITLES = {
    "requirement": "requirements (cover each)",
    "note": "notes on tolerance, format and constraints (cover each)",
    "input": "what the agent is given (cover, or waive with a reason)",
    "example": "examples (cover, or waive with a reason)",
}


def _units_by_kind(task: Task, rules: Rules) -> str:
    """The instruction's units grouped by role, each with its kind, under the section
    (heading and lead-in) it stands in, for the synthesis prompt."""
    units = instruction_units(task.instruction, rules)
    blocks = []
    for role, title in _ROLE_TITLES.items():
        lines, section = [], ""
        for unit in (u for u in units if u.role == role):
            if unit.section != section:
                section = unit.section
                lines.append(f"(under {_section(section)})")
            lines.append(f"- [{unit.kind}] {unit.text}")
        if lines:
            blocks.append(f"{title}:\n" + "\n".join(lines))
    return "\n".join(blocks)


def _section(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 80 else flat[:77] + "...")


def _verifier_text(task: Task, max_chars: int = MAX_VERIFIER_CHARS) -> tuple[str, str]:
    """The verifier files within ``max_chars``: whole files first (in path order); a file
    that no longer fits whole is shown head and tail when a useful part of it fits, else
    left out; the note names what was cut or left out."""
    parts: list[str] = []
    used = 0
    omitted: list[str] = []
    cut: list[str] = []
    for path, text in sorted(task.verifier_files.items()):
        block = f'<file path="{path}">\n{text}\n</file>'
        room = max_chars - used
        if len(block) > room:
            if room < MIN_FILE_CHARS:
                omitted.append(path)
                continue
            block = f'<file path="{path}">\n{shorten(text, room - len(path) - 40)}\n</file>'
            cut.append(path)
        parts.append(block)
        used += len(block)
    notes = [f"omitted for length: {', '.join(omitted)}"] if omitted else []
    notes += [f"cut to head and tail for length: {', '.join(cut)}"] if cut else []
    note = "".join(f"\n({n})" for n in notes)
    return "\n".join(parts), note


def repair_message(failures: list[GateFailure]) -> Message:
    """What the model is told when its checklist fails gates."""
    listed = "\n".join(f"- {f}" for f in failures)
    return Message(role="user", content=(
        "The checklist failed these deterministic gates:\n" + listed +
        "\nReturn the complete corrected checklist as one JSON object. Quotes must be copied "
        "character for character from the instruction; check ids must be copied exactly."))


def draft_to_items(draft: DraftChecklist) -> tuple[list[ChecklistItem], list[Waiver]]:
    """Records from a validated draft."""
    items = [ChecklistItem(id=d.id, text=d.text.strip(), route=d.route,
                           quotes=tuple(q for q in d.quotes if q.strip()),
                           checks=tuple(d.checks)) for d in draft.items]
    waivers = [Waiver(sentence=w.sentence, reason=w.reason) for w in draft.waivers]
    return items, waivers


async def synthesize(task: Task, model: Model, rules: Rules, *,
                     max_repairs: int = 2) -> Checklist | Rejection:
    """A gated checklist for ``task``, or the reason there is none."""
    drafts: list[tuple[list[ChecklistItem], list[Waiver]]] = []
    tested = tested_words(task)

    def build(draft: DraftChecklist) -> tuple[list[ChecklistItem], list[Waiver]]:
        drafts.append(draft_to_items(draft))
        return drafts[-1]

    def gates(record: tuple[list[ChecklistItem], list[Waiver]]) -> list[GateFailure]:
        return run_gates(record[0], record[1], task.instruction, task.checks, rules, tested)

    messages = await fit_to_window(
        model, lambda chars: synthesis_messages(task, rules, verifier_chars=chars),
        MAX_VERIFIER_CHARS, floor=MIN_VERIFIER_CHARS)
    result = await generate_gated(
        model, messages, DraftChecklist, build, gates, repair_message,
        max_repairs=max_repairs,
        around=lambda: task_owned_values(task_text(task.instruction, task.verifier_files)))
    if isinstance(result, Deferred):
        return Rejection(task.id, "model call failed: deferred: queued for a batch file",
                         [], len(drafts) + 1)
    if isinstance(result, Failed):
        return Rejection(task.id, result.reason, [], len(drafts) + 1)
    if isinstance(result, Rejected):
        return Rejection(task.id, f"gates still failing after {max_repairs} repairs",
                         result.failures, result.attempts)
    assert result is not None
    items, waivers = result
    return make_checklist(task.id, items, waivers, rules, synthesizer=model.model_id,
                          prompt_version=PROMPT_VERSION)
