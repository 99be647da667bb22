"""Terminal-Bench 1 task folders: task.yaml + run-tests.sh + tests/.

SWE-bench tasks in this layout keep the gold patch inside ``tests/config.json``; that
field is removed from the verifier text and left for the oracle reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats.harbor_task import _metadata
from agentcredit.formats.structured import parse_yaml
from agentcredit.formats.swebench import ORACLE_FIELDS, test_id_list
from agentcredit.formats.verifier_files import collect_files, pytest_checks
from agentcredit.safe_io import read_text
from agentcredit.schema import Task

ORACLE_FILES = ("solution.sh", "solution.yaml", "solution")


def read_tb1_task(folder: Path) -> Task:
    """Read one Terminal-Bench 1 task folder."""
    path = folder / "task.yaml"
    config = parse_yaml(read_text(path), str(path))
    if not isinstance(config, dict):
        raise InputError(str(path), "expected a YAML mapping")
    instruction = _instruction(config)
    if instruction is None:
        raise InputError(str(path), "no 'instruction' (or 'descriptions') field")
    files, skipped = collect_files(folder, [folder / "run-tests.sh", folder / "tests"])
    notes: list[str] = []
    parser = str(config.get("parser_name") or "pytest")
    fail_to_pass: list[str] = []
    if parser == "swebench":
        checks, fail_to_pass = _swebench_checks(files, notes)
    else:
        pytest_ids, notes = pytest_checks(files, "tests/")
        # The TB1 pytest parser reports bare function names.
        checks = list(dict.fromkeys(cid.rsplit("::", 1)[-1] for cid in pytest_ids))
    if not checks:
        notes.append(f"no verifier checks found (parser {parser})")
    meta = {k: v for k, v in config.items() if k not in {"instruction", "descriptions"}}
    return Task(id=folder.name, instruction=instruction, verifier_files=files,
                skipped_files=skipped, checks=tuple(checks), fail_to_pass=tuple(fail_to_pass),
                metadata=_metadata(meta), benchmark="terminal-bench-1",
                source_path=str(folder), notes=tuple(notes))


def _instruction(config: dict[str, Any]) -> str | None:
    text = config.get("instruction")
    if isinstance(text, str):
        return text
    descriptions = config.get("descriptions")
    if isinstance(descriptions, list):
        for entry in descriptions:
            if isinstance(entry, dict) and isinstance(entry.get("description"), str) \
                    and entry.get("key", "base") == "base":
                return str(entry["description"])
    return None


def _swebench_checks(files: dict[str, str], notes: list[str]) -> tuple[list[str], list[str]]:
    raw = files.get("tests/config.json")
    if raw is None:
        notes.append("swebench parser but no tests/config.json")
        return [], []
    try:
        config = json.loads(raw)
    except json.JSONDecodeError:
        notes.append("tests/config.json is not valid JSON")
        return [], []
    if not isinstance(config, dict):
        return [], []
    removed = [field for field in ORACLE_FIELDS if field in config]
    if removed:
        cleaned = {k: v for k, v in config.items() if k not in ORACLE_FIELDS}
        files["tests/config.json"] = json.dumps(cleaned, indent=2)
        notes.append(f"oracle fields removed from tests/config.json: {', '.join(removed)}")
    f2p = test_id_list(config.get("FAIL_TO_PASS"))
    p2p = test_id_list(config.get("PASS_TO_PASS"))
    return list(dict.fromkeys(f2p + p2p)), f2p
