"""Collecting a task's verifier files as text, skipping what cannot be shown to a model."""

from __future__ import annotations

import os
from pathlib import Path

from agentcredit.errors import InputError
from agentcredit.formats.pytest_checks import is_test_file, pytest_check_ids
from agentcredit.safe_io import decode_text, read_bytes

MAX_VERIFIER_FILE_BYTES = 512 * 1024
"""Verifier files above this size are skipped with a note (data blobs, fixtures)."""


def collect_files(
    root: Path, paths: list[Path]
) -> tuple[dict[str, str], dict[str, str]]:
    """Read ``paths`` (files or folders) under ``root`` as text.

    Returns ``(files, skipped)``: relative path -> text, and relative path -> reason.
    """
    files: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for path in paths:
        for file in _walk(path):
            rel = file.relative_to(root).as_posix()
            try:
                data = read_bytes(file, MAX_VERIFIER_FILE_BYTES)
                files[rel] = decode_text(file, data)
            except InputError as exc:
                skipped[rel] = exc.reason
    return files, skipped


def _walk(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in {"__pycache__", ".git"})
        found.extend(Path(dirpath) / name for name in sorted(filenames))
    return found


def pytest_checks(files: dict[str, str], tests_prefix: str) -> tuple[list[str], list[str]]:
    """Check ids from every pytest file among ``files`` (paths under ``tests_prefix``).

    Ids are relative to the tests folder, as pytest-json-ctrf writes them when pytest is
    given ``/tests/test_outputs.py``.
    """
    ids: list[str] = []
    notes: list[str] = []
    candidates = [rel for rel in files if rel.startswith(tests_prefix) and is_test_file(rel)]
    # When the entry script names the test files it runs, helpers beside them are not checks.
    scripts = " ".join(text for rel, text in files.items() if rel.endswith(".sh"))
    named = [rel for rel in candidates if rel.rsplit("/", 1)[-1] in scripts]
    for rel in named or candidates:
        text = files[rel]
        found, note = pytest_check_ids(rel[len(tests_prefix):], text)
        ids.extend(found)
        if note:
            notes.append(note)
    return ids, notes
