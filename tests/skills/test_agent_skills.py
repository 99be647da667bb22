"""SKILL.md and SkillRL import/export: guidance round-trips byte for byte, rubric never leaves."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import register_script
from agentcredit.skills.agent_skills import import_paths, parse_skill_md
from agentcredit.skills.bank import load_bank
from tests.skills import scripted_skills
from tests.skills.helpers import write_skill_md

runner = CliRunner()
BODY_A = ("# Log triage\n\nUse `grep -n ERROR` to find lines, then check them.\r\n"
          "  trailing spaces stay  \n\n- ünïcödé — kept\n")
BODY_B = "Plain body without a final newline"


def _skills(root: Path) -> list[Path]:
    return [write_skill_md(root / "log-triage", "log-triage",
                           "Use when a task asks to filter or count log lines by level.",
                           BODY_A, extra="license: MIT\nmetadata:\n  author: tests\n").parent,
            write_skill_md(root / "csv-summaries", "csv-summaries",
                           "Use for summarising CSV files into JSON totals.", BODY_B).parent]


def test_import_then_export_round_trips_guidance_byte_for_byte(tmp_path: Path) -> None:
    folders = _skills(tmp_path / "in")
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", *map(str, folders), "--out", str(bank)])
    assert out.exit_code == 0, out.output
    assert "2 skills (2 with rubric: none)" in out.output
    loaded = load_bank(bank)
    assert {s.id for s in loaded.skills} == {"log-triage", "csv-summaries"}
    assert all(s.rubric is None for s in loaded.skills)
    exported = tmp_path / "out"
    out = runner.invoke(app, ["skills", "export", str(bank), "--out", str(exported)])
    assert out.exit_code == 0, out.output
    for folder in folders:
        original = (folder / "SKILL.md").read_bytes()
        again = (exported / folder.name / "SKILL.md").read_bytes()
        body = original.split(b"\n---\n", 1)[1]
        assert again.split(b"\n---\n", 1)[1] == body
        reread = parse_skill_md(again.decode(), "x", "x")
        first = parse_skill_md(original.decode(), "y", "y")
        assert (reread.applicability, reread.metadata, reread.id) == \
            (first.applicability, first.metadata, first.id)


def test_import_with_a_model_derives_gated_rubrics_that_export_never_shows(
        tmp_path: Path) -> None:
    calls: list[str] = []

    def script(messages: list[dict[str, object]], schema: dict[str, object] | None) -> str:
        text = scripted_skills.text_of(messages)  # type: ignore[arg-type]
        calls.append(text)
        if "log-triage" in text and "failed these deterministic gates" not in text:
            rubric = scripted_skills.criteria("imported")
            rubric[0]["evidence"] = "The grep output shows the matching lines."
            return json.dumps({"rubric": rubric})  # names a command of the guidance
        return scripted_skills.answer(messages, schema)  # type: ignore[arg-type]

    register_script("import-rubric", script)
    folders = _skills(tmp_path / "in")
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", *map(str, folders), "--out", str(bank),
                              "--model", "scripted/import-rubric", "--no-cache"])
    assert out.exit_code == 0, out.output
    assert "rubrics derived 2" in out.output
    repairs = [c for c in calls if "[S-TOOL] item R1: names 'grep' (as a word; a command "
               "in the guidance's inline code)" in c]
    assert len(repairs) == 1 and len(calls) == 3
    loaded = load_bank(bank)
    assert all(s.rubric is not None and len(s.rubric) == 3 for s in loaded.skills)
    exported = tmp_path / "out"
    runner.invoke(app, ["skills", "export", str(bank), "--out", str(exported)])
    for skill in loaded.skills:
        text = (exported / skill.id / "SKILL.md").read_text()
        assert skill.rubric is not None
        for criterion in skill.rubric:
            assert criterion.statement not in text and criterion.evidence not in text
        assert "lineage" not in text and "import" not in text.split("---")[1]


def test_unreadable_skill_folders_are_reported_and_the_rest_imported(tmp_path: Path) -> None:
    good = _skills(tmp_path / "in")[0]
    nodesc = tmp_path / "in" / "no-description"
    nodesc.mkdir()
    (nodesc / "SKILL.md").write_text("---\nname: x\n---\nbody\n")
    nofront = tmp_path / "in" / "no-front"
    nofront.mkdir()
    (nofront / "SKILL.md").write_text("# just markdown\n")
    empty = tmp_path / "in" / "empty"
    empty.mkdir()
    result = import_paths([good, nodesc, nofront, empty, tmp_path / "missing"])
    assert [s.id for s in result.skills] == ["log-triage"]
    reasons = dict(result.errors)
    assert "no description" in reasons[str(nodesc / "SKILL.md")]
    assert "no YAML front matter" in reasons[str(nofront / "SKILL.md")]
    assert "no SKILL.md found" in reasons[str(empty)]
    assert "no such file" in reasons[str(tmp_path / "missing")]
    out = runner.invoke(app, ["skills", "import", str(good), str(nodesc), "--out",
                              str(tmp_path / "bank")])
    assert out.exit_code == 2 and "no description" in out.output
    assert len(load_bank(tmp_path / "bank").skills) == 1


def test_skillrl_json_both_ways(tmp_path: Path) -> None:
    source = tmp_path / "skillrl.json"
    source.write_text(json.dumps({
        "general_skills": [{"skill_id": "gen_001", "title": "Verify before answering",
                            "principle": "Check the result.\n", "when_to_apply": "Always."}],
        "task_specific_skills": {"web": [{"skill_id": "web_001", "title": "Quote queries",
                                          "principle": "Quote exact titles.",
                                          "when_to_apply": "Searching for a title."}]}}))
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", str(source), "--out", str(bank)])
    assert out.exit_code == 0, out.output
    exported = tmp_path / "export.json"
    out = runner.invoke(app, ["skills", "export", str(bank), "--out", str(exported),
                              "--format", "skillrl"])
    assert out.exit_code == 0, out.output
    data = json.loads(exported.read_text())
    entries = {e["skill_id"]: e for e in data["general_skills"]}
    assert entries["gen-001"]["principle"] == "Check the result.\n"
    assert entries["web-001"]["when_to_apply"] == "Searching for a title."
    assert set(entries["web-001"]) == {"skill_id", "title", "principle", "when_to_apply"}


def test_reimporting_is_idempotent_and_a_changed_skill_needs_force(tmp_path: Path) -> None:
    folders = _skills(tmp_path / "in")
    bank = tmp_path / "bank"
    assert runner.invoke(app, ["skills", "import", str(folders[0]), "--out",
                               str(bank)]).exit_code == 0
    first = load_bank(bank).hash
    same = runner.invoke(app, ["skills", "import", str(folders[0]), "--out", str(bank)])
    assert same.exit_code == 0 and load_bank(bank).hash == first
    write_skill_md(folders[0], "log-triage", "Changed description.", BODY_A)
    again = runner.invoke(app, ["skills", "import", str(folders[0]), "--out", str(bank)])
    assert again.exit_code == 2 and "--force" in again.output
    assert load_bank(bank).hash == first
    assert runner.invoke(app, ["skills", "import", *map(str, folders), "--out", str(bank),
                               "--force"]).exit_code == 0
    reloaded = load_bank(bank)
    assert len(reloaded.skills) == 2
    assert reloaded.get("log-triage").applicability == "Changed description."  # type: ignore[union-attr]


def test_batch_import_adds_the_rubrics_on_the_next_run(tmp_path: Path) -> None:
    from tests.llm.fake_server import FakeLLMServer, write_batch_results

    def responder(body: dict[str, object]) -> str:
        schema = body["response_format"]["json_schema"]["schema"]  # type: ignore[index]
        return scripted_skills.answer(body["messages"], schema)  # type: ignore[arg-type]

    folders = _skills(tmp_path / "in")
    bank = tmp_path / "bank"
    cache = bank / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["skills", "import", *map(str, folders), "--out", str(bank), "--model",
                "openai/m", "--base-url", f"{server.url}/v1"]
        first = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
        assert first.exit_code == 0 and "rubric requests queued" in first.output, first.output
        assert all(s.rubric is None for s in load_bank(bank).skills)
        requests, results = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
        runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out", str(requests)])
        write_batch_results(requests, results, responder)
        runner.invoke(app, ["batch", "import", str(results), "--cache", str(cache)])
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "k"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    assert all(s.rubric is not None for s in load_bank(bank).skills)
    # Importing again without a model keeps the rubrics.
    assert runner.invoke(app, ["skills", "import", *map(str, folders), "--out",
                               str(bank)]).exit_code == 0
    assert all(s.rubric is not None for s in load_bank(bank).skills)


def test_a_forged_bank_with_a_traversal_id_is_refused_and_nothing_escapes(
        tmp_path: Path) -> None:
    from agentcredit.skills.bank import LOCK_NAME, bank_hash, skill_hash

    folders = _skills(tmp_path / "in")
    bank = tmp_path / "deep" / "er" / "bank"
    assert runner.invoke(app, ["skills", "import", *map(str, folders), "--out",
                               str(bank)]).exit_code == 0
    data = json.loads((bank / "bank.json").read_text())
    # A forger recomputes the hash and the lock: the id check does not rest on them.
    from agentcredit.schema import Skill

    skills = [Skill.model_validate(s) for s in data["skills"]]
    skills[0] = skills[0].model_copy(update={"id": "../../../escaped"})  # no validation
    data["skills"][0]["id"] = "../../../escaped"
    data["hash"] = bank_hash(skills, data.get("benchmark"))
    (bank / "bank.json").write_text(json.dumps(data))
    (bank / LOCK_NAME).write_text(json.dumps({"hash": data["hash"], "skills": {
        s.id: skill_hash(s) for s in skills}}))
    exported = tmp_path / "deep" / "er" / "out"
    out = runner.invoke(app, ["skills", "export", str(bank), "--out", str(exported)])
    assert out.exit_code != 0
    assert "skills.0.id" in out.output and "Traceback" not in out.output, out.output
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "deep" / "escaped").exists()
