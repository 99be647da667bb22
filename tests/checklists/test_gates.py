"""Every gate fails the items it must fail and passes the items it must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.checklists import gates
from agentcredit.checklists.rules import load_rules
from agentcredit.errors import ConfigError
from agentcredit.schema import ChecklistItem, Waiver

RULES = load_rules()
INSTRUCTION = ("Write `/app/out.json` with the totals per region.\n"
               "Regions must appear in alphabetical order.\nDo not modify `/app/in.csv`.\n")
CHECKS = ["test_outputs.py::test_exists", "test_outputs.py::TestX::test_sorted"]


def item(id: str = "C1", text: str = "The totals are written.", route: str = "assertion",
         quotes: tuple[str, ...] = ("Regions must appear in alphabetical order.",),
         checks: tuple[str, ...] = ("test_outputs.py::test_exists",)) -> ChecklistItem:
    return ChecklistItem(id=id, text=text, route=route, quotes=quotes,  # type: ignore[arg-type]
                         checks=checks)


def codes(failures: list[gates.GateFailure]) -> list[str]:
    return [f.code for f in failures]


def test_shape() -> None:
    assert gates.gate_shape([item("C1"), item("C2")]) == []
    assert codes(gates.gate_shape([item("C1"), item("C1"), item("C3", text=" ")])) == \
        [gates.SHAPE, gates.SHAPE]


def test_verbatim_quote_after_normalization() -> None:
    good = item(quotes=("Regions  must appear\nin alphabetical order.",))
    assert gates.gate_quotes([good], INSTRUCTION) == []
    bad = item(quotes=("Regions must be in alphabetical order.",))
    failures = gates.gate_quotes([bad], INSTRUCTION)
    assert codes(failures) == [gates.QUOTE] and "not found" in failures[0].message


def test_verifier_reference() -> None:
    assert gates.gate_check_refs([item(checks=(CHECKS[1],))], CHECKS) == []
    assert gates.gate_check_refs([item(checks=("test_outputs.py::TestX::test_sorted[a-1]",))],
                                 CHECKS) == []
    assert codes(gates.gate_check_refs([item(checks=("test_outputs.py::test_nope",))],
                                       CHECKS)) == [gates.CHECK_REF]


def test_provenance() -> None:
    assert gates.gate_provenance([item()]) == []
    assert codes(gates.gate_provenance([item(quotes=(), checks=())])) == [gates.PROVENANCE]


def test_route_consistency() -> None:
    ok = [item(), item("C2", route="generated", checks=()), item("C3", route="judge", checks=())]
    assert gates.gate_routes(ok) == []
    bad = [item(route="assertion", checks=()), item("C2", route="generated"),
           item("C3", route="judge", quotes=())]
    assert codes(gates.gate_routes(bad)) == [gates.ROUTE] * 3


def test_procedural_items() -> None:
    assert gates.gate_procedural([item(text="The output file holds the totals.")], RULES) == []
    bad = gates.gate_procedural([item(text="Run python3 sum.py to compute totals.")], RULES)
    assert codes(bad) == [gates.PROCEDURAL]


def test_near_duplicates() -> None:
    pair = [item("C1", text="Regions appear in alphabetical order."),
            item("C2", text="The regions appear in alphabetical order!")]
    assert codes(gates.gate_duplicates(pair, RULES)) == [gates.DUPLICATE]
    distinct = [pair[0], item("C2", text="The input CSV is left unchanged.")]
    assert gates.gate_duplicates(distinct, RULES) == []


def test_check_coverage() -> None:
    both = [item(checks=(CHECKS[0],)), item("C2", checks=(CHECKS[1],))]
    assert gates.gate_check_coverage(both, CHECKS, RULES) == []
    failures = gates.gate_check_coverage([item(checks=(CHECKS[0],))], CHECKS, RULES)
    assert codes(failures) == [gates.COVER_CHECKS] and CHECKS[1] in failures[0].message


def test_requirement_coverage_and_waivers() -> None:
    quotes = ("Write `/app/out.json` with the totals per region.",
              "Regions must appear in alphabetical order.")
    waiver = Waiver(sentence="Do not modify `/app/in.csv`.", reason="no check reads the input")
    assert gates.gate_requirement_coverage([item(quotes=quotes)], [waiver], INSTRUCTION,
                                           RULES) == []
    missing = gates.gate_requirement_coverage([item(quotes=quotes)], [], INSTRUCTION, RULES)
    assert codes(missing) == [gates.COVER_REQUIREMENTS] and "in.csv" in missing[0].message
    no_reason = Waiver(sentence="Do not modify `/app/in.csv`.", reason=" ")
    invented = Waiver(sentence="Be fast.", reason="speed is not checked")
    assert gates.WAIVER in codes(gates.gate_requirement_coverage(
        [item(quotes=quotes)], [no_reason, invented], INSTRUCTION, RULES))


def test_item_count_bounds() -> None:
    assert gates.gate_count([item()], RULES) == []
    assert codes(gates.gate_count([], RULES)) == [gates.COUNT]
    many = [item(f"C{i}") for i in range(RULES.bounds.max_items + 1)]
    assert codes(gates.gate_count(many, RULES)) == [gates.COUNT]


def test_rules_file_errors_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("id: x\nversion: '2'\nitem_contract: c\nprovenance: p\nroutes: {a: b}\n")
    with pytest.raises(ConfigError, match="routes must define assertion"):
        load_rules(bad)
    bad.write_text("id: [unclosed")
    with pytest.raises(ConfigError, match="malformed YAML"):
        load_rules(bad)
    with pytest.raises(ConfigError, match="cannot read rules"):
        load_rules(tmp_path / "missing.yaml")
