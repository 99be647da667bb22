"""A scripted stand-in for the turn verifier's model: reads the prompts, cites real outputs."""

from __future__ import annotations

import json
import re
from typing import Any

TURNS = re.compile(r"TURNS \(agent steps\): ([0-9, ]*)")
CRITERION = re.compile(r"^((?:R|C)\d+): ", re.MULTILINE)
STEP = re.compile(r"^\[step (\d+) #[0-9a-f]{8}\]$")


def text_of(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "".join(parts) if any(isinstance(m.get("content"), list) for m in messages) \
        else "\n".join(parts)


def outputs(text: str) -> dict[int, str]:
    """First non-empty OUTPUT line of each shown step."""
    found: dict[int, str] = {}
    lines = text.splitlines()
    current = None
    for i, line in enumerate(lines):
        match = STEP.match(line.strip())
        if match:
            current = int(match.group(1))
        elif line.strip() == "OUTPUT:" and current is not None:
            for nxt in lines[i + 1:]:
                if STEP.match(nxt.strip()) or nxt.strip() == "</trajectory>":
                    break
                if nxt.strip():
                    found[current] = nxt.strip()[:40]
                    break
    return found


def answer(messages: list[dict[str, Any]], schema: dict[str, Any] | None, *,
           cite_later: bool = False) -> str:
    text = text_of(messages)
    title = (schema or {}).get("title")
    if title == "CoarseAnswer":
        turns = [int(x) for x in TURNS.search(text).group(1).split(",") if x.strip()]  # type: ignore[union-attr]
        ids = sorted(set(CRITERION.findall(text.split("<rubric>")[1].split("</rubric>")[0])))
        return json.dumps({
            "turns": [{"step": s, "summary": f"turn at step {s}"} for s in turns],
            "criteria": [{"criterion_id": c, "applicable": True, "candidate_steps": turns,
                          "reason": "scripted"} for c in ids]})
    if title == "FineGroupAnswer":
        ids = rubric_ids(text)
        return json.dumps({"criteria": [{"criterion_id": c, **fine(text, cite_later)}
                                        for c in ids]})
    raise ValueError(f"unexpected schema {title!r}")


def rubric_ids(text: str) -> list[str]:
    """The criterion ids of the prompt's rubric block, in order."""
    return list(dict.fromkeys(CRITERION.findall(text.split("<rubric>")[1].split("</rubric>")[0])))


def fine(text: str, cite_later: bool = False) -> dict[str, Any]:
    """One criterion's answer: supported at every shown output, verified at the last."""
    shown = outputs(text)
    steps = sorted(shown)
    if not steps:
        return {"satisfied": False, "states": [], "responsibility": [],
                "rationale": "no output shown"}
    states = []
    for k, step in enumerate(steps):
        cited = steps[-1] if cite_later and k == 0 else step
        states.append({"step": step, "state": "supported" if k < len(steps) - 1
                       else "verified", "evidence": [{"step": cited, "quote": shown[cited]}]})
    return {"satisfied": True, "states": states,
            "responsibility": [{"step": s, "weight": 1.0} for s in steps],
            "rationale": "outputs show it"}
