"""The fast ATIF path builds exactly the records the general path builds."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic_core
import pytest

from agentcredit.formats import _atif_fast, atif
from tests.conftest import EXAMPLES


def _both(path: Path) -> tuple[object, object] | None:
    raw = path.read_bytes()
    doc = pydantic_core.from_json(raw)
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(steps, list):
        return None
    offsets = atif._step_offsets(raw, len(steps))
    offsets += [None] * (len(steps) - len(offsets))
    general = atif.STEPS.validate_python(
        [atif._step(str(path), i, s, offsets[i]) for i, s in enumerate(steps)])
    fast = _atif_fast.fast_steps(json.loads(raw)["steps"], str(path), offsets)
    if fast is None:
        return None
    return general, fast


def _trajectories(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("trajectory.json") if p.is_file())


def test_fast_path_equals_general_path_on_the_examples() -> None:
    assert _atif_fast._VALIDATOR is not None  # this pydantic-core supports the fast path
    compared = 0
    for path in _trajectories(EXAMPLES / "jobs"):
        pair = _both(path)
        if pair is None:
            continue
        general, fast = pair
        assert fast == general
        assert [s.model_dump() for s in fast] == [s.model_dump() for s in general]  # type: ignore[attr-defined]
        compared += 1
    assert compared >= 6


def test_fast_path_equals_general_path_on_real_trials(corpus: Path) -> None:
    compared = 0
    for path in _trajectories(corpus / "skillsbench"):
        pair = _both(path)
        if pair is not None:
            assert pair[1] == pair[0], path
            compared += 1
    assert compared > 0


@pytest.mark.parametrize("step", [
    {"source": "agent", "message": [{"type": "text", "text": "parts"}]},
    {"source": "assistant", "message": "x"},
    {"source": "agent", "message": "x", "reasoning_content": ""},
    {"source": "agent", "message": "x", "tool_calls": [{"name": "f", "arguments": "{}"}]},
    {"source": "agent", "message": "x", "tool_calls": [{"function_name": "", "name": "g"}]},
    {"source": "agent", "message": "x", "observation": {"results": [
        {"content": [{"type": "image", "source": {"media_type": "image/png"}}]}]}},
    {"source": "agent", "message": "x", "observation": {"results": [
        {"content": "o", "subagent_trajectory_ref": {"session_id": "s"}}]}},
])
def test_other_shapes_take_the_general_path(step: dict[str, object], tmp_path: Path) -> None:
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a"},
           "steps": [{"step_id": 1, "source": "user", "message": "go"}, {"step_id": 2, **step}]}
    raw = json.dumps(doc).encode()
    assert _atif_fast.fast_steps(json.loads(raw)["steps"], "x", [None, None]) is None
    parsed = atif.read_atif(tmp_path / "t.json", raw, json.loads(raw))
    assert len(parsed.steps) == 2 and parsed.steps[1].source == "agent"


@pytest.mark.parametrize("step", [
    {"source": "agent", "message": "x", "observation": {"results": [
        {"content": "o", "subagent_trajectory_ref": [{"session_id": "s", "extra": 1}, {}]}]}},
    {"source": "agent", "message": "x", "images": [{"mime_type": "image/png"}],
     "observation": {"results": [{"content": "o", "is_error": True, "images": "no"}]}},
    {"source": "agent", "message": "x", "reasoning_content": "r", "timestamp": "t",
     "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {"a": [1]}}],
     "observation": {"results": [{"source_call_id": "c", "content": "o"}]}},
])
def test_shapes_the_fast_path_reads_exactly_as_the_general_path(step: dict[str, object]) -> None:
    """Subagent references as a list of objects are read alike; keys the general path does
    not read from a step (images, is_error) are ignored by the fast path too."""
    steps = [{"step_id": 1, "source": "user", "message": "go"}, {"step_id": 2, **step}]
    general = atif.STEPS.validate_python(
        [atif._step("x", i, s, None) for i, s in enumerate(json.loads(json.dumps(steps)))])
    fast = _atif_fast.fast_steps(json.loads(json.dumps(steps)), "x", [None, None])
    assert fast is not None
    assert fast == general
