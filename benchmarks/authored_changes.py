"""How the provenance rules change citations on real, unmodified trials.

Every output line (4 or more letters or digits) of every step of the real trials in
``../shared/corpus`` (SkillsBench trials, Terminal-Bench 1 and 2) is taken as a candidate
quote, the strongest citation set a judge could make of that log. It prints how many are
``output`` without the rules and how many of those become ``authored`` (the agent's own
text one step removed), ``unspecific`` (too short, or found in most steps of the log),
``given`` (a sentence of the instruction repeated), ``forged`` (after a line imitating a
step header) or ``harness`` (a status line, label or line number only),
against the target (at most 2% change), and lists each change with its step's command, so
that each can be explained. Changes are split in two: a harness's per-step status line (a
line that, digits aside, the log shows in 3 or more steps: gemini-cli's ``Exit Code: 0``,
``Directory: (root)``, mini-swe-agent's ``<returncode>0</returncode>``), which proves nothing
about one step by design, and content lines (what a tool showed of the world), whose change
is the cost of the rules.
A demoted line is counted as the agent's own text when, as a whole line or a whole quoted
string, it is something the agent typed (a line of a file it wrote, a string its program
prints, its commit message behind ``git log``'s hash); the rest are *genuine tool output
demoted* (target <= 0.2% of content lines), printed in full for a person to read. A ``no``
may still cite every one of them (admissions against interest: ``evidence/quotes.py``).

It reads every real trial there is (``skillsbench/trials-*``, Terminal-Bench 1 and 2,
SWE-bench Verified when it holds trajectories), and also lists, for a person to read, every
step the dataflow walk marks controlled (``evidence/dataflow.py``: none of its lines backs a
``yes``) with its reason and command, and every rigging flag (``evidence/rigging.py``, with
the trial's task when the corpus has it) with its step, kind, reason and command.
``python benchmarks/authored_changes.py [--show N]``
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from agentcredit.evidence.authored import literal_index
from agentcredit.evidence.dataflow import flow_of
from agentcredit.evidence.quotes import evidence_kind
from agentcredit.evidence.rigging import trial_rigging
from agentcredit.evidence.view import evidence_steps
from agentcredit.formats import load
from agentcredit.text import normalize_text

_DIGITS = re.compile(r"\d+")
# Kinds that take a content line (what a tool showed of the world) away from output.
CONTENT = ("authored", "unspecific", "given", "forged")
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
ROOTS = ("skillsbench/trials-sample", "skillsbench/trials-more", "skillsbench/trials-more2",
         "terminal-bench-1/trials-sample", "terminal-bench-2", "swebench-verified")
TASKS = ("skillsbench/tasks", "terminal-bench-2/tasks", "swebench-verified/tasks-sample")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=40)
    args = parser.parse_args()
    kinds: Counter[str] = Counter()
    changes: list[tuple[str, str, int, str, str]] = []
    untyped: list[tuple[str, int, str, str]] = []
    controlled: list[tuple[str, int, str, str]] = []
    flagged: list[tuple[str, int, str, str, str]] = []
    tasks = {t.id: t for r in TASKS if (CORPUS / r).exists() for t in load([CORPUS / r]).tasks}
    trials = walked = 0
    for root in ROOTS:
        if not (CORPUS / root).exists():
            continue
        for trial in load([CORPUS / root]).trials:
            trials += 1
            flow = flow_of(trial)
            steps = evidence_steps(trial, flow=flow)
            walked += sum(1 for s in trial.steps if s.source == "agent" and s.tool_calls)
            controlled += [(trial.id, n, c.reason, steps[n].action[:200])
                           for n, c in sorted(flow.steps.items()) if c.controlled]
            flagged += [(trial.id, f.step, f.kind, f.reason, steps[f.step].action[:200])
                        for f in trial_rigging(trial, tasks.get(trial.task_id or ""))]
            repeated = Counter(masked for step in steps.values() for masked in
                               {_DIGITS.sub("N", x.strip()) for x in step.output.splitlines()})
            for number, step in steps.items():
                for line in dict.fromkeys(x.strip() for x in step.output.splitlines()):
                    if sum(ch.isalnum() for ch in line) < 4:
                        continue
                    kind = evidence_kind(line, number, steps) or "not_found"
                    if kind == "unspecific" and repeated[_DIGITS.sub("N", line)] >= 3:
                        kind = "unspecific status line"
                    kinds[kind] += 1
                    if kind == "authored" and not _typed(line, step):
                        untyped.append((trial.id, number, line, step.action[:300]))
                    if kind in CONTENT or kind == "harness":
                        changes.append((kind, trial.id, number, line[:90], step.action[:90]))
    status = kinds["unspecific status line"] + kinds["harness"]
    was_output = kinds["output"] + status + sum(kinds[k] for k in CONTENT)
    changed = sum(kinds[k] for k in CONTENT)
    print(f"{trials} real trials; {sum(kinds.values())} output lines as quotes: "
          f"{dict(kinds)}")
    for kind in (*CONTENT, "unspecific status line", "harness"):
        print(f"output citations that become {kind}: {kinds[kind]} of {was_output} "
              f"= {kinds[kind] / max(was_output, 1):.2%}")
    content = was_output - status
    print(f"content lines changed ({', '.join(CONTENT)}): {changed} of {content} = "
          f"{changed / max(content, 1):.2%} (target <= 2%); with the status lines: "
          f"{changed + status} of {was_output} = {(changed + status) / max(was_output, 1):.2%}")
    print(f"genuine tool output demoted (authored, not a whole line or quoted string the "
          f"agent typed): {len(untyped)} of {content} = {len(untyped) / max(content, 1):.2%} "
          "(target <= 0.2%)")
    for trial_id, number, line, action in untyped:
        print(f"  {trial_id} step {number}: {line!r}\n      action: {action!r}")
    reasons = Counter(reason for _, _, reason, _ in controlled)
    print(f"\ncontrolled steps (the walk backs no yes with them): {len(controlled)} of {walked} "
          f"agent steps with tool calls, in {len({c[0] for c in controlled})} trials; by "
          f"reason: {dict(reasons)}")
    for trial_id, number, reason, action in controlled:
        print(f"  {trial_id} step {number}: {reason}\n      action: {action!r}")
    print(f"\ntrials flagged for rigging: {len({f[0] for f in flagged})} of {trials} "
          f"({len(flagged)} flags; by kind: {dict(Counter(f[2] for f in flagged))})")
    for trial_id, number, kind, reason, action in flagged:
        print(f"  {trial_id} step {number}: {kind}: {reason}\n      action: {action!r}")
    harness = Counter(_DIGITS.sub("N", c[3]) for c in changes if c[0] == "harness")
    print(f"\nharness status lines by shape ({len(harness)} shapes, most common first):")
    for shape, count in harness.most_common(args.show):
        print(f"  {count:>5}  {shape!r}")
    for kind in CONTENT:
        shown = [c for c in changes if c[0] == kind][:args.show]
        print(f"\n{kind} ({len(shown)} shown):")
        for _, trial_id, number, line, action in shown:
            print(f"  {trial_id} step {number}: {line!r}\n      action: {action!r}")


def _typed(line: str, step: object) -> bool:
    """Whether the line, or what follows a reader's prefix on it, is a whole line or quoted
    string of the agent's strings written by then."""
    index = literal_index(tuple(step.literals))  # type: ignore[attr-defined]
    index._whole_line("", 0)  # builds the table of whole lines
    text = normalize_text(line)
    lines = index.lines or {}
    if lines.get(text, step.literal_end) < step.literal_end:  # type: ignore[attr-defined]
        return True
    parts = text.split(" ", 1)
    return len(parts) == 2 and lines.get(parts[1], 1 << 30) < step.literal_end  # type: ignore


if __name__ == "__main__":
    main()
