"""Importing skill libraries, not folders: repeated names resolved before any model call."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.skills.agent_skills import redacted_bytes
from agentcredit.skills.bank import load_bank
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer
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


def _folder_with_files(root: Path) -> Path:
    folder = write_skill_md(root / "task-x" / "pdf-tools", "pdf-tools",
                            "Use for PDF text extraction with the bundled script.",
                            "Run `python scripts/extract.py IN OUT`.\n").parent
    (folder / "scripts").mkdir()
    script = folder / "scripts" / "extract.py"
    script.write_text("#!/usr/bin/env python3\nprint('x')\n")
    script.chmod(0o755)
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("# API\n")
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.bin").write_bytes(bytes(range(256)))
    return folder


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_writes_the_whole_skill_folder_byte_for_byte(tmp_path: Path) -> None:
    folder = _folder_with_files(tmp_path / "lib")
    bank = tmp_path / "bank"
    assert runner.invoke(app, ["skills", "import", str(tmp_path / "lib"), "--out",
                               str(bank)], env=ENV).exit_code == 0
    skill = load_bank(bank).get("pdf-tools")
    assert skill is not None and set(skill.files) == {
        "SKILL.md", "scripts/extract.py", "references/api.md", "assets/logo.bin"}
    out = runner.invoke(app, ["skills", "export", str(bank), "--out", str(tmp_path / "out")],
                        env=ENV)
    assert out.exit_code == 0, out.output
    assert _files(tmp_path / "out" / "pdf-tools") == _files(folder)
    assert _files(folder)["scripts/extract.py"][1] == 0o755
    # A file edited inside the bank after import is refused, not exported.
    (bank / "files" / "pdf-tools" / "references" / "api.md").write_text("tampered\n")
    bad = runner.invoke(app, ["skills", "export", str(bank), "--out", str(tmp_path / "o2")],
                        env=ENV)
    assert bad.exit_code == 2 and "edited after import" in " ".join(bad.output.split())


@pytest.mark.corpus
def test_the_shared_library_round_trips_every_file(corpus: Path, tmp_path: Path) -> None:
    library = corpus / "skillsbench" / "skills"
    first, out, second = tmp_path / "b1", tmp_path / "out", tmp_path / "b2"
    assert runner.invoke(app, ["skills", "import", str(library), "--out", str(first)],
                         env=ENV).exit_code == 0
    assert runner.invoke(app, ["skills", "export", str(first), "--out", str(out)],
                         env=ENV).exit_code == 0
    assert runner.invoke(app, ["skills", "import", str(out), "--out", str(second)],
                         env=ENV).exit_code == 0
    a, b = load_bank(first), load_bank(second)
    assert [(s.id, s.files, s.body) for s in a.skills] == [(s.id, s.files, s.body)
                                                            for s in b.skills]
    compared = 0
    for skill in a.skills:
        for source in skill.lineage.sources:
            original = {rel: (redacted_bytes(data), mode)  # a secret-looking value is not kept
                        for rel, (data, mode) in _files(Path(source).parent).items()}
            exported = _files(out / skill.id)
            assert exported == original, skill.id
            compared += len(original)
    assert compared >= 340


def _rubric_responder(body: dict[str, object]) -> str:
    """A rubric whose third criterion fails S-EVIDENCE first, and is fixed when repaired."""
    messages = body.get("messages")
    assert isinstance(messages, list)
    repaired = any(m.get("role") == "assistant" for m in messages)
    rows = [{"statement": f"Step {n} was done.", "evidence": "An output shows the result file.",
             "failure": "An error message shows the file is missing.", "weight": 1.0}
            for n in (1, 2, 3)]
    if not repaired:
        rows[2]["evidence"] = "Done."
    return json.dumps({"rubric": rows})


def test_a_repair_of_a_batch_answer_is_queued_not_sent_live(tmp_path: Path) -> None:
    """The batch trap: a run without --batch after an import must not repair live."""
    skill = write_skill_md(tmp_path / "skills" / "pdf", "pdf", "Use for PDF text.", "Body\n")
    bank = tmp_path / "bank"
    cache = bank / "responses.sqlite"
    with FakeLLMServer(responder=_rubric_responder) as server:
        base = ["skills", "import", str(skill), "--out", str(bank), "--model", "openai/m",
                "--base-url", f"{server.url}/v1"]
        first = runner.invoke(app, [*base, "--batch"], env=ENV)
        assert first.exit_code == 0, first.output
        assert "again with --batch" in " ".join(first.output.split())
        assert batch_round(cache, tmp_path, "1", _rubric_responder) == 1
        # Without --batch: the answer fails S-EVIDENCE and its repair is queued, not live.
        second = runner.invoke(app, base, env=ENV)
        assert second.exit_code == 0, second.output
        assert server.count == 0 and _pending(cache) == 1
        assert "queued 1" in second.output
        assert load_bank(bank).get("pdf").rubric is None  # type: ignore[union-attr]
        assert batch_round(cache, tmp_path, "2", _rubric_responder) == 1
        third = runner.invoke(app, base, env=ENV)
        assert third.exit_code == 0, third.output
        assert server.count == 0 and _pending(cache) == 0
    rubric = load_bank(bank).get("pdf").rubric  # type: ignore[union-attr]
    assert rubric is not None and rubric[2].evidence == "An output shows the result file."


def test_an_offline_failure_is_not_stored_and_is_asked_again(tmp_path: Path) -> None:
    skill = write_skill_md(tmp_path / "skills" / "pdf", "pdf", "Use for PDF text.", "Body\n")
    bank = tmp_path / "bank"
    base = ["skills", "import", str(skill), "--out", str(bank), "--model", "openai/m"]
    dead = runner.invoke(app, [*base, "--base-url", "http://127.0.0.1:9/v1"], env=ENV)
    assert "connection" in dead.output
    with sqlite3.connect(bank / "responses.sqlite") as db:
        assert db.execute("SELECT count(*) FROM failures").fetchone()[0] == 0
    with FakeLLMServer(responder=_rubric_responder) as server:
        again = runner.invoke(app, [*base, "--base-url", f"{server.url}/v1"], env=ENV)
        assert again.exit_code == 0, again.output
        assert server.count >= 1  # asked again by itself, no --retry-failed
    assert load_bank(bank).get("pdf").rubric is not None  # type: ignore[union-attr]
