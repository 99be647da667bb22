"""Frozen checklists: the persisted form of a task's GCPC checklist."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentcredit.hashing import canonical_sha256
from agentcredit.schema.base import Record

Route = Literal["assertion", "generated", "judge"]


class ChecklistItem(Record):
    """One requirement-level outcome, grounded in the instruction and/or the verifier."""

    id: str = Field(description="Item id, unique within the checklist (e.g. C1).")
    text: str = Field(description="What must be true at the end.")
    route: Route = Field(description="assertion, generated or judge.")
    quotes: tuple[str, ...] = Field(default=(), description="Verbatim instruction quotes.")
    checks: tuple[str, ...] = Field(default=(), description="Verifier check ids referenced.")
    needs_model: bool = Field(
        default=False, exclude_if=lambda value: not value,
        description="A generated item that a derived (verifier-only) checklist lists for a "
        "model: a requirement unit no verifier check tests. Without a model it is judged "
        "abstain (needs_model). Left out of the file and the hash when false.")


class Waiver(Record):
    """An instruction requirement deliberately left without an item, and why."""

    sentence: str = Field(description="The requirement sentence, verbatim.")
    reason: str = Field(description="Why no item covers it.")


class RulesRef(Record):
    """Which rules a checklist was built and checked with."""

    id: str
    version: str


class Checklist(Record):
    """A task's frozen checklist. ``hash`` covers the task id and the items."""

    task_id: str = Field(description="The task this checklist belongs to.")
    items: tuple[ChecklistItem, ...] = Field(description="The checklist items.")
    waivers: tuple[Waiver, ...] = Field(default=(), description="Waived requirements.")
    rules: RulesRef = Field(description="Rules id and version.")
    synthesizer: str = Field(description="provider/model that wrote it, or 'derived'.")
    prompt_version: str = Field(description="Version of the synthesis prompt ('none' if derived).")
    created_at: str = Field(description="ISO 8601 UTC time of freezing.")
    hash: str = Field(description="sha256 of the canonical JSON of task_id and items.")


def checklist_hash(task_id: str, items: tuple[ChecklistItem, ...] | list[ChecklistItem]) -> str:
    """sha256 of the canonical JSON of the task id and the items (a :class:`Checklist`'s
    ``hash``)."""
    return canonical_sha256({"task_id": task_id,
                             "items": [item.model_dump(mode="json") for item in items]})
