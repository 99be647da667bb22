"""A self-contained HTML page of per-turn rewards: a strip of turns above each trial's steps."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from agentcredit.evidence.view import action_text, output_text
from agentcredit.redact import redact_text
from agentcredit.rewards.table import RewardTable
from agentcredit.schema import RubricCriterion, SkillBank, Trial, TrialVerdict
from agentcredit.text import shorten

MAX_TRIALS = 100
_SAFE = re.compile(r"[^A-Za-z0-9_.:-]")


def _color(value: float) -> str:
    """Green for credit, red for blame, white for nothing."""
    strength = min(abs(value), 1.0)
    if value >= 0:
        return f"rgba(26,127,55,{0.08 + 0.5 * strength:.2f})"
    return f"rgba(207,34,46,{0.08 + 0.5 * strength:.2f})"


@dataclass
class Shown:
    """A trial the page shows: its turn rows, verdict and skill, and each step's action and
    output as the page prints them (the log itself is not kept)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    steps: list[tuple[str, str]] = field(default_factory=list)
    criteria: tuple[RubricCriterion, ...] = ()
    label: str = "-"
    """What the criteria came from (the skill and version, and/or the task's checklist)."""
    verdict: TrialVerdict | None = None

    @classmethod
    def of(cls, trial: Trial, criteria: tuple[RubricCriterion, ...], label: str) -> Shown:
        return cls(steps=[(redact_text(shorten(action_text(s), 1_200)),
                           redact_text(shorten(output_text(s), 2_000))) for s in trial.steps],
                   criteria=criteria, label=label)


def write_turn_report(path: Path, table: RewardTable, rows: int, shown: dict[str, Shown],
                      bank: SkillBank) -> Path:
    """Write the page of the ``shown`` trials (at most :data:`MAX_TRIALS`, those with
    rows and a verdict); ``rows`` counts every turn row written; returns its path."""
    trials = [_trial(trial_id, item) for trial_id, item in shown.items()
              if item.rows and item.verdict is not None and item.criteria]
    first = next((item.verdict for item in shown.values() if item.verdict), None)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(resources.files("agentcredit.rewards")
                               .joinpath("turn_report.html.j2").read_text(encoding="utf-8"))
    html = template.render(
        title=path.parent.name, trials=trials, rows=rows,
        suppressed=table.suppressed, dropped=table.dropped, bank_hash=bank.hash,
        model=first.model if first else "-", prompt_version=first.prompt_version if first
        else "-", created=datetime.now(UTC).isoformat(timespec="seconds"))
    path.write_text(html, encoding="utf-8")
    return path


def _trial(trial_id: str, item: Shown) -> dict[str, Any]:
    anchor = _SAFE.sub("_", trial_id)
    verdict, turn_rows = item.verdict, item.rows
    assert verdict is not None
    statements = {c.id: c.statement for c in item.criteria}
    by_id = {c.criterion_id: c for c in verdict.criteria}
    turns = []
    for row in turn_rows:
        t = row["turn"] - 1
        action, output = item.steps[row["step"] - 1]
        states = []
        for cid in statements:
            c = by_id.get(cid)
            if c is None:
                continue
            state = c.states[t] if c.status == "applicable" else None
            states.append({"id": cid, "state": state.state if state else c.status,
                           "quotes": [q.quote for q in state.citations] if state else []})
        turns.append({
            "n": row["turn"], "step": row["step"], "anchor": f"{anchor}-turn-{row['turn']}",
            "combined": f"{row['combined']:+.3f}", "progress": f"{row['progress']:+.3f}",
            "process": f"{row['process_advantage']:+.3f}", "color": _color(row["combined"]),
            "summary": verdict.summaries[t] if t < len(verdict.summaries) else "",
            "states": states, "action": action, "output": output})
    return {"id": trial_id, "anchor": anchor, "task": verdict.task_id or "-",
            "skill": item.label, "kept": turn_rows[0]["kept"],
            "outcome": "-" if turn_rows[0]["outcome"] is None else turn_rows[0]["outcome"],
            "turns": turns,
            "criteria": [{"id": c.criterion_id, "statement": statements.get(c.criterion_id, ""),
                          "status": c.status, "satisfied": c.satisfied,
                          "corrections": list(c.corrections)} for c in verdict.criteria]}
