"""Verifier check ids parsed from pytest source, in the form CTRF reports use.

``test_outputs.py::TestPivot::test_row`` for methods of test classes (nested classes
give several ``::`` parts), ``test_outputs.py::test_x`` for module-level functions.
"""

from __future__ import annotations

import ast
import re
import warnings

_TEST_FUNC = re.compile(r"^(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE)


def is_test_file(name: str) -> bool:
    """Whether pytest would collect this file name by default.

    >>> is_test_file("test_outputs.py"), is_test_file("outputs_test.py"), is_test_file("x.py")
    (True, True, False)
    """
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))


def pytest_check_ids(file_name: str, source: str) -> tuple[list[str], str | None]:
    """Collect test ids from one pytest file.

    Returns the ids and, when the file does not parse as Python, a note saying that a
    line-based fallback was used (which cannot see classes).

    >>> src = "class TestA:\\n    def test_x(self): pass\\ndef test_y(): pass\\n"
    >>> pytest_check_ids("test_outputs.py", src)
    (['test_outputs.py::TestA::test_x', 'test_outputs.py::test_y'], None)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in someone else's tests
            tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        ids = [f"{file_name}::{name}" for name in _TEST_FUNC.findall(source)]
        return ids, f"{file_name} does not parse as Python ({exc.__class__.__name__}); " \
            "check ids found by line search, without classes"
    found: list[str] = []
    _collect(tree.body, file_name, found)
    return found, None


def _collect(body: list[ast.stmt], prefix: str, out: list[str]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                out.append(f"{prefix}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") \
                and not _has_init(node):
            _collect(node.body, f"{prefix}::{node.name}", out)


def _has_init(node: ast.ClassDef) -> bool:
    # pytest skips test classes with an __init__; mirror that.
    return any(
        isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body
    )


def strip_parameters(check_id: str) -> str:
    """Drop a parametrization suffix: ``test_x[a-1]`` -> ``test_x``.

    >>> strip_parameters("t.py::TestA::test_x[a-1]")
    't.py::TestA::test_x'
    """
    if check_id.endswith("]") and "[" in check_id:
        return check_id[: check_id.index("[")]
    return check_id
