"""A scripted stand-in for an LLM that answers synthesis, judge and holistic prompts.

It reads the prompt the way a model would and answers in the requested schema, citing
real quotes from the evidence view (or, when told to, a quote that is not there).
"""

from __future__ import annotations

import json
import re
from typing import Any

STEP = re.compile(r"^\[step (\d+) #[0-9a-f]{8}\] (\w+)$")
ITEM = re.compile(r"^([A-Z]+\d+): (.*)$")


def _text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m["content"]) for m in messages if isinstance(m.get("content"), str))


def _block(text: str, header: str) -> list[str]:
    start = text.index(header) + len(header)
    lines = []
    for line in text[start:].splitlines()[1:]:
        if not line.strip():
            break
        lines.append(line[2:] if line.startswith("- ") else line)
    return lines


def requirement_units(text: str) -> list[str]:
    """The requirement units a synthesis prompt lists (under its kind headings)."""
    start = text.index("REQUIREMENT UNITS")
    found = []
    for line in text[start:].splitlines()[1:]:
        if not line.strip():
            break
        if (unit := re.match(r"^- \[\w+\] (.*)$", line)) is not None:
            found.append(unit.group(1))
    return found


def outputs_by_step(text: str, *, echoes: bool = False, limit: int = 0) -> dict[int, str]:
    """A quote from each step's OUTPUT in the evidence view (the first ``limit`` steps with
    one, when given): its first line of environment text, as a careful model would cite
    (with ``echoes``, its first line even when that is the tool's echo of the command, as a
    careless one would)."""
    if limit and len(text) > 2**16:  # a long view: its head is read first, whole if need be
        head = outputs_by_step(text[:2**16].rsplit("\n", 1)[0], echoes=echoes, limit=limit)
        if len(head) >= limit:
            return head
    found: dict[int, str] = {}
    current = None
    in_output = False
    for line in text.splitlines():
        if limit and len(found) >= limit:
            break
        match = STEP.match(line)
        if match:
            current, in_output = int(match.group(1)), False
        elif line == "OUTPUT:":
            in_output = True
        elif in_output and current is not None and current not in found:
            first = line.strip()
            if first and (echoes or not first.startswith(("Command:", "$ "))):
                found[current] = first[:40]
    return found


def answer(messages: list[dict[str, Any]], schema: dict[str, Any] | None,
           *, fake_quote: bool = False, echoes: bool = False) -> str:
    text = _text(messages)
    title = (schema or {}).get("title")
    if title == "DraftChecklist":
        checks = [c for c in _block(text, "VERIFIER CHECK IDS (reference exactly these):")
                  if not c.startswith("(")]
        reqs = requirement_units(text)
        items = [{"id": f"C{i + 1}", "text": f"The outcome checked by {c} holds.",
                  "route": "assertion", "quotes": [], "checks": [c]}
                 for i, c in enumerate(checks)]
        waivers = [{"sentence": r, "reason": "scripted: not itemised"} for r in reqs]
        return json.dumps({"items": items, "waivers": waivers})
    if title == "ItemsAnswer":
        outputs = outputs_by_step(text, echoes=echoes, limit=1)
        block = text[text.index("<checklist>"):text.index("</checklist>")]
        ids = [m.group(1) for m in map(ITEM.match, block.splitlines()) if m]
        items = []
        for item_id in ids:
            if not outputs:
                items.append({"item_id": item_id, "label": "abstain", "rationale": "no output"})
                continue
            step, quote = next(iter(outputs.items()))
            if fake_quote:
                quote = "this text appears nowhere in the log"
            items.append({"item_id": item_id, "label": "yes", "rationale": "shown in output",
                          "evidence": [{"step": step, "quote": quote}]})
        return json.dumps({"items": items})
    if title == "HolisticAnswer":
        return json.dumps({"progress": 0.5, "rationale": "halfway"})
    raise ValueError(f"unexpected schema {title!r}")
