"""A scripted model whose answers are drawn from the very JSON schema sent with each request.

``hypothesis-jsonschema`` turns the schema into a strategy, so an answer can be anything the
schema allows: all Abstain, empty lists, unknown ids, steps that do not exist, quotes of
nothing, numbers at their bounds. Half the time the draw is *aimed*: ids, step numbers and
quotes are replaced by ones the prompt really shows, so that the deep paths of a consumer
(citations found, criteria matched) are reached too.

- :func:`drawing_script` draws inside a ``@given`` test (``st.data()``), so hypothesis shrinks
  a failing answer to its simplest form;
- :func:`drawn_script` serves a live server thread from a pool drawn up front.
"""

from __future__ import annotations

import functools
import json
import random
import re
import threading
import warnings
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import NonInteractiveExampleWarning
from hypothesis_jsonschema import from_schema

from agentcredit.llm.providers.scripted import ScriptFn

_ID_LINE = re.compile(r"^([A-Z]{1,3}\d{1,3}): \S", re.MULTILINE)  # C1:, R2:
_STEP = re.compile(r"^\[step (\d+) #[0-9a-f]{8}\]", re.MULTILINE)
_ID_KEYS = frozenset({"item_id", "criterion_id", "id"})


@functools.lru_cache(maxsize=64)
def _strategy(key: str, complete: bool = True) -> st.SearchStrategy[Any]:
    schema = json.loads(key)
    if not complete:
        return from_schema(schema)
    return st.one_of(from_schema(schema), from_schema(_all_required(schema)))


def _all_required(node: Any) -> Any:
    """``node`` with every object's properties required: still answers the schema allows,
    and the ones hypothesis-jsonschema rarely completes (it draws optional keys through a
    filter that often gives up, so an item with its evidence list would be rare)."""
    if isinstance(node, list):
        return [_all_required(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _all_required(v) for k, v in node.items()}
    if isinstance(node.get("properties"), dict):
        out["required"] = sorted(node["properties"])
    return out


def answers(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Every answer ``schema`` allows."""
    return _strategy(json.dumps(schema, sort_keys=True))


def prompt_text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def aim(value: Any, text: str, pick: Any) -> Any:
    """``value`` with ids, steps and quotes swapped for ones ``text`` shows (``pick`` chooses
    from a list, or returns None to keep the drawn value): a list of answers per id may be
    completed to one per id shown, and a citation may become a real (step, output line)."""
    ids = _ID_LINE.findall(text)
    steps = [int(s) for s in _STEP.findall(text)]
    lines = [line.strip() for line in text.splitlines() if 3 <= len(line.strip()) <= 200]
    shown = _output_lines(text)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            keyed = [v for v in node if isinstance(v, dict) and _ID_KEYS & set(v)]
            if keyed and ids and pick([True]):  # one answer per id the prompt shows
                key = next(iter(_ID_KEYS & set(keyed[0])))
                return [{**walk(keyed[i % len(keyed)]), key: ident}
                        for i, ident in enumerate(dict.fromkeys(ids))]
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if {"step", "quote"} <= set(node) and shown:  # a citation: a real output line
            pair = pick(shown)
            if pair is not None:
                return {**{k: walk(v) for k, v in node.items()},
                        "step": pair[0], "quote": pair[1]}
        out = {}
        for key, item in node.items():
            choices = (ids if key in _ID_KEYS and isinstance(item, str) else
                       steps if key == "step" and isinstance(item, int) else
                       lines if key == "quote" and isinstance(item, str) else None)
            chosen = pick(choices) if choices else None
            out[key] = chosen if chosen is not None else walk(item)
        return out

    return walk(value)


def _output_lines(text: str) -> list[tuple[int, str]]:
    """(step, line) of every line shown under a step's OUTPUT heading."""
    found: list[tuple[int, str]] = []
    step, inside = None, False
    for raw in text.splitlines():
        line = raw.strip()
        match = _STEP.match(line)
        if match:
            step, inside = int(match.group(1)), False
        elif line == "OUTPUT:":
            inside = True
        elif inside and step is not None and line.isupper() and line.endswith(":"):
            inside = False
        elif inside and step is not None and 3 <= len(line) <= 200:
            found.append((step, line))
    return found


def drawing_script(data: Any, *, calls: list[dict[str, Any]] | None = None) -> ScriptFn:
    """A script that draws each answer with ``data.draw`` (inside a ``@given`` test)."""

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        assert schema is not None, "every model request of the product carries a schema"
        answer = data.draw(answers(schema), label=str(schema.get("title")))
        if data.draw(st.booleans(), label="aimed"):
            answer = aim(answer, prompt_text(messages), lambda options: None if data.draw(
                st.integers(0, 4), label="keep drawn") == 0 else data.draw(
                st.sampled_from(options)))
        if calls is not None:
            calls.append({"schema": schema.get("title"), "answer": answer})
        return json.dumps(answer)

    return script


def drawn_script(*, seed: int, pool: int = 40) -> ScriptFn:
    """A thread-safe script for a live server (outside any ``@given``): the first ``pool``
    requests per schema each get a fresh draw, later ones one of those again; aimed at the
    prompt half the time."""
    drawn: dict[str, list[Any]] = {}
    lock = threading.Lock()
    rng = random.Random(seed)

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        assert schema is not None
        key = json.dumps(schema, sort_keys=True)
        with lock:  # hypothesis draws are not thread-safe
            seen = drawn.setdefault(key, [])
            if len(seen) < pool:
                with warnings.catch_warnings():  # drawn outside @given on purpose
                    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
                    # plain draws: .example() of the completed variant is too slow here
                    seen.append(_strategy(key, complete=False).example())
                answer = seen[-1]
            else:
                answer = rng.choice(seen)
            if rng.random() < 0.5:
                answer = aim(answer, prompt_text(messages), lambda options: rng.choice(
                    [None, *options]))
        return json.dumps(answer)

    return script
