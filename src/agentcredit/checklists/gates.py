"""Deterministic gates: pure functions that check every checklist item against the rules.

Each gate returns a list of :class:`GateFailure` with its own error code; an empty list
means the gate passed. :func:`run_gates` runs them all.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcredit.checklists.rules import Rules
from agentcredit.checklists.text import normalize_text, quote_in, sentences, words
from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.gating import GateFailure
from agentcredit.schema import ChecklistItem, Waiver

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


def requirement_sentences(instruction: str, rules: Rules) -> list[str]:
    """Sentences of the instruction that state requirements (by the rules' cues).

    >>> from agentcredit.checklists.rules import load_rules
    >>> requirement_sentences("It is sunny today. Don't touch the data. Write out.csv.",
    ...                       load_rules())
    ["Don't touch the data.", 'Write out.csv.']
    """
    cues = [" " + " ".join(words(c, drop_stop=False)) + " " for c in
            rules.coverage.requirement_cues]
    verbs = {v.lower() for v in rules.coverage.imperative_verbs}
    found: list[str] = []
    for sentence in sentences(instruction):
        tokens = words(sentence.text, drop_stop=False)
        joined = " " + " ".join(tokens) + " "
        if (tokens and tokens[0] in verbs) or any(cue in joined for cue in cues):
            found.append(sentence.text)
    return found


def gate_requirement_coverage(items: Sequence[ChecklistItem], waivers: Sequence[Waiver],
                              instruction: str, rules: Rules) -> list[GateFailure]:
    """Every requirement sentence is quoted by an item or waived with a reason."""
    out: list[GateFailure] = []
    for waiver in waivers:
        if not waiver.reason.strip():
            out.append(GateFailure(WAIVER, None, f"waiver without a reason: {waiver.sentence!r}"))
        if not quote_in(waiver.sentence, instruction):
            out.append(GateFailure(WAIVER, None,
                                   f"waived sentence not in the instruction: {waiver.sentence!r}"))
    if not rules.coverage.every_requirement_covered:
        return out
    quotes = [normalize_text(q) for item in items for q in item.quotes]
    waived = [normalize_text(w.sentence) for w in waivers if w.reason.strip()]
    for sentence in requirement_sentences(instruction, rules):
        norm = normalize_text(sentence)
        if any(q and (q in norm or norm in q) for q in quotes + waived):
            continue
        out.append(GateFailure(COVER_REQUIREMENTS, None,
                               f"requirement neither covered nor waived: {sentence!r}"))
    return out


def gate_count(items: Sequence[ChecklistItem], rules: Rules) -> list[GateFailure]:
    """The number of items lies within the rules' bounds."""
    n = len(items)
    low, high = rules.bounds.min_items, rules.bounds.max_items
    if low <= n <= high:
        return []
    return [GateFailure(COUNT, None, f"{n} items; the rules allow {low} to {high}")]


def run_gates(items: Sequence[ChecklistItem], waivers: Sequence[Waiver], instruction: str,
              checks: Sequence[str], rules: Rules) -> list[GateFailure]:
    """Every gate, in a fixed order."""
    return [
        *gate_shape(items),
        *gate_quotes(items, instruction),
        *gate_check_refs(items, checks),
        *gate_provenance(items),
        *gate_routes(items),
        *gate_procedural(items, rules),
        *gate_duplicates(items, rules),
        *gate_check_coverage(items, checks, rules),
        *gate_requirement_coverage(items, waivers, instruction, rules),
        *gate_count(items, rules),
    ]
