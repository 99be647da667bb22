"""Skill gates on the labelled gate corpus: precision and recall per gate.

The corpus (``tests/data/gate_corpus``) holds rubric criteria written for real Agent Skills
of the shared SkillsBench corpus: natural ones the gates must accept, and planted ones that
name a tool of the skill's guidance (S-TOOL must catch them) or name nothing observable
(S-EVIDENCE must catch them), criteria whose tool names are plain English words
(``english_words.yaml``), and built skills. Prints one line per label with its rate, then per
gate its false positives (natural texts it refused), false negatives (planted texts it let
through), precision and recall.

    python benchmarks/gate_corpus.py [--misses] [--refresh]

``--refresh`` re-extracts each corpus skill's guidance tools from ``../shared`` into
``tests/data/gate_corpus/guidance_tools.json`` (after a change to what counts as a tool).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.skills import gate_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print every miss")
    parser.add_argument("--refresh", action="store_true",
                        help="re-extract the guidance tools from ../shared first")
    args = parser.parse_args()
    if args.refresh:
        if not gate_corpus.SKILLS.is_dir():
            raise SystemExit(f"no shared corpus at {gate_corpus.SKILLS}")
        paths = [entry["path"] for entry in gate_corpus.imported_entries()]
        tools = gate_corpus.extract_tools(paths)
        gate_corpus.GUIDANCE_TOOLS.write_text(json.dumps(tools, indent=1, sort_keys=True) + "\n")
        print(f"refreshed {gate_corpus.GUIDANCE_TOOLS} ({len(tools)} skills)")
        context = gate_corpus.extract_build_context()
        gate_corpus.BUILD_CONTEXT.write_text(json.dumps(context, indent=1) + "\n")
        print(f"refreshed {gate_corpus.BUILD_CONTEXT} ({len(context['leaks'])} tasks)")
    groups = [("imported rubrics", gate_corpus.score_imported()),
              ("English words as tool names", gate_corpus.score_english())]
    groups += [("built skills", gate_corpus.score_built())] if gate_corpus.BUILT.exists() else []
    for title, scores in groups:
        print(f"== {title}")
        for tally in scores.values():
            print(tally.line())
            if args.misses:
                print("".join(f"    miss: {m}\n" for m in tally.misses), end="")
        natural = scores["natural"]
        for key, gate in (("tool", "S-TOOL"), ("unobservable", "S-EVIDENCE"), ("leak", "S-LEAK")):
            if key not in scores:
                continue
            caught = scores[key].right
            missed = scores[key].total - caught
            false = sum(1 for m in natural.misses if f"[{gate}]" in m)
            precision = caught / (caught + false) if caught + false else 1.0
            print(f"{gate:<11} false positives {false:>2} of {natural.total:<3} natural  "
                  f"false negatives {missed:>2} of {scores[key].total:<3} planted  "
                  f"precision {precision:.3f}  recall {scores[key].rate:.3f}")


if __name__ == "__main__":
    main()
