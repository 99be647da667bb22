"""Issue 68: the field tables of the file-format reference name exactly what the code writes.

``docs/reference/formats.md`` explains each output file field by field; a column added to
``scores.csv``, a key added to ``summary.json`` or ``analyze --json``, or a field added to a
``turn_rewards.jsonl`` row must appear there (and a dropped one must go), or this fails.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.store.scores import SCORE_COLUMNS
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "reference" / "formats.md"
EXAMPLES = ROOT / "examples"


def documented(heading: str) -> set[str]:
    """The field names in the first column of the table under the heading that starts so."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def test_scores_csv_columns_are_each_explained() -> None:
    assert documented("`scores.csv`") == set(SCORE_COLUMNS)


def test_summary_and_analyze_keys_are_each_explained(tmp_path: Path) -> None:
    out = tmp_path / "run"
    runner = CliRunner()
    done = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(out)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["analyze", str(out), "--json", str(tmp_path / "a.json"),
                               "--labels", str(EXAMPLES / "labels.csv")])
    assert done.exit_code == 0, done.output
    summary = json.loads((out / "summary.json").read_text())
    assert documented("`summary.json`") == set(summary)
    analysis = json.loads((tmp_path / "a.json").read_text())
    assert documented("`analyze --json FILE`") == set(analysis)
    header = (EXAMPLES / "labels.csv").read_text().splitlines()[0].split(",")
    assert documented("Labels files") == set(header)


def test_turn_reward_rows_are_each_explained() -> None:
    """The keys of the row dict ``rewards/table.py`` writes, read from its source."""
    tree = ast.parse((ROOT / "src" / "agentcredit" / "rewards" / "table.py").read_text())
    function = next(n for n in ast.walk(tree)
                    if isinstance(n, ast.FunctionDef) and n.name == "_rows")
    row = next(n for n in ast.walk(function) if isinstance(n, ast.Dict) and len(n.keys) > 10)
    keys = {k.value for k in row.keys if isinstance(k, ast.Constant)}
    assert documented("`turn_rewards.jsonl`") == keys


def test_every_environment_variable_the_code_reads_is_on_the_cli_page() -> None:
    """An ``AGENTCREDIT_*`` variable read anywhere in ``src`` is in the CLI reference's table."""
    code = "\n".join(p.read_text(encoding="utf-8")
                     for p in (ROOT / "src" / "agentcredit").rglob("*.py"))
    read = set(re.findall(r"\"(AGENTCREDIT_[A-Z_]+)\"", code))
    read |= {f"AGENTCREDIT_{n}" for n in re.findall(r"number\(\"([A-Z_]+)\"", code)}
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert len(read) >= 15
    assert sorted(v for v in read if f"`{v}`" not in page) == []


def test_the_inspect_json_keys_the_scoring_guide_names_are_the_printed_ones() -> None:
    done = CliRunner().invoke(app, ["inspect", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                    "--json"])
    printed = json.loads(done.output)
    guide = (ROOT / "docs" / "guides" / "scoring.md").read_text(encoding="utf-8")
    line = " ".join(guide.split("`--json` prints one object:", 1)[1].split("\n\n", 1)[0].split())
    named = set(re.findall(r"`(\w+)`", line))
    assert named == set(printed) | set(printed["tasks"][0]) | set(printed["trials"][0])


def test_every_option_of_every_command_has_help() -> None:
    """The CLI reference is written from the help texts: an option without one is a blank
    row there."""
    import typer.main

    missing = []

    def walk(command: Any, path: list[str]) -> None:
        if getattr(command, "commands", None):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
            return
        missing.extend(f"{' '.join(path)} {p.opts[0]}" for p in command.params
                       if p.param_type_name == "option" and p.name != "help"
                       and not getattr(p, "hidden", False) and not (p.help or "").strip())

    walk(typer.main.get_command(app), ["agentcredit"])
    assert missing == []
