"""Requirement units come from the instruction's markdown structure: every list item (at
any depth) and every table row under any lead-in is a unit, with the section it stands under
and a role; the lead-ins below are ones real instructions use, each in text written here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcredit.checklists.gates import COVER_REQUIREMENTS, instruction_units, run_gates
from agentcredit.checklists.rules import load_rules
from agentcredit.checklists.units import requirement_units
from agentcredit.schema import ChecklistItem, Waiver

LEAD_INS = [
    ("In ring_buffer.c (the lock-free queue), add:",
     ["a `drain()` function that empties the queue", "a counter of dropped writes"]),
    ("## Notes", ["Timestamps are UTC", "Ignore rows whose id is blank"]),
    ("Notes:", ["The port stays 8080", "Log lines go to stderr"]),
    ("Where:", ["`w` is the window length in samples", "`k` is the number of lags"]),
    ("**You decide:**", ["the colour scheme of the chart", "the order of the legend"]),
    ("Quality flags (`true`/`false`, from the scores you computed)",
     ["`is_balanced`: no class above 60%", "`has_leakage`: a test id also in train"]),
    ("Upload/Download Ratio (UDR) per host:",
     ["`UDR = (up - down) / (up + down)` (skip when both are 0)",
      "`num_uploaders`: hosts with UDR > 0.3"]),
    ("For each learning-rate setting:", ["train for 3 epochs", "record the final loss"]),
    ("**Note:** When computing medians:", ["drop missing values first",
                                            "round to two decimals"]),
    ("Steps for each patient file:", ["read the header", "convert the units to mmol/L"]),
    ("Sizes", ["`total_kb`: sum of file sizes", "`largest_kb`: the biggest file"]),
    ("Rows: Sum of SALES_2024", ["grouped by REGION", "sorted descending"]),
]


def _units(text: str) -> dict[str, object]:
    return {u.text: u for u in instruction_units(text, load_rules())}


@pytest.mark.parametrize(("lead", "items"), LEAD_INS, ids=[lead for lead, _ in LEAD_INS])
def test_items_under_each_lead_in_are_requirement_units(lead: str, items: list[str]) -> None:
    text = ("Compute the summary for the files in /data and write it to /out/summary.json.\n\n"
            + lead + "\n" + "".join(f"- {item}\n" for item in items))
    units = _units(text)
    for item in items:
        assert item in units, (lead, item, list(units))
        unit = units[item]
        assert unit.role in ("requirement", "note")  # type: ignore[attr-defined]
        assert lead.strip("#* ").split()[0] in unit.section  # type: ignore[attr-defined]


@pytest.mark.parametrize("lead", ["Input explanations:", "Each scenario contains:",
                                  "My data is in `/root/data/`, which includes:",
                                  "## Inputs"])
def test_items_that_describe_inputs_are_input_units_a_model_may_waive(lead: str) -> None:
    text = ("Write the forecast to /out/forecast.csv.\n\n" + lead + "\n"
            "- `sales.csv`: one row per day\n- `stores.csv`: store metadata\n"
            "- You must not modify `stores.csv`\n")
    units = _units(text)
    assert units["`sales.csv`: one row per day"].role == "input"  # type: ignore[attr-defined]
    assert units["You must not modify `stores.csv`"].role == "requirement"  # type: ignore[attr-defined]
    rules = load_rules()
    item = ChecklistItem(id="C1", text="The forecast is written.", route="generated",
                         quotes=("Write the forecast to /out/forecast.csv.",))
    keep = ChecklistItem(id="C2", text="stores.csv is unchanged.", route="generated",
                         quotes=("You must not modify `stores.csv`",))
    waivers = [Waiver(sentence=s, reason="describes an input")
               for s in ("`sales.csv`: one row per day", "`stores.csv`: store metadata")]
    assert not [f for f in run_gates([item, keep], waivers, text, [], rules)
                if f.code == COVER_REQUIREMENTS]
    missing = [f.message for f in run_gates([item, keep], [], text, [], rules)
               if f.code == COVER_REQUIREMENTS]
    assert len(missing) == 2 and all("one row per day" in m or "store metadata" in m
                                     for m in missing)  # input units are asked for too


def test_nested_items_table_rows_and_output_blocks_are_units() -> None:
    text = """Produce the report.

Metrics
- `latency_*`: per-request latency
  - `latency_p50`, `latency_p99`
  - `latency_max`: the slowest request

| column | meaning |
|---|---|
| `host` | the machine name |
| `cpu_pct` | mean CPU use |

Write `/out/edges.csv` with this header:
```csv
source,target,weight
```

The config file must look like:
```yaml
retries: 3
backoff:
  base_ms: 100
```
Exit Code: 0
"""
    units = _units(text)
    assert {"`latency_p50`, `latency_p99`", "`latency_max`: the slowest request"} <= set(units)
    assert units["`latency_max`: the slowest request"].section == (  # type: ignore[attr-defined]
        "`latency_*`: per-request latency")
    assert units["| `host` | the machine name |"].kind == "table_row"  # type: ignore[attr-defined]
    assert "| column | meaning |" not in units  # a header row with a body is not a unit
    assert {"source", "target", "weight", "retries: 3", "backoff:", "base_ms: 100"} <= set(units)
    assert not any("Exit Code" in t for t in units)  # a harness status line is not asked for


def test_the_rules_boilerplate_is_left_out(tmp_path: object) -> None:
    text = "Write /out/a.txt.\n\n- Do not use the network.\n- Print the total.\n"
    rules = load_rules()
    rules = rules.model_copy(update={"coverage": rules.coverage.model_copy(
        update={"boilerplate": ("Do not use the network.",)})})
    texts = [u.text for u in instruction_units(text, rules)]
    assert "Print the total." in texts and "Do not use the network." not in texts


_WORD = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"),
                                       max_codepoint=0x7f), min_size=2, max_size=8)
_ITEM = st.lists(_WORD, min_size=1, max_size=6).map(" ".join)


@st.composite
def _lists(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A lead-in and a list (bullets or numbers, nested up to three deep) of drawn items."""
    lines, items = [], []
    lead = draw(st.sampled_from(["Sizes", "Where:", "Notes:", "Available files:",
                                 "You need to:", "Each case has:", "## Output"]))
    for _ in range(draw(st.integers(1, 8))):
        depth = draw(st.integers(0, 2))
        marker = draw(st.sampled_from(["-", "*", "+", "1.", "2)"]))
        item = draw(_ITEM)
        items.append(item)
        lines.append("   " * depth + f"{marker} {item}")
    return f"Do the work.\n\n{lead}\n" + "\n".join(lines) + "\n", items


@settings(max_examples=150, deadline=None)
@given(_lists())
def test_every_drawn_list_item_reaches_a_verbatim_unit(drawn: tuple[str, list[str]]) -> None:
    text, items = drawn
    units = requirement_units(text, ("must", "need"))
    for unit in units:
        assert text[unit.start:unit.start + len(unit.text)] == unit.text
    for item in items:
        assert any(item in unit.text for unit in units), (text, item)
