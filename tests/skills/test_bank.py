"""Frozen banks: hash and lock written, an edited bank refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcredit.errors import ConfigError, InputError, IntegrityError
from agentcredit.skills.bank import bank_hash, freeze_bank, load_bank, make_bank
from agentcredit.skills.importing import require_rubric
from tests.skills.helpers import make_skill


def _bank(tmp_path: Path) -> Path:
    bank = make_bank([make_skill("b"), make_skill("a")], benchmark="harbor",
                     embedding="lexical-tfidf-1", rules_version="r", prompt_version="p")
    freeze_bank(bank, tmp_path / "bank")
    return tmp_path / "bank"


def test_frozen_bank_loads_with_matching_hash_and_lock(tmp_path: Path) -> None:
    folder = _bank(tmp_path)
    bank = load_bank(folder)
    assert [s.id for s in bank.skills] == ["a", "b"]
    assert bank.hash == bank_hash(bank.skills, "harbor")
    lock = json.loads((folder / "bank.lock").read_text())
    assert lock["hash"] == bank.hash and set(lock["skills"]) == {"a", "b"}
    assert load_bank(folder / "bank.json").hash == bank.hash


def test_edited_bank_is_refused(tmp_path: Path) -> None:
    folder = _bank(tmp_path)
    path = folder / "bank.json"
    data = json.loads(path.read_text())
    data["skills"][0]["rubric"][0]["weight"] = 5.0  # a quiet edit after freezing
    path.write_text(json.dumps(data))
    with pytest.raises(IntegrityError, match="edited after freezing"):
        load_bank(folder)


def test_rehashed_edit_is_caught_by_the_lock(tmp_path: Path) -> None:
    folder = _bank(tmp_path)
    path = folder / "bank.json"
    data = json.loads(path.read_text())
    data["skills"][0]["applicability"] = "Something else."
    from agentcredit.schema import SkillBank

    edited = SkillBank.model_validate(data)
    data["hash"] = bank_hash(edited.skills, edited.benchmark)
    path.write_text(json.dumps(data))
    with pytest.raises(IntegrityError, match=r"bank\.lock"):
        load_bank(folder)


def test_missing_bank_and_duplicate_ids_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no bank here"):
        load_bank(tmp_path)
    with pytest.raises(ConfigError, match="duplicate skill ids"):
        make_bank([make_skill("a"), make_skill("a")], benchmark=None, embedding="x",
                  rules_version="r", prompt_version="p")


def test_a_skill_without_rubric_is_refused_with_one_line() -> None:
    skill = make_skill(rubric=None)
    with pytest.raises(ConfigError) as info:
        require_rubric(skill)
    assert "has no rubric" in str(info.value) and "\n" not in str(info.value)
    assert require_rubric(make_skill()) is not None
