"""A self-contained HTML page of per-turn rewards: a strip of turns above each trial's steps."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from agentcredit.evidence.view import action_text, output_text
from agentcredit.rewards.table import RewardTable
from agentcredit.schema import SkillBank, TrialVerdict
from agentcredit.text import shorten

MAX_TRIALS = 300
_SAFE = re.compile(r"[^A-Za-z0-9_.:-]")


def _color(value: float) -> str:
    """Green for credit, red for blame, white for nothing."""
    strength = min(abs(value), 1.0)
    if value >= 0:
        return f"rgba(26,127,55,{0.08 + 0.5 * strength:.2f})"
    return f"rgba(207,34,46,{0.08 + 0.5 * strength:.2f})"


def write_turn_report(path: Path, table: RewardTable, verdicts: dict[str, TrialVerdict],
                      assignments: dict[str, Any], bank: SkillBank) -> Path:
    """Write the page; returns its path."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in table.rows:
        rows.setdefault(row["trial_id"], []).append(row)
    trials = [_trial(trial_id, turn_rows, verdicts[trial_id], assignments[trial_id])
              for trial_id, turn_rows in list(rows.items())[:MAX_TRIALS]]
    first = next(iter(verdicts.values()), None)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(resources.files("agentcredit.rewards")
                               .joinpath("turn_report.html.j2").read_text(encoding="utf-8"))
    html = template.render(
        title=path.parent.name, trials=trials, rows=len(table.rows),
        suppressed=table.suppressed, dropped=table.dropped, bank_hash=bank.hash,
        model=first.model if first else "-", prompt_version=first.prompt_version if first
        else "-", created=datetime.now(UTC).isoformat(timespec="seconds"))
    path.write_text(html, encoding="utf-8")
    return path


def _trial(trial_id: str, turn_rows: list[dict[str, Any]], verdict: TrialVerdict,
           assignment: Any) -> dict[str, Any]:
    anchor = _SAFE.sub("_", trial_id)
    skill = assignment.skill
    statements = {c.id: c.statement for c in skill.rubric or ()}
    by_id = {c.criterion_id: c for c in verdict.criteria}
    steps = assignment.trial.steps
    turns = []
    for row in turn_rows:
        t = row["turn"] - 1
        step = steps[row["step"] - 1]
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
            "states": states, "action": shorten(action_text(step), 1_200),
            "output": shorten(output_text(step), 2_000)})
    return {"id": trial_id, "anchor": anchor, "task": verdict.task_id or "-",
            "skill": f"{skill.id} v{skill.version}", "kept": turn_rows[0]["kept"],
            "outcome": "-" if turn_rows[0]["outcome"] is None else turn_rows[0]["outcome"],
            "turns": turns,
            "criteria": [{"id": c.criterion_id, "statement": statements.get(c.criterion_id, ""),
                          "status": c.status, "satisfied": c.satisfied,
                          "corrections": list(c.corrections)} for c in verdict.criteria]}
