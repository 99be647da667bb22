"""Deterministic gates: pure functions that check every checklist item against the rules.

Each gate returns a list of :class:`GateFailure` with its own error code; an empty list
means the gate passed. :func:`run_gates` runs them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentcredit.checklists.rules import Rules
from agentcredit.checklists.units import Unit, requirement_units
from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.schema import ChecklistItem, Waiver
from agentcredit.schema.outcomes import GateFailure
from agentcredit.text import normalize_text, quote_in, words

SHAPE = "G-SHAPE"
QUOTE = "G-QUOTE"
CHECK_REF = "G-CHECK"
PROVENANCE = "G-PROVENANCE"
ROUTE = "G-ROUTE"
PROCEDURAL = "G-PROCEDURAL"
DUPLICATE = "G-DUPLICATE"
COVER_CHECKS = "G-COVER-CHECK"
COVER_REQUIREMENTS = "G-COVER-REQ"
WAIVER = "G-WAIVER"
COUNT = "G-COUNT"
HASH = "G-HASH"
LOCK = "G-LOCK"


def gate_shape(items: Sequence[ChecklistItem]) -> list[GateFailure]:
    """Item ids are unique and texts are not empty."""
    out: list[GateFailure] = []
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            out.append(GateFailure(SHAPE, item.id, "duplicate item id"))
        seen.add(item.id)
        if not item.text.strip():
            out.append(GateFailure(SHAPE, item.id, "empty item text"))
    return out


def gate_quotes(items: Sequence[ChecklistItem], instruction: str) -> list[GateFailure]:
    """Every quote occurs verbatim in the instruction (after normalization)."""
    return [
        GateFailure(QUOTE, item.id, f"quote not found in the instruction: {quote!r}")
        for item in items for quote in item.quotes if not quote_in(quote, instruction)
    ]


def gate_check_refs(items: Sequence[ChecklistItem], checks: Sequence[str]) -> list[GateFailure]:
    """Every referenced check id exists among the task's verifier checks."""
    known = {strip_parameters(c) for c in checks}
    return [
        GateFailure(CHECK_REF, item.id, f"unknown verifier check {check!r}")
        for item in items for check in item.checks if strip_parameters(check) not in known
    ]


def gate_provenance(items: Sequence[ChecklistItem]) -> list[GateFailure]:
    """Every item quotes the instruction or references a verifier check."""
    return [GateFailure(PROVENANCE, item.id, "no instruction quote and no verifier check")
            for item in items if not item.quotes and not item.checks]


def gate_routes(items: Sequence[ChecklistItem]) -> list[GateFailure]:
    """assertion items reference checks; generated and judge items quote the instruction,
    and generated items reference no check (no check covers them by definition)."""
    out: list[GateFailure] = []
    for item in items:
        if item.route == "assertion" and not item.checks:
            out.append(GateFailure(ROUTE, item.id, "assertion item references no check"))
        if item.route in ("generated", "judge") and not item.quotes:
            out.append(GateFailure(ROUTE, item.id, f"{item.route} item quotes nothing"))
        if item.route == "generated" and item.checks:
            out.append(GateFailure(ROUTE, item.id, "generated item references checks; "
                                   "use the assertion route"))
    return out


def gate_procedural(items: Sequence[ChecklistItem], rules: Rules) -> list[GateFailure]:
    """Items state outcomes; a text opening with a procedural verb prescribes actions."""
    verbs = {v.lower() for v in rules.gates.procedural_verbs}
    out: list[GateFailure] = []
    for item in items:
        first = words(item.text, drop_stop=False)[:1]
        if first and first[0] in verbs:
            out.append(GateFailure(PROCEDURAL, item.id,
                                   f"prescribes an action ({first[0]!r}); state the outcome"))
    return out


def gate_duplicates(items: Sequence[ChecklistItem], rules: Rules) -> list[GateFailure]:
    """No two items say nearly the same thing (word-set Jaccard at or over the threshold)."""
    out: list[GateFailure] = []
    bags = [(item, set(words(item.text))) for item in items]
    for i, (item, bag) in enumerate(bags):
        for other, other_bag in bags[:i]:
            union = bag | other_bag
            if union and len(bag & other_bag) / len(union) >= rules.gates.near_duplicate_jaccard:
                out.append(GateFailure(DUPLICATE, item.id, f"near-duplicate of {other.id}"))
                break
    return out


def gate_check_coverage(items: Sequence[ChecklistItem], checks: Sequence[str],
                        rules: Rules) -> list[GateFailure]:
    """Every verifier check is referenced by at least one item."""
    if not rules.coverage.every_check_referenced:
        return []
    referenced = {strip_parameters(c) for item in items for c in item.checks}
    return [GateFailure(COVER_CHECKS, None, f"verifier check {check!r} is not referenced")
            for check in dict.fromkeys(strip_parameters(c) for c in checks)
            if check not in referenced]


def instruction_units(instruction: str, rules: Rules) -> list[Unit]:
    """The requirement units the rules ask a checklist to answer for
    (:mod:`agentcredit.checklists.units`).

    >>> from agentcredit.checklists.rules import load_rules
    >>> [u.text for u in instruction_units(
    ...     "It is sunny today. Don't touch the data. Write out.csv.", load_rules())]
    ["Don't touch the data.", 'Write out.csv.']
    """
    return requirement_units(instruction, rules.coverage.requirement_cues,
                             rules.coverage.kinds(),
                             frozenset(v.lower() for v in rules.coverage.imperative_verbs),
                             frozenset(normalize_text(t) for t in rules.coverage.boilerplate))


def unit_covered_by(unit: Unit, items: Sequence[ChecklistItem],
                    tested: Mapping[str, frozenset[str]] | None = None) -> list[str]:
    """The ids of the items that answer for a unit: an item quoting it (or quoted by it),
    or an item referencing a check that tests it (the check's source holds the field's
    name, or most of the unit's content words).

    >>> item = ChecklistItem(id="C1", text="Mass is right.", route="assertion",
    ...                      checks=("test_mass",))
    >>> unit_covered_by(Unit("field", '"main_part_mass": 12.5', 0), [item],
    ...                 {"test_mass": frozenset({"main_part_mass", "mass"})})
    ['C1']
    """
    norm = normalize_text(unit.text)
    found = [item.id for item in items for q in item.quotes
             if (n := normalize_text(q)) and (n in norm or norm in n)]
    if tested:
        wanted = _tested_terms(unit)
        for item in items:
            known = frozenset().union(*(tested.get(strip_parameters(c), frozenset())
                                        for c in item.checks))
            if wanted and item.id not in found and _tests(wanted, known, unit.kind):
                found.append(item.id)
    return list(dict.fromkeys(found))


def _tested_terms(unit: Unit) -> frozenset[str]:
    if unit.kind == "field":
        key = unit.text.split(":", 1)[0].strip(" `*\"'")
        return frozenset({key.lower()}) if key else frozenset()
    return frozenset(w for w in words(unit.text) if len(w) > 2)


def _tests(wanted: frozenset[str], known: frozenset[str], kind: str) -> bool:
    if kind == "field":
        return wanted <= known
    return len(wanted) >= 2 and len(wanted & known) >= 0.6 * len(wanted)


@dataclass(frozen=True)
class UnitCoverage:
    """How a checklist answers for one requirement unit."""

    unit: Unit
    items: tuple[str, ...]
    """Ids of the items that quote it or reference a check that tests it."""
    waiver: str | None
    """The reason it was waived, if it was."""

    @property
    def answered(self) -> bool:
        return bool(self.items) or self.waiver is not None

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.unit.kind, "role": self.unit.role, "section": self.unit.section,
                "text": self.unit.text, "start": self.unit.start,
                "items": list(self.items), "waiver": self.waiver}


def unit_coverage(items: Sequence[ChecklistItem], waivers: Sequence[Waiver], instruction: str,
                  rules: Rules, tested: Mapping[str, frozenset[str]] | None = None,
                  ) -> list[UnitCoverage]:
    """Every requirement unit of the instruction with the items and waiver that answer it.

    >>> from agentcredit.checklists.rules import load_rules
    >>> item = ChecklistItem(id="C1", text="Out exists.", route="generated",
    ...                      quotes=("Write out.csv.",))
    >>> [(c.unit.text, c.items) for c in unit_coverage([item], [], "Write out.csv.",
    ...                                                  load_rules())]
    [('Write out.csv.', ('C1',))]
    """
    reasons = {normalize_text(w.sentence): w.reason for w in waivers if w.reason.strip()}
    found = []
    for unit in instruction_units(instruction, rules):
        norm = normalize_text(unit.text)
        waiver = next((r for w, r in reasons.items() if w and (w in norm or norm in w)), None)
        found.append(UnitCoverage(unit, tuple(unit_covered_by(unit, items, tested)), waiver))
    return found


def gate_requirement_coverage(items: Sequence[ChecklistItem], waivers: Sequence[Waiver],
                              instruction: str, rules: Rules,
                              tested: Mapping[str, frozenset[str]] | None = None,
                              ) -> list[GateFailure]:
    """Every requirement unit is quoted by an item, covered by an item referencing a check
    that tests it, or waived with a reason."""
    out: list[GateFailure] = []
    for waiver in waivers:
        if not waiver.reason.strip():
            out.append(GateFailure(WAIVER, None, f"waiver without a reason: {waiver.sentence!r}"))
        if not quote_in(waiver.sentence, instruction):
            out.append(GateFailure(WAIVER, None,
                                   f"waived sentence not in the instruction: {waiver.sentence!r}"))
    if not rules.coverage.every_requirement_covered:
        return out
    for covered in unit_coverage(items, waivers, instruction, rules, tested):
        if not covered.answered:
            out.append(GateFailure(COVER_REQUIREMENTS, None, f"{covered.unit.kind} neither "
                                   f"covered nor waived: {covered.unit.text!r}"))
    return out


def gate_count(items: Sequence[ChecklistItem], rules: Rules) -> list[GateFailure]:
    """The number of items lies within the rules' bounds."""
    n = len(items)
    low, high = rules.bounds.min_items, rules.bounds.max_items
    if low <= n <= high:
        return []
    return [GateFailure(COUNT, None, f"{n} items; the rules allow {low} to {high}")]


def run_gates(items: Sequence[ChecklistItem], waivers: Sequence[Waiver], instruction: str,
              checks: Sequence[str], rules: Rules,
              tested: Mapping[str, frozenset[str]] | None = None) -> list[GateFailure]:
    """Every gate, in a fixed order; ``tested`` gives, per check id, the words its source
    tests (:func:`agentcredit.checklists.derive.tested_words`), for the coverage audit."""
    return [
        *gate_shape(items),
        *gate_quotes(items, instruction),
        *gate_check_refs(items, checks),
        *gate_provenance(items),
        *gate_routes(items),
        *gate_procedural(items, rules),
        *gate_duplicates(items, rules),
        *gate_check_coverage(items, checks, rules),
        *gate_requirement_coverage(items, waivers, instruction, rules, tested),
        *gate_count(items, rules),
    ]
