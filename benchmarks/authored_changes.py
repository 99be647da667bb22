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
A demoted line is counted as the agent's own text by :data:`OWN_RULE` (a whole line or
quoted string it typed, or one of its format strings filled in); the rest are *genuine tool
output demoted* (target <= 0.2% of content lines), each printed in full with a sentence on
why it was demoted, for a person to check. A ``no`` may still cite every one of them
(admissions against interest: ``evidence/quotes.py``).

It reads every real trial there is (``skillsbench/trials-*``, Terminal-Bench 1 and 2,
SWE-bench Verified when it holds trajectories), and also lists, for a person to read, every
step the dataflow walk marks controlled (``evidence/dataflow.py``: none of its lines backs a
``yes``) with its reason and command, counted apart as the agent's own text (every content
line it printed is the agent's own by :data:`OWN_RULE`: controlling it costs nothing) or
as an honest step controlled (a genuine line in it, named), and every rigging flag
(``evidence/rigging.py``, with the trial's task when the corpus has it) with its step, kind,
reason and command.
``python benchmarks/authored_changes.py [--show N]``
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from agentcredit.evidence.authored import _FORMAT_FIELD, _templates, literal_index
from agentcredit.evidence.dataflow import flow_of
from agentcredit.evidence.provenance import harness_stripped
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
OWN_RULE = ("a demoted line is the agent's own text when, once a harness's or reader's prefix "
            "is taken off, it is a whole line or quoted string the agent typed by then (with "
            "at most punctuation beside it), or fills one of its format strings whole (the "
            "fixed parts in order, each field holding some text)")
CONTROLLED_RULE = ("a controlled step is the agent's own text when every content line its "
                   "controlled tool calls printed is the agent's own (OWN_RULE); otherwise it "
                   "is an honest step controlled, and its first genuine line is named")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=40)
    args = parser.parse_args()
    kinds: Counter[str] = Counter()
    changes: list[tuple[str, str, int, str, str]] = []
    genuine: list[tuple[str, int, str, str, str]] = []
    own: Counter[str] = Counter()
    controlled: list[tuple[str, int, str, str, str]] = []
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
            flagged += [(trial.id, f.step, f.kind, f.reason, steps[f.step].action[:200])
                        for f in trial_rigging(trial, tasks.get(trial.task_id or ""))]
            repeated = Counter(masked for step in steps.values() for masked in
                               {_DIGITS.sub("N", x.strip()) for x in step.output.splitlines()})
            for number, step in steps.items():
                control = flow.steps.get(number)
                first_genuine, printed = "", 0
                made = step.self_made
                for at, (line, origin) in enumerate(zip(step.output.split("\n"), step.origins,
                                                        strict=True)):
                    mine = made is True or (isinstance(made, frozenset) and at in made)
                    printed += mine and origin == "authored"
                    if mine and origin == "authored" and not first_genuine and \
                            _own(line.strip(), step)[0] is None:
                        first_genuine = line.strip()
                if control is not None and control.controlled:
                    verdict = f"honest step controlled: {first_genuine[:80]!r} is not the " \
                        "agent's own text" if first_genuine else \
                        f"the agent's own text ({printed} content lines, each its own)" \
                        if printed else "the agent's own text (it printed no content line)"
                    controlled.append((trial.id, number, control.reason, verdict,
                                       step.action[:200]))
                for line in dict.fromkeys(x.strip() for x in step.output.splitlines()):
                    if sum(ch.isalnum() for ch in line) < 4:
                        continue
                    kind = evidence_kind(line, number, steps) or "not_found"
                    if kind == "unspecific" and repeated[_DIGITS.sub("N", line)] >= 3:
                        kind = "unspecific status line"
                    kinds[kind] += 1
                    if kind == "authored":
                        reason, why = _own(line, step)
                        if reason is not None:
                            own[reason] += 1
                        else:
                            genuine.append((trial.id, number, line, why or _demoted_why(
                                line, step, control), step.action[:200]))
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
    print(f"\nrule: {OWN_RULE}.\nauthored lines that are the agent's own text: "
          f"{sum(own.values())} ({dict(own)})")
    print(f"genuine tool output demoted (authored, not the agent's own by the rule): "
          f"{len(genuine)} of {content} = {len(genuine) / max(content, 1):.2%} "
          "(target <= 0.2%)")
    for trial_id, number, line, why, action in genuine:
        print(f"  {trial_id} step {number}: {line!r}\n      why: {why}\n"
              f"      action: {action!r}")
    honest = [c for c in controlled if c[3].startswith("honest")]
    reasons = Counter(reason for _, _, reason, _, _ in controlled)
    print(f"\ncontrolled steps (the walk backs no yes with them): {len(controlled)} of {walked} "
          f"agent steps with tool calls, in {len({c[0] for c in controlled})} trials; by "
          f"reason: {dict(reasons)}\nrule: {CONTROLLED_RULE}.\n"
          f"  the agent's own text: {len(controlled) - len(honest)}; honest steps controlled: "
          f"{len(honest)}")
    for trial_id, number, reason, verdict, action in controlled:
        print(f"  {trial_id} step {number}: {reason}; {verdict}\n      action: {action!r}")
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


def _own(line: str, step: object) -> tuple[str | None, str | None]:
    """Why a demoted line is the agent's own text by :data:`OWN_RULE` (None: it is not),
    and, for a line that is not, why it was demoted when that is already known."""
    index = literal_index(tuple(step.literals))  # type: ignore[attr-defined]
    end = step.literal_end  # type: ignore[attr-defined]
    index._whole_line("", 0)  # builds the table of whole lines
    lines = index.lines or {}
    text = normalize_text(harness_stripped(line)[0] or line)
    parts = text.split(" ", 1)
    punctuation = "{}[]() "  # a bracket the reader joined to the line
    for candidate in (text, text.lstrip(punctuation), text.rstrip(punctuation),
                      text.strip(punctuation), parts[-1]):
        if lines.get(candidate, end) < end and any(c.isalnum() for c in candidate):
            return "a whole line or quoted string it typed", None
    for literal in step.literals[:end]:  # type: ignore[attr-defined]
        for string in _templates(literal)[1:] or [literal]:
            for piece in re.split(r"\n|\\+n", string):
                if _FORMAT_FIELD.search(piece) and _filled(piece, text):
                    return "one of its format strings filled in", None
    return None, None


def _filled(template: str, text: str) -> bool:
    """Whether the line is the format string with each field holding some text."""
    fixed = [re.escape(normalize_text(p)) for p in _FORMAT_FIELD.split(template)]
    if sum(ch.isalnum() for p in fixed for ch in p) < 4:
        return False
    pattern = r"\s*(.+?)\s*".join(fixed).replace("\\ ", "\\s*")
    return re.fullmatch(pattern, text) is not None


def _demoted_why(line: str, step: object, control: object) -> str:
    """A sentence on why the line rules or the walk demoted a line that is not the agent's
    own by the rule: the string of the agent it was found in, or the walk's reason."""
    if getattr(control, "controlled", False) and step.self_made:  # type: ignore[attr-defined]
        return (f"printed by a tool call the walk controls ({control.reason}), "  # type: ignore
                "and not the agent's own text by the rule")
    text = normalize_text(harness_stripped(line)[0] or line)
    for number, literal in enumerate(step.literals[:step.literal_end]):  # type: ignore
        at = normalize_text(literal).find(text)
        if at >= 0:
            around = normalize_text(literal)[max(0, at - 40):at + len(text) + 40]
            return f"occurs inside the agent's string #{number}: ...{around!r}..."
    found = literal_index(tuple(step.literals[:step.literal_end]))  # type: ignore
    for number, prepared in enumerate(found.prepared):
        for chunks, _ in prepared.templates:
            parts = [c for c in chunks if c in text]
            if parts and sum(sum(map(str.isalnum, c)) for c in parts) * 2 >= sum(
                    map(str.isalnum, text)):
                return (f"the fixed part {parts[0]!r} of the agent's string #{number} covers "
                        "half its letters and the rest are values the agent typed there")
    return "reachable from the agent's strings by the line rules (evidence/authored.py)"


if __name__ == "__main__":
    main()
