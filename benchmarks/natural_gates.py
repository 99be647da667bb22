"""The skill gates on natural text nobody wrote for them: false positives per gate.

Every prose sentence of the 142 real SKILL.md files under
``../shared/corpus/skillsbench/skills`` goes through S-TOOL (as a rubric criterion, against
the tools the corpus trials ran, ``Skill`` and ``Read`` among them) and S-LEAK (against
another task's answers); see ``tests/skills/natural_text.py``. Prints one line per gate and,
with ``--misses``, every refusal. ``benchmarks/gate_corpus.py`` shows that the planted
leaks and tool names are still all caught.

    python benchmarks/natural_gates.py [--misses]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.skills import natural_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true",
                        help="print every refusal (confirmed uses included)")
    args = parser.parse_args()
    if not natural_text.SKILLS.is_dir():
        raise SystemExit(f"no shared corpus at {natural_text.SKILLS}")
    for refusals in (natural_text.tool_refusals(), natural_text.leak_refusals()):
        print(refusals.line())
        if args.misses:
            for folder, what, sentence in refusals.refused:
                print(f"    {folder}: {what}: {sentence[:160]}")


if __name__ == "__main__":
    main()
