"""The house rules that a reviewer would otherwise check by eye."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "agentcredit"
MAX_FUNCTION_LINES = 60


def test_no_function_in_src_is_over_60_lines() -> None:
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({lines})")
    assert not long, long


MAX_CLI_MODULE_LINES = 250


def test_no_command_line_module_is_over_250_lines() -> None:
    long = [f"{path.name} ({n})" for path in sorted((SRC / "cli").glob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_CLI_MODULE_LINES]
    assert not long, long
