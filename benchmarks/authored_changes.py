"""How the `authored` rule changes citations on real, unmodified trials.

Every non-empty output line of every step of the real trials in ``../shared/corpus``
(SkillsBench trials, Terminal-Bench 1 and 2) is taken as a candidate quote, the strongest
citation set a judge could make of that log. It prints how many are ``output`` without the
rule and how many of those the rule makes ``authored`` (target: at most 2%), and lists
each change with its step's command, so that each can be explained.
``python benchmarks/authored_changes.py [--show N]``
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from agentcredit.formats import load
from agentcredit.judging.evidence import evidence_steps
from agentcredit.judging.quotes import citation_kind

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
ROOTS = ("skillsbench/trials-more", "skillsbench/trials-sample", "terminal-bench-1/trials-sample",
         "terminal-bench-2")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=40)
    args = parser.parse_args()
    kinds: Counter[str] = Counter()
    changes: list[tuple[str, int, str, str]] = []
    trials = 0
    for root in ROOTS:
        if not (CORPUS / root).exists():
            continue
        for trial in load([CORPUS / root]).trials:
            trials += 1
            for number, step in evidence_steps(trial).items():
                for line in dict.fromkeys(x.strip() for x in step.output.splitlines()):
                    if sum(ch.isalnum() for ch in line) < 4:
                        continue
                    kind = citation_kind(line, step) or "not_found"
                    kinds[kind] += 1
                    if kind == "authored":
                        changes.append((trial.id, number, line[:90], step.action[:90]))
    was_output = kinds["output"] + kinds["authored"]
    share = kinds["authored"] / was_output if was_output else 0.0
    print(f"{trials} real trials; {sum(kinds.values())} output lines as quotes: "
          f"{dict(kinds)}")
    print(f"output citations that become authored: {kinds['authored']} of {was_output} "
          f"= {share:.2%} (target <= 2%)")
    for trial_id, number, line, action in changes[:args.show]:
        print(f"  {trial_id} step {number}: {line!r}\n      action: {action!r}")


if __name__ == "__main__":
    main()
