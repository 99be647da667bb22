"""SWE-bench instances (JSON Lines, one instance per line).

The gold ``patch`` and the ``hints_text`` (issue comments that often give the fix away)
are oracle material: they go to :class:`Oracle`, never into the Task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats._coerce import opt_str
from agentcredit.schema import Oracle, Task, TaskMetadata

ORACLE_FIELDS = ("patch", "hints_text")
_META_FIELDS = ("repo", "base_commit", "version", "created_at", "environment_setup_commit")


def is_swebench_instance(value: Any) -> bool:
    """Whether a decoded JSON value looks like a SWE-bench instance."""
    return isinstance(value, dict) and "instance_id" in value and "problem_statement" in value


def test_id_list(value: Any) -> list[str]:
    """FAIL_TO_PASS / PASS_TO_PASS as a list, whether JSON-encoded or already a list.

    >>> test_id_list('["a::b", "c"]'), test_id_list(["x"]), test_id_list(None)
    (['a::b', 'c'], ['x'], [])
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def read_swebench_instance(value: dict[str, Any], source: Path, line: int) -> Task:
    """One instance as a Task (raises InputError on wrong field types)."""
    instance_id = value.get("instance_id")
    problem = value.get("problem_statement")
    if not isinstance(instance_id, str) or not isinstance(problem, str):
        raise InputError(f"{source}:{line}", "instance_id and problem_statement must be strings")
    f2p = test_id_list(value.get("FAIL_TO_PASS"))
    p2p = test_id_list(value.get("PASS_TO_PASS"))
    test_patch = value.get("test_patch")
    files = {"test_patch.diff": test_patch} if isinstance(test_patch, str) else {}
    extra = {k: value[k] for k in _META_FIELDS if k in value}
    return Task(
        id=instance_id,
        instruction=problem,
        verifier_files=files,
        checks=tuple(dict.fromkeys(f2p + p2p)),
        fail_to_pass=tuple(f2p),
        metadata=TaskMetadata(
            difficulty=opt_str(value.get("difficulty")), category="swe-bench", extra=extra
        ),
        benchmark="swe-bench",
        source_path=f"{source}:{line}",
    )


def swebench_oracle(value: dict[str, Any]) -> Oracle:
    """The oracle fields of an instance, for callers that explicitly ask for them."""
    files = {k: value[k] for k in ORACLE_FIELDS if isinstance(value.get(k), str)}
    return Oracle(task_id=str(value.get("instance_id")), files=files)
