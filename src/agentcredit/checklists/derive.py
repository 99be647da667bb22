"""Derived checklists: built from the verifier alone, with no LLM.

One assertion-route item per verifier check (grouped when a verifier has more checks than
the rules allow items). The statement comes from the check's docstring, else its
assertion messages, else its name; the quote is the requirement unit (see
:mod:`agentcredit.checklists.units`) that best matches the check's words (lexical alignment
weighted by rarity). Units that no item quotes and no referenced check tests become
``generated`` items marked ``needs_model`` (waived past the rules' item bound), so that
derived checklists pass the same gates and a user sees what a verifier-only checklist leaves
to a model.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass

from agentcredit.checklists.gates import instruction_units, unit_covered_by
from agentcredit.checklists.rules import Rules
from agentcredit.checklists.units import Unit
from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.schema import ChecklistItem, Task, Waiver
from agentcredit.text import normalize_text, sentences, words

_LEAD = re.compile(r"^(?:test|check|verify|ensure|assert|make sure)s?\s+(?:that\s+)?",
                   re.IGNORECASE)
WAIVER_REASON = ("derived from the verifier alone: no verifier check aligns with or tests "
                 "this requirement")


@dataclass(frozen=True)
class CheckFacts:
    """What the verifier source says about one check."""

    check_id: str
    name: str
    docstring: str | None
    messages: tuple[str, ...]
    tested: frozenset[str] = frozenset()
    """Identifiers, attribute names and string constants of the check's source, lower-case,
    whole and split into words: what the check can be said to test."""

    def statement(self) -> str:
        """A requirement-level sentence for the check."""
        if self.docstring:
            return _sentence(self.docstring.strip().splitlines()[0])
        if self.messages:
            return _sentence(self.messages[0])
        return _sentence(" ".join(words(self.name, drop_stop=False)) or self.name)

    def vocabulary(self) -> list[str]:
        return words(" ".join([self.name, self.docstring or "", *self.messages]))


def _sentence(text: str) -> str:
    text = _LEAD.sub("", text.strip()).strip()
    if not text:
        return text
    first = text.split(" ", 1)[0]
    if first.isalpha():  # leave file names and identifiers as written
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def check_facts(task: Task) -> dict[str, CheckFacts]:
    """Docstrings and assertion messages of the task's checks, by check id."""
    facts: dict[str, CheckFacts] = {}
    for rel, source in task.verifier_files.items():
        if not rel.endswith(".py"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        file_name = rel.split("/", 1)[1] if rel.startswith("tests/") else rel
        _walk(tree.body, [file_name], facts)
    return facts


def _walk(body: list[ast.stmt], prefix: list[str], out: dict[str, CheckFacts]) -> None:
    for node in body:
        if isinstance(node, ast.ClassDef):
            _walk(node.body, [*prefix, node.name], out)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name.startswith("test"):
            messages = tuple(m for m in (_message(n) for n in ast.walk(node)) if m)
            facts = CheckFacts("::".join([*prefix, node.name]), node.name,
                               ast.get_docstring(node), messages, _tested(node))
            out[facts.check_id] = facts
            out.setdefault(node.name, facts)  # TB1 parsers report bare names


def _tested(node: ast.AST) -> frozenset[str]:
    found: set[str] = set()
    for sub in ast.walk(node):
        text = sub.id if isinstance(sub, ast.Name) else sub.attr \
            if isinstance(sub, ast.Attribute) else sub.value \
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else None
        if text and len(text) <= 200:
            found.add(text.lower())
            found.update(words(text))
    return frozenset(found)


def tested_words(task: Task) -> dict[str, frozenset[str]]:
    """Per check id (parameters stripped), what its source tests (for the coverage audit:
    :func:`agentcredit.checklists.gates.unit_covered_by`)."""
    return {strip_parameters(check): facts.tested
            for check, facts in check_facts(task).items()}


def _message(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Assert) or node.msg is None:
        return None
    if isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str):
        return node.msg.value
    if isinstance(node.msg, ast.JoinedStr):
        parts = [v.value for v in node.msg.values
                 if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        text = "".join(parts).strip(" :")
        return text or None
    return None


def best_quote(vocabulary: list[str], candidates: list[str]) -> str | None:
    """The candidate sentence sharing the most (rarity-weighted) words, if any.

    >>> best_quote(["regions", "sorted"], ["Write the totals.", "Regions must be sorted."])
    'Regions must be sorted.'
    """
    bags = [set(words(c)) for c in candidates]
    df = Counter(w for bag in bags for w in bag)
    n = len(candidates)
    wanted = set(vocabulary)
    best, best_score = None, 0.0
    for sentence, bag in zip(candidates, bags, strict=True):
        # Rarity-weighted overlap, mildly normalised so short precise sentences win ties.
        score = sum(math.log(1 + n / df[w]) for w in wanted & bag) / math.sqrt(len(bag) or 1)
        if score > best_score:
            best, best_score = sentence, score
    return best


def derive_items(task: Task, rules: Rules) -> tuple[list[ChecklistItem], list[Waiver]]:
    """The derived items and waivers of a task (no LLM)."""
    facts = check_facts(task)
    units = instruction_units(task.instruction, rules)
    candidates = [u.text for u in units] or [s.text for s in sentences(task.instruction)]
    groups = _groups(list(dict.fromkeys(strip_parameters(c) for c in task.checks)), task,
                     rules.bounds.max_items)
    items: list[ChecklistItem] = []
    for group in groups:
        known = [facts[c] for c in group if c in facts]
        if len(group) == 1:
            text = known[0].statement() if known else _sentence(
                " ".join(words(group[0].rsplit("::", 1)[-1], drop_stop=False)))
        else:
            text = _group_statement(group, task)
        text = _outcome_form(text, group[0], rules)
        text = _distinct(text, group[0], items, rules)
        vocab = [w for f in known for w in f.vocabulary()] or words(" ".join(group))
        quote = best_quote(vocab, candidates)
        items.append(ChecklistItem(id=f"C{len(items) + 1}", text=text, route="assertion",
                                   quotes=(quote,) if quote else (), checks=tuple(group)))
    return _for_model(items, units, tested_words(task), rules)


def _for_model(items: list[ChecklistItem], units: list[Unit],
               tested: dict[str, frozenset[str]], rules: Rules,
               ) -> tuple[list[ChecklistItem], list[Waiver]]:
    """The units no item quotes and no referenced check tests, as ``generated`` items marked
    ``needs_model`` (a user sees what a verifier-only checklist misses, and a model judging
    the checklist has them to judge); ``input`` and ``example`` units, and units beyond the
    rules' item bound, are waived."""
    waivers: list[Waiver] = []
    seen: set[str] = set()
    for unit in units:
        if unit_covered_by(unit, items, tested) or normalize_text(unit.text) in seen:
            continue
        seen.add(normalize_text(unit.text))
        if unit.role in ("input", "example"):
            waivers.append(Waiver(sentence=unit.text, reason=f"the instruction's structure marks "
                                  f"this {unit.kind} as an {unit.role}, not a requirement "
                                  f"(under {unit.section or 'no lead-in'!r})"))
            continue
        if len(items) >= rules.bounds.max_items:
            waivers.append(Waiver(sentence=unit.text, reason=f"{WAIVER_REASON} ({unit.kind}; "
                                  f"over the rules' bound of {rules.bounds.max_items} items)"))
            continue
        text = _distinct(f"As the instruction requires ({unit.kind}): {unit.text}",
                         "", items, rules)
        items.append(ChecklistItem(id=f"C{len(items) + 1}", text=text, route="generated",
                                   quotes=(unit.text,), needs_model=True))
    return items, waivers


def _outcome_form(text: str, check: str, rules: Rules) -> str:
    """Docstrings sometimes describe what the test does ("Run the script..."); restate
    those as the outcome that the check passing establishes."""
    first = words(text, drop_stop=False)[:1]
    if first and first[0] in {v.lower() for v in rules.gates.procedural_verbs}:
        name = " ".join(words(check.rsplit("::", 1)[-1], drop_stop=False))
        return f"The verifier's '{name}' check holds: {text[0].lower()}{text[1:]}"
    return text


def _distinct(text: str, check: str, items: list[ChecklistItem], rules: Rules) -> str:
    """Disambiguate a statement that would near-duplicate an earlier item."""
    for suffix in ("", check.rsplit("::", 1)[-1], check):
        candidate = text if not suffix else f"{text.rstrip('.')} (check {suffix})."
        bag = set(words(candidate))
        if all(_jaccard(bag, set(words(i.text))) < rules.gates.near_duplicate_jaccard
               for i in items):
            return candidate
    return f"{text.rstrip('.')} (check {check}, item {len(items) + 1})."


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def _groups(checks: list[str], task: Task, limit: int) -> list[list[str]]:
    if len(checks) <= limit:
        return [[c] for c in checks]
    if task.fail_to_pass:
        f2p = [c for c in checks if c in set(task.fail_to_pass)]
        p2p = [c for c in checks if c not in set(task.fail_to_pass)]
        head = _chunks(f2p, max(1, limit - 1)) if f2p else []
        return head + ([p2p] if p2p else [])
    by_prefix: dict[str, list[str]] = {}
    for check in checks:
        by_prefix.setdefault(check.rsplit("::", 1)[0], []).append(check)
    groups = list(by_prefix.values())
    return groups if len(groups) <= limit else _chunks(checks, limit)


def _chunks(values: list[str], count: int) -> list[list[str]]:
    size = math.ceil(len(values) / count)
    return [values[i:i + size] for i in range(0, len(values), size)]


def _group_statement(group: list[str], task: Task) -> str:
    if task.fail_to_pass and group[0] not in set(task.fail_to_pass):
        return f"The {len(group)} previously passing tests still pass."
    if task.fail_to_pass:
        return f"The {len(group)} tests that the fix must make pass now pass."
    prefix = group[0].rsplit("::", 1)[0]
    return f"The {len(group)} verifier checks of {prefix} pass."
