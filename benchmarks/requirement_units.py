"""Requirement units against real instructions: recall of list items and table rows over
every instruction in ``../shared/corpus``, precision against hand-written units, and how
many units an instruction yields.

1. **Structure recall.** Over every ``instruction.md`` of SkillsBench and Terminal-Bench 2,
   the list items and table body rows found by a plain line scan (independent of the
   markdown parser the extractor uses; fenced blocks skipped) and the share that reach a
   unit shown in the synthesis prompt (target >= 0.97 per corpus). A missed item is printed.
2. **Harness and boilerplate.** The share of units that are harness status lines (left out)
   and the share whose text recurs in at least half of a corpus's instructions (boilerplate a
   rules file can drop with ``coverage.boilerplate``).
3. **Units per instruction**: median and max, all roles and the requirement/note roles.
4. **Labelled precision and recall.** ``benchmarks/data/requirement_units.yaml`` holds, for
   real instructions, the requirements written by hand, in two groups: ``tuned`` (the
   extractor was adjusted while looking at them) and ``held_out`` (labelled before it was run
   on them). A predicted unit matches a hand-written one when, normalized, one contains the
   other and the shorter is at least half the longer. Precision counts the units the prompt
   asks to be covered (roles ``requirement`` and ``note``); ``input`` and ``example`` units
   may be waived and are counted apart.

``python benchmarks/requirement_units.py [--misses]``
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import Counter
from pathlib import Path

import yaml

from agentcredit.checklists.gates import instruction_units
from agentcredit.checklists.rules import load_rules
from agentcredit.text import normalize_text

try:
    from agentcredit.checklists.units import HARNESS_LINE as _HARNESS
except ImportError:  # before harness lines were recognised
    _HARNESS = re.compile(r"^\W*(?:exit[ _]?code|return[ _]?code)\W*:?\s*-?\d+\W*$", re.I)

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1] / "shared" / "corpus"
BENCHMARKS = ("skillsbench", "terminal-bench-2")
COVERED_ROLES = ("requirement", "note")

_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(\S.*)$")
_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}")
_FENCE = re.compile(r"^\s*(```|~~~)")


def same(a: str, b: str) -> bool:
    x, y = normalize_text(a), normalize_text(b)
    short, long_ = sorted((x, y), key=len)
    return bool(short) and short in long_ and len(short) >= 0.5 * len(long_)


def structure_lines(text: str) -> list[str]:
    """List items and table body rows by a plain line scan (fenced blocks skipped)."""
    found, fenced, table_row = [], False, -1
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if _ROW.match(line):
            after_separator = i > 0 and _SEPARATOR.match(lines[i - 1]) is not None
            table_row = i if after_separator or table_row == i - 1 else -1
            if table_row == i and not _SEPARATOR.match(line):
                found.append(line.strip())
            continue
        if (match := _ITEM.match(line)) is not None:
            found.append(match.group(1).strip())
    return found


def role(unit: object) -> str:
    return str(getattr(unit, "role", "requirement"))


def reaches(item: str, units: list[str]) -> bool:
    norm = normalize_text(item).strip("| ")
    return bool(norm) and any(norm in u or (len(u) >= 0.5 * len(norm) and u in norm)
                              for u in units)


def corpus_table(show_misses: bool) -> None:
    rules = load_rules()
    print("| corpus | instructions | list items + table rows | reach a unit | recall "
          "| units/instr. median (max) | requirement+note median (max) | input+example units "
          "| harness | boilerplate |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for bench in BENCHMARKS:
        paths = sorted((CORPUS / bench).rglob("instruction.md"))
        if not paths:
            print(f"skipped {bench}: not in {CORPUS}")
            continue
        wanted = hit = 0
        per, required, seen = [], [], Counter()
        harness = 0
        misses = []
        for path in paths:
            text = path.read_text(encoding="utf-8")
            units = instruction_units(text, rules)
            norms = [normalize_text(u.text) for u in units]
            per.append(len(units))
            required.append(sum(role(u) in COVERED_ROLES for u in units))
            seen.update(set(norms))
            harness += sum(bool(_HARNESS.match(line)) for line in text.splitlines())
            for item in structure_lines(text):
                wanted += 1
                if reaches(item, norms):
                    hit += 1
                else:
                    misses.append((path.parent.name, item))
        total = sum(per)
        shared = sum(n for text, n in seen.items() if n >= len(paths) / 2)
        print(f"| {bench} | {len(paths)} | {wanted} | {hit} | {hit / max(wanted, 1):.3f} | "
              f"{statistics.median(per):g} ({max(per)}) | {statistics.median(required):g} "
              f"({max(required)}) | {total - sum(required)} | {harness / max(total, 1):.3f} | "
              f"{shared / max(total, 1):.3f} |")
        if show_misses:
            for task, item in misses:
                print(f"    missed {bench}/{task}: {item[:100]!r}")


def labelled(labels: dict[str, list[list[str]]], show_misses: bool) -> None:
    rules = load_rules()
    hits: Counter[str] = Counter()
    wanted: Counter[str] = Counter()
    right: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    waivable = 0
    misses, extras = [], []
    for task, units in labels.items():
        path = CORPUS / task / "instruction.md"
        if not path.exists():
            print(f"skipped {task}: not in {CORPUS}")
            continue
        found = instruction_units(path.read_text(encoding="utf-8"), rules)
        for kind, text in units:
            wanted[kind] += 1
            if any(same(text, u.text) for u in found):
                hits[kind] += 1
            else:
                misses.append((task, kind, text))
        for unit in found:
            if role(unit) not in COVERED_ROLES:
                waivable += 1
                continue
            predicted[unit.kind] += 1
            if any(same(text, unit.text) for _, text in units):
                right[unit.kind] += 1
            else:
                extras.append((task, unit.kind, unit.text))
    recall = sum(hits.values()) / max(sum(wanted.values()), 1)
    precision = sum(right.values()) / max(sum(predicted.values()), 1)
    print(f"{len(labels)} instructions, {sum(wanted.values())} hand-written units, "
          f"{sum(predicted.values())} extracted as requirement or note, {waivable} as input "
          "or example")
    print(f"overall: recall {recall:.3f}, precision {precision:.3f}")
    for kind in sorted(set(wanted) | set(predicted)):
        print(f"  {kind:<11} recall {hits[kind]}/{wanted[kind]}  precision "
              f"{right[kind]}/{predicted[kind]}")
    if show_misses:
        for task, kind, text in misses:
            print(f"missed  {task} [{kind}] {text[:100]!r}")
        for task, kind, text in extras:
            print(f"extra   {task} [{kind}] {text[:100]!r}")


def main() -> None:
    show = "--misses" in sys.argv[1:]
    print("== every instruction of the corpus")
    corpus_table(show)
    groups = yaml.safe_load((HERE / "data" / "requirement_units.yaml").read_text())
    for name, labels in groups.items():
        print(f"== labelled: {name}")
        labelled(labels, show)


if __name__ == "__main__":
    main()
