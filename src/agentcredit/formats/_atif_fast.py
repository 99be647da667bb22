"""A fast path for plain ATIF steps: validated straight from the parsed document.

The records' own schemas (``Step``, ``ToolCall``, ``Observation``, ``Origin``) are reused by
pydantic-core with ATIF's field names as validation aliases and unknown ATIF fields ignored,
so the result is exactly the ``Step`` records the general path builds, without building an
intermediate dict per step in Python. Only trajectories whose every step is plain (text
messages, dict arguments, text results, subagent references as a list of objects) take it:
fields the general path does not read from a step are aliased to keys no document has, texts
the general path drops when empty must not be empty, and any step of another shape (content
parts, numbers where text belongs, a subagent reference that is not a list of objects) fails
validation; all send the document through the general path.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaValidator, ValidationError

from agentcredit.schema import ImageRef, Observation, Origin, Step, SubagentRef, ToolCall

_NEVER = "\x00"  # a key prefix no JSON document uses: fields the general path never reads
# An empty reasoning text is dropped by the general path and an empty function name replaced
# by "name" there: here both fail validation, so such steps fall back.
_NON_EMPTY = {"Step": ("reasoning",), "ToolCall": ("name",)}
_ALIASES: dict[str, dict[str, Any]] = {
    "Step": {"index": "_i", "origin": "_o", "reasoning": "reasoning_content",
             "observations": [["observation", "results"]], "images": _NEVER + "images"},
    "ToolCall": {"id": "tool_call_id", "name": "function_name"},
    "Observation": {"call_id": "source_call_id", "text": "content",
                    "subagents": "subagent_trajectory_ref", "images": _NEVER + "images",
                    "is_error": _NEVER + "is_error"},
}


def _rewrite(schema: Any) -> Any:
    """The record schemas with ATIF aliases, extra fields ignored and refs dropped."""
    if isinstance(schema, list):
        return [_rewrite(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _rewrite(v) for k, v in schema.items() if k not in ("ref", "metadata")}
    if out.get("type") == "model":
        out["config"] = {**out.get("config", {}), "extra_fields_behavior": "ignore"}
        name = out["schema"].get("model_name")
        for field, alias in _ALIASES.get(name, {}).items():
            out["schema"]["fields"][field]["validation_alias"] = alias
        for field in _NON_EMPTY.get(name, ()):
            _str_schema(out["schema"]["fields"][field])["min_length"] = 1
    return out


def _str_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The str schema inside a field's default / nullable wrappers."""
    while schema.get("type") != "str":
        schema = schema["schema"]
    return schema


def _build() -> SchemaValidator | None:
    """The aliased validator, or None when this pydantic-core cannot build one.

    pydantic-core reuses a complete model's own validator for a schema naming that class;
    the classes are marked incomplete while this schema is built so that the aliases take
    effect. The records' own validation is untouched (checked by a self-test below).
    """
    classes: tuple[type[BaseModel], ...] = (Step, ToolCall, Observation, Origin, ImageRef,
                                            SubagentRef)
    marks = [cls.__dict__.get("__pydantic_complete__") for cls in classes]
    try:
        for cls in classes:
            cls.__pydantic_complete__ = False
        schema = _rewrite(copy.deepcopy(Step.__pydantic_core_schema__))
        validator = SchemaValidator({"type": "list", "items_schema": schema})
    except Exception:  # an unexpected schema layout: the general path serves
        return None
    finally:
        for cls, mark in zip(classes, marks, strict=True):
            cls.__pydantic_complete__ = bool(mark)
    probe = [{"_i": 0, "_o": {"path": "p"}, "source": "agent", "step_id": 1, "message": "m",
              "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
              "observation": {"results": [{"source_call_id": "c", "content": "out"}]}}]
    expected = Step(index=0, source="agent", message="m", origin=Origin(path="p"),
                    tool_calls=(ToolCall(id="c", name="f"),),
                    observations=(Observation(call_id="c", text="out"),))
    try:
        ok = validator.validate_python(probe) == [expected]
    except Exception:
        ok = False
    return validator if ok else None


_VALIDATOR = _build()


def fast_steps(steps: list[Any], where: str, offsets: list[int | None],
               first: int = 0) -> tuple[Step, ...] | None:
    """Step records of plain ATIF steps (``first``: the index of the first); None when a
    step has another shape (the general path then reads them, ignoring the position keys
    added here)."""
    if _VALIDATOR is None:
        return None
    for at, raw in enumerate(steps):
        if type(raw) is not dict:
            return None
        i = first + at
        raw["_i"] = i
        raw["_o"] = {"path": where, "pointer": f"/steps/{i}", "byte_start": offsets[at]}
    try:
        return tuple(_VALIDATOR.validate_python(steps))
    except ValidationError:
        return None


_FIELD_SETS: dict[frozenset[str], set[str]] = {}


def share_field_sets(steps: tuple[Step, ...]) -> None:
    """Records with the same fields set share one set of their names (pydantic keeps one
    per record: nearly half of a tiny step's memory). Safe because records are frozen
    (nothing adds to the set) and copies copy it."""
    for step in steps:
        for record in (step, step.origin, *step.tool_calls, *step.observations):
            names = record.__pydantic_fields_set__
            shared = _FIELD_SETS.setdefault(frozenset(names), names)
            if shared is not names:
                object.__setattr__(record, "__pydantic_fields_set__", shared)
