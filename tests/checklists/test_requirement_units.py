"""Every requirement of an instruction reaches the coverage audit: list items after a
requirement lead-in, output fields, tolerance notes and imperatives with any verb."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.checklists import derive
from agentcredit.checklists.gates import COVER_REQUIREMENTS, instruction_units, run_gates
from agentcredit.checklists.rules import load_rules
from agentcredit.checklists.synthesize import synthesis_messages
from agentcredit.errors import ConfigError
from agentcredit.schema import ChecklistItem, Task

INSTRUCTION = """You need to estimate the weight of a scanned bracket. The scan in `/data/part.stl`
is a binary STL; some triangles are debris.

You need to:
1. Parse the binary STL and keep the largest connected piece.
2. Look up the alloy in `/data/alloys.md` to get its density.
3. Save the result to `/out/weight.json` in this format:

```json
{
  "bracket_weight": 812.5,
  "alloy_code": 7
}
```

Available files:
- `/data/part.stl`: the scan
- `/data/alloys.md`: densities

The summary table must have:
- `piece_count`: connected pieces found in the scan
- `debris_area`: total area of the discarded triangles

NOTE: The weight counts as correct within **0.5% accuracy**.
Tell me the alloy name as well, in `/out/alloy.txt`.
"""

VERIFIER = '''
def test_weight():
    data = json.load(open("/out/weight.json"))
    assert abs(data["bracket_weight"] - 812.5) < 4, "weight is wrong"

def test_alloy_code():
    assert json.load(open("/out/weight.json"))["alloy_code"] == 7
'''


def _task() -> Task:
    return Task(id="bracket", benchmark="skillsbench", instruction=INSTRUCTION,
                source_path="x", checks=("test_outputs.py::test_weight",
                                         "test_outputs.py::test_alloy_code"),
                verifier_files={"tests/test_outputs.py": VERIFIER})


def _units() -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in instruction_units(INSTRUCTION, load_rules())]


def test_list_items_fields_notes_and_any_imperative_are_units() -> None:
    units = _units()
    assert ("list_item", "Parse the binary STL and keep the largest connected piece.") in units
    assert ("list_item", "Look up the alloy in `/data/alloys.md` to get its density.") in units
    assert ("field", '"bracket_weight": 812.5') in units and ("field", '"alloy_code": 7') in units
    assert ("field", "`piece_count`: connected pieces found in the scan") in units
    assert ("note", "NOTE: The weight counts as correct within **0.5% accuracy**.") in units
    assert ("imperative", "Tell me the alloy name as well, in `/out/alloy.txt`.") in units


def test_informational_lists_and_bare_lead_ins_are_not_units() -> None:
    texts = [text for _, text in _units()]
    assert "`/data/part.stl`: the scan" not in texts  # "Available files:" informs
    assert "You need to:" not in texts
    assert not any(text.startswith("The scan in") for text in texts)
    for unit in instruction_units(INSTRUCTION, load_rules()):
        assert INSTRUCTION[unit.start:unit.start + len(unit.text)] == unit.text  # verbatim


def test_the_rules_switch_a_kind_off_and_refuse_unknown_kinds(tmp_path: Path) -> None:
    default = Path(__file__).parents[2] / "src/agentcredit/checklists/default_rules.yaml"
    rules = tmp_path / "rules.yaml"
    rules.write_text(default.read_text().replace("field: true", "field: false"))
    kinds = {u.kind for u in instruction_units(INSTRUCTION, load_rules(rules))}
    assert "field" not in kinds and "list_item" in kinds
    rules.write_text(default.read_text().replace("field: true", "fields: true"))
    with pytest.raises(ConfigError, match="unknown unit kind 'fields'"):
        load_rules(rules)


def test_a_unit_is_answered_by_a_quote_a_check_that_tests_it_or_a_waiver() -> None:
    task, rules = _task(), load_rules()
    checks_only = [ChecklistItem(id="C1", text="The weight is right.", route="assertion",
                                 checks=("test_outputs.py::test_weight",)),
                   ChecklistItem(id="C2", text="The alloy code is right.", route="assertion",
                                 checks=("test_outputs.py::test_alloy_code",))]
    tested = derive.tested_words(task)
    failures = run_gates(checks_only, [], INSTRUCTION, task.checks, rules, tested)
    missing = [f.message for f in failures if f.code == COVER_REQUIREMENTS]
    assert not any("bracket_weight" in m or "alloy_code" in m for m in missing)  # tested
    assert any("piece_count" in m for m in missing)  # no check tests it
    assert any(m.startswith("list_item neither") and "largest connected" in m for m in missing)
    items, waivers = derive.derive_items(task, rules)
    assert not [f for f in run_gates(items, waivers, INSTRUCTION, task.checks, rules,
                                     derive.tested_words(task)) if f.code == COVER_REQUIREMENTS]
    assert any("piece_count" in w.sentence and w.reason.endswith("(field)") for w in waivers)


def test_the_synthesis_prompt_lists_units_grouped_by_kind() -> None:
    user = synthesis_messages(_task(), load_rules())[1].text()
    block = user.split("REQUIREMENT UNITS", 1)[1]
    assert "list items after a requirement lead-in:\n- Parse the binary STL" in block
    assert 'fields of the output:\n- "bracket_weight": 812.5' in block
    assert "tolerance, format and constraint notes:\n- NOTE:" in block
