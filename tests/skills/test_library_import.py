"""Importing skill libraries, not folders: repeated names resolved before any model call."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.skills.bank import load_bank
from tests.skills.helpers import write_skill_md

runner = CliRunner()
ENV = {"COLUMNS": "250", "OPENAI_API_KEY": "k"}
DOCX = "Use when a task asks to read or write Word .docx files."


def _library(root: Path) -> Path:
    """Three tasks shipping a docx skill (two identical, one different) and a pdf skill."""
    write_skill_md(root / "task-a" / "docx", "docx", DOCX, "Open it with python-docx.\n")
    write_skill_md(root / "task-b" / "docx", "docx", DOCX, "Open it with python-docx.\n")
    write_skill_md(root / "task-c" / "docx", "docx", DOCX, "Unzip word/document.xml.\n")
    write_skill_md(root / "task-c" / "pdf", "pdf", "Use for PDF text extraction.", "Body\n")
    return root


def _pending(cache: Path) -> int:
    with sqlite3.connect(cache) as db:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])


def test_a_library_with_repeated_names_imports_in_one_command(tmp_path: Path) -> None:
    library = _library(tmp_path / "skills")
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", str(library), "--out", str(bank),
                              "--model", "openai/m", "--batch"], env=ENV)
    assert out.exit_code == 0, out.output
    loaded = load_bank(bank)
    assert sorted(s.id for s in loaded.skills) == ["docx", "docx-task-c", "pdf"]
    docx = loaded.get("docx")
    assert docx is not None and len(docx.lineage.sources) == 2  # both identical copies
    text = " ".join(out.output.split())
    assert "same content as docx" in text and "renamed: 'docx' is another skill" in text
    assert _pending(bank / "responses.sqlite") == 3  # one rubric request per distinct skill


def test_reimporting_by_another_path_is_a_no_op_and_force_replaces(tmp_path: Path) -> None:
    library = _library(tmp_path / "skills")
    bank = tmp_path / "bank"
    assert runner.invoke(app, ["skills", "import", str(library), "--out", str(bank)],
                         env=ENV).exit_code == 0
    before = load_bank(bank).hash
    again = runner.invoke(app, ["skills", "import", str(library.resolve()), "--out",
                                str(bank)], env=ENV)
    assert again.exit_code == 0, again.output
    assert "already in the bank: kept as it is" in " ".join(again.output.split())
    assert load_bank(bank).hash == before
    changed = tmp_path / "other" / "docx"
    write_skill_md(changed, "docx", DOCX, "A third way.\n")
    added = runner.invoke(app, ["skills", "import", str(changed), "--out", str(bank)], env=ENV)
    assert added.exit_code == 0, added.output
    assert load_bank(bank).get("docx-other") is not None  # distinct id, nothing replaced
    forced = runner.invoke(app, ["skills", "import", str(changed), "--out", str(bank),
                                 "--force"], env=ENV)
    assert forced.exit_code == 0, forced.output
    replaced = load_bank(bank).get("docx")
    assert replaced is not None and replaced.body == "A third way.\n"


@pytest.mark.corpus
def test_the_shared_skill_library_imports_whole_with_batched_rubrics(corpus: Path,
                                                                     tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", str(corpus / "skillsbench" / "skills"),
                              "--out", str(bank), "--model", "openai/m", "--batch"], env=ENV)
    assert out.exit_code == 0, out.output
    skills = load_bank(bank).skills
    folders = len(list((corpus / "skillsbench" / "skills").rglob("SKILL.md")))
    assert folders >= 140 and len(skills) <= folders
    assert sum(len(s.lineage.sources) for s in skills) == folders  # every folder accounted
    assert _pending(bank / "responses.sqlite") == len(skills)
