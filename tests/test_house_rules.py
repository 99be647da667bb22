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


def _raises_kind(base: ast.expr, known: set[str]) -> bool:
    name = base.id if isinstance(base, ast.Name) else base.attr \
        if isinstance(base, ast.Attribute) else ""
    return name in known or name.endswith(("Error", "Exception", "Interrupt"))


def test_every_exception_class_lives_in_errors_py() -> None:
    """One exception tree, drawn in errors.py's docstring: no module defines its own."""
    tree = ast.parse((SRC / "errors.py").read_text(encoding="utf-8"))
    known = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    elsewhere = [f"{path.relative_to(SRC)}:{node.name}"
                 for path in SRC.rglob("*.py") if path.name != "errors.py"
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.ClassDef)
                 and any(_raises_kind(b, known | {"Exception", "ValueError"}) for b in node.bases)]
    assert elsewhere == []
    docstring = ast.get_docstring(tree) or ""
    assert [name for name in sorted(known) if not name.startswith("_")
            and name not in docstring] == []


def test_the_jobs_take_at_most_fifteen_parameters() -> None:
    """The model's settings travel as one ModelSpec, not as a dozen keyword arguments."""
    import inspect

    from agentcredit.rewards.jobs import turn_rewards_async
    from agentcredit.runs.pipeline import judge_run_async, score_async
    from agentcredit.skills.jobs import build_bank_from_paths, import_skills_async

    counts = {job.__name__: len(inspect.signature(job).parameters)
              for job in (score_async, judge_run_async, turn_rewards_async,
                          build_bank_from_paths, import_skills_async)}
    assert max(counts.values()) <= 15, counts
