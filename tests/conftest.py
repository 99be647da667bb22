"""Shared fixtures: paths to the shipped examples and to the optional real corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The real benchmark corpus beside the project; skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


def write_json(path: Path, value: Any) -> Path:
    """Write ``value`` as JSON, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path
