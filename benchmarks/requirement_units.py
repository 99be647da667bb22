"""Precision and recall of requirement-unit extraction against hand-written units.

``benchmarks/data/requirement_units.yaml`` holds, for real instructions of
``../shared/corpus``, the units written by hand, in two groups: ``tuned`` (the extractor was
adjusted while looking at them) and ``held_out`` (labelled before it was run on them, never
tuned on). A predicted unit matches a hand-written one when, normalized, one contains the
other and the shorter is at least half the longer. It prints precision and recall overall
(targets: recall >= 0.95, precision >= 0.9) and per kind (recall by the hand-written kind,
precision by the predicted kind), then every miss and every extra unit.
``python benchmarks/requirement_units.py``
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from agentcredit.checklists.gates import instruction_units
from agentcredit.checklists.rules import load_rules
from agentcredit.formats.join import normalize_text

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1] / "shared" / "corpus"


def same(a: str, b: str) -> bool:
    x, y = normalize_text(a), normalize_text(b)
    short, long_ = sorted((x, y), key=len)
    return bool(short) and short in long_ and len(short) >= 0.5 * len(long_)


def main() -> None:
    groups = yaml.safe_load((HERE / "data" / "requirement_units.yaml").read_text())
    for name, labels in groups.items():
        print(f"== {name}")
        score(labels)


def score(labels: dict[str, list[list[str]]]) -> None:
    rules = load_rules()
    hits: Counter[str] = Counter()
    wanted: Counter[str] = Counter()
    right: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
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
            predicted[unit.kind] += 1
            if any(same(text, unit.text) for _, text in units):
                right[unit.kind] += 1
            else:
                extras.append((task, unit.kind, unit.text))
    recall = sum(hits.values()) / max(sum(wanted.values()), 1)
    precision = sum(right.values()) / max(sum(predicted.values()), 1)
    print(f"{len(labels)} instructions, {sum(wanted.values())} hand-written units, "
          f"{sum(predicted.values())} extracted")
    print(f"overall: recall {recall:.3f} (target >= 0.95), precision {precision:.3f} "
          "(target >= 0.9)")
    for kind in sorted(set(wanted) | set(predicted)):
        print(f"  {kind:<11} recall {hits[kind]}/{wanted[kind]}  precision "
              f"{right[kind]}/{predicted[kind]}")
    for task, kind, text in misses:
        print(f"missed  {task} [{kind}] {text[:100]!r}")
    for task, kind, text in extras:
        print(f"extra   {task} [{kind}] {text[:100]!r}")


if __name__ == "__main__":
    main()
