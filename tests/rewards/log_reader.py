"""A scripted model that decides from the log, for the judge and the turn verifier alike.

One rule for every prompt: a requirement (a checklist item or a rubric criterion) is met
when some OUTPUT line shown in the prompt shares at least :data:`MIN_SHARED` content words
(four letters or more, not stop words) and :data:`MIN_SHARE` of the requirement's content
words; the best such line is cited verbatim. The judge answers yes (else abstain); the
turn verifier answers satisfied, ``verified`` at the cited step with the responsibility on
it (else not satisfied, no state). The rule never sees the outcome, the verifier's checks or
which rubric a requirement came from, so the judge's and the verifier's answers differ only
by what their prompts show.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.rewards.scripted_verifier import TURNS, text_of

MIN_SHARED, MIN_SHARE = 2, 0.3
HEADER = re.compile(r"^\[step (\d+) #[0-9a-f]{8}\]")
REQUIREMENT = re.compile(r"^([A-Z]+\d+|ENDPOINT): (.*)$")
STOP = frozenset({"that", "this", "with", "from", "have", "been", "were", "will", "must",
                  "should", "each", "their", "which", "into", "only", "when", "then", "than",
                  "them", "they", "your", "what", "also", "does", "more", "most", "such",
                  "file", "files", "output", "outputs", "shown", "shows", "show"})


def content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_]{3,}", text.lower()) if w not in STOP}


def output_lines(text: str) -> dict[int, list[str]]:
    """Per step shown, its OUTPUT lines (not the echoed command)."""
    found: dict[int, list[str]] = {}
    current, inside = None, False
    for line in text.splitlines():
        match = HEADER.match(line.strip())
        if match:
            current, inside = int(match.group(1)), False
        elif line.strip() == "OUTPUT:":
            inside = True
        elif line.strip() in ("</trajectory>",) or line.startswith(("ACTION:", "CLAIM:")):
            inside = False
        elif inside and current is not None and line.strip() and \
                not line.strip().startswith(("$ ", "Command:", "[agent-authored]")):
            found.setdefault(current, []).append(line.strip())
    return found


def requirements(text: str, start: str, end: str) -> dict[str, str]:
    block = text[text.index(start) + len(start):text.index(end)]
    return {m.group(1): m.group(2) for m in map(REQUIREMENT.match, block.splitlines()) if m}


def best_line(statement: str, lines: dict[int, list[str]]) -> tuple[int, str] | None:
    wanted = content(statement)
    best, score = None, 0
    for step, shown in sorted(lines.items()):
        for line in shown:
            shared = len(wanted & content(line))
            if shared >= MIN_SHARED and shared >= MIN_SHARE * len(wanted) and shared > score:
                best, score = (step, line[:120].strip()), shared
    return best


def answer(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    text = text_of(messages)
    title = (schema or {}).get("title")
    if title == "ItemsAnswer":
        items = []
        for item_id, statement in requirements(text, "<checklist>", "</checklist>").items():
            found = best_line(statement, output_lines(text))
            items.append({"item_id": item_id, "label": "yes", "rationale": "shown",
                          "evidence": [{"step": found[0], "quote": found[1]}]} if found else
                         {"item_id": item_id, "label": "abstain", "rationale": "not shown"})
        return json.dumps({"items": items})
    if title == "CoarseAnswer":
        turns = [int(x) for x in TURNS.search(text).group(1).split(",") if x.strip()]  # type: ignore[union-attr]
        return json.dumps({
            "turns": [{"step": s, "summary": f"turn at step {s}"} for s in turns],
            "criteria": [{"criterion_id": c, "applicable": True, "candidate_steps": turns}
                         for c in requirements(text, "<rubric>", "</rubric>")]})
    if title == "FineGroupAnswer":
        lines = output_lines(text)
        criteria = []
        for cid, statement in requirements(text, "<rubric>", "</rubric>").items():
            found = best_line(statement, lines)
            criteria.append({"criterion_id": cid, "satisfied": True, "states": [
                {"step": found[0], "state": "verified",
                 "evidence": [{"step": found[0], "quote": found[1]}]}],
                "responsibility": [{"step": found[0], "weight": 1.0}]} if found else
                {"criterion_id": cid, "satisfied": False})
        return json.dumps({"criteria": criteria})
    if title == "HolisticAnswer":
        return json.dumps({"progress": 0.5, "rationale": "halfway"})
    raise ValueError(f"unexpected schema {title!r}")
