"""On the real SkillsBench instructions whose requirement units are written by hand
(``benchmarks/data/requirement_units.yaml``), a synthesizer that answers exactly those units
passes the coverage audit the first time: the extractor asks for nothing more, and the derived
checklists of the same tasks pass every gate."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentcredit.checklists.build import derive_checklist
from agentcredit.checklists.rules import load_rules
from agentcredit.checklists.synthesize import synthesize
from agentcredit.formats import load
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.schema import Checklist

LABELS = Path(__file__).parents[2] / "benchmarks" / "data" / "requirement_units.yaml"


def _labelled() -> dict[str, list[list[str]]]:
    groups = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    return {task: units for group in groups.values() for task, units in group.items()}


def _answer(units: dict[str, list[str]], checks: dict[str, list[str]]
            ) -> Any:
    def script(messages: list[dict[str, Any]], schema: object) -> str:
        text = "\n".join(str(m["content"]) for m in messages)
        task = re.search(r"TASK ID: (\S+)", text).group(1)  # type: ignore[union-attr]
        items = [{"id": "C1", "text": "The verifier's checks all pass.", "route": "assertion",
                  "quotes": [], "checks": checks[task]}] if checks[task] else []
        items += [{"id": f"C{len(items) + n + 1}", "text": f"Done as the instruction asks "
                   f"(requirement {n + 1}).", "route": "generated", "quotes": [unit],
                   "checks": []} for n, unit in enumerate(units[task])]
        return json.dumps({"items": items, "waivers": [
            {"sentence": given, "reason": "describes what the agent is given"}
            for given in _waivable(text)]})
    return script


def _waivable(prompt: str) -> list[str]:
    """The units the prompt lists as inputs or examples (first line of each), as a model
    that waives them would quote them."""
    out, waivable = [], False
    for line in prompt.split("REQUIREMENT UNITS", 1)[1].splitlines():
        if re.match(r"^[a-z].*:$", line):
            waivable = line.startswith(("what the agent is given", "examples"))
        elif waivable and (unit := re.match(r"^- \[\w+\] (.+)$", line)):
            out.append(unit.group(1))
    return out


def test_a_synthesizer_answering_the_hand_written_units_passes_first_time(
        corpus: Path) -> None:
    labelled = {task.split("/")[-1]: [text for _, text in units]
                for task, units in _labelled().items() if task.startswith("skillsbench/")}
    assert len(labelled) == 25
    tasks = [t for t in load([corpus / "skillsbench" / "tasks"]).tasks if t.id in labelled]
    assert len(tasks) == 25
    register_script("hand-units", _answer(labelled, {t.id: list(t.checks) for t in tasks}))
    model = ModelClient(make_provider("scripted/hand-units"), cache=None)
    rules = load_rules()
    async def every() -> list[Checklist | Any]:
        return [await synthesize(t, model, rules) for t in tasks]

    results = asyncio.run(every())
    failed = {r.task_id: [f.message for f in r.failures][:3] for r in results
              if not isinstance(r, Checklist)}
    assert not failed
    assert model.provider.calls == 25  # type: ignore[attr-defined]  # no repair anywhere
    for task in tasks:
        assert isinstance(derive_checklist(task, rules), Checklist) or not task.checks


@pytest.mark.parametrize("group", ["tuned", "held_out"])
def test_the_labelled_units_are_verbatim_in_their_instructions(corpus: Path,
                                                               group: str) -> None:
    units = yaml.safe_load(LABELS.read_text(encoding="utf-8"))[group]
    for task, found in units.items():
        text = (corpus / task / "instruction.md").read_text(encoding="utf-8")
        for kind, unit in found:
            assert kind in ("cue", "imperative", "list_item", "field", "note", "table_row")
            assert unit in text, (task, unit)
