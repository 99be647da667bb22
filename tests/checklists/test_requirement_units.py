"""Every requirement of an instruction reaches the coverage audit: list items after a
requirement lead-in, output fields, tolerance notes and imperatives with any verb."""

from __future__ import annotations

import json
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


def test_informational_lists_are_input_units_and_bare_lead_ins_are_not_units() -> None:
    units = {u.text: u for u in instruction_units(INSTRUCTION, load_rules())}
    given = units["`/data/part.stl`: the scan"]  # "Available files:" informs
    assert given.role == "input" and given.section == "Available files:"
    assert units["`piece_count`: connected pieces found in the scan"].role == "requirement"
    assert units["NOTE: The weight counts as correct within **0.5% accuracy**."].role == "note"
    assert "You need to:" not in units
    assert not any(text.startswith("The scan in") for text in units)
    for unit in units.values():
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
    assert {w.sentence for w in waivers} == {"`/data/part.stl`: the scan",
                                             "`/data/alloys.md`: densities"}
    assert all("as an input, not a requirement" in w.reason for w in waivers)
    marked = {item.quotes[0]: item for item in items if item.needs_model}
    field = marked["`piece_count`: connected pieces found in the scan"]
    assert field.route == "generated" and not field.checks and "(field)" in field.text
    assert '"bracket_weight": 812.5' not in marked  # test_weight tests it
    assert all(not item.needs_model for item in items if item.checks)


def test_derived_items_for_a_model_stay_in_the_bound_and_judge_abstain() -> None:
    from agentcredit.checklists.build import derive_checklist
    from agentcredit.judging.verifier_judge import verifier_judgments

    task = _task()
    tight = load_rules().model_copy(update={"bounds": load_rules().bounds.model_copy(
        update={"max_items": 4})})
    items, waivers = derive.derive_items(task, tight)
    assert len(items) == 4 and waivers
    assert all("over the rules' bound of 4 items" in w.reason for w in waivers
               if "as an input" not in w.reason)
    checklist = derive_checklist(task, load_rules())
    labels = verifier_judgments(checklist, {c: "passed" for c in task.checks})  # type: ignore[arg-type]
    assert {j.reason for j, i in zip(labels, checklist.items, strict=True)  # type: ignore[union-attr]
            if i.needs_model} == {"needs_model"}
    plain = ChecklistItem(id="C1", text="x", route="assertion", checks=("a",))
    assert "needs_model" not in plain.model_dump(mode="json")  # old hashes unchanged


def test_the_synthesis_prompt_lists_units_grouped_by_role_with_their_section() -> None:
    user = synthesis_messages(_task(), load_rules())[1].text()
    block = user.split("REQUIREMENT UNITS", 1)[1]
    required = block.split("requirements (cover each):\n", 1)[1]
    assert "(under 'You need to:')\n- [list_item] Parse the binary STL" in required
    assert "(under 'Save the result to `/out/weight.json` in this format:')\n" \
        '- [field] "bracket_weight": 812.5' in required
    assert "notes on tolerance, format and constraints (cover each):\n- [note] NOTE:" in block
    given = block.split("what the agent is given (cover, or waive with a reason):\n", 1)[1]
    assert given.startswith("(under 'Available files:')\n- [field] `/data/part.stl`: the scan")


def _harbor_task(root: Path) -> Path:
    folder = root / "tasks" / "bracket"
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text(INSTRUCTION)
    (folder / "task.toml").write_text('version = "1.0"\n[metadata]\ndifficulty = "easy"\n')
    (folder / "tests" / "test_outputs.py").write_text("import json\n" + VERIFIER)
    (folder / "tests" / "test.sh").write_text("pytest /tests/test_outputs.py\n")
    return folder.parent


def test_show_and_the_report_say_which_items_answer_which_units(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentcredit.checklists.build import COVERAGE
    from agentcredit.cli.app import app
    from agentcredit.report.build import requirement_views

    runner = CliRunner()
    tasks, out = _harbor_task(tmp_path), tmp_path / "checklists"
    assert runner.invoke(app, ["checklists", "build", str(tasks), "--out", str(out)]
                         ).exit_code == 0
    recorded = {u["text"]: u for u in json.loads((out / COVERAGE).read_text())["bracket"]}
    assert recorded['"bracket_weight": 812.5']["items"] == ["C1"]  # test_weight tests it
    assert recorded["Parse the binary STL and keep the largest connected piece."]["items"]
    shown = runner.invoke(app, ["checklists", "show", str(out / "bracket.json")],
                          env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "requirement units" in shown.output
    assert "needs a model" in shown.output and "piece_count" in shown.output
    from agentcredit.checklists.freeze import load_checklists

    frozen = {c.hash: c for c in load_checklists(out).values()}
    [view] = requirement_views(out / COVERAGE, frozen)
    assert view["total"] == len(recorded) and view["for_model"] >= 1
    assert any(r["answer"] == "C1" for r in view["rows"])
