"""The house's static checks as tests: ruff over src and tests, mypy (strict, pydantic plugin,
pyproject's settings) over src. Both come with the dev extra; each skips without it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(("tool", "args"), [("ruff", ["check", "src", "tests"]),
                                            ("mypy", ["src"])])
def test_the_tree_passes(tool: str, args: list[str]) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (the dev extra)")
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
