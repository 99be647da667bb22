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

_ID_LINE = re.compile(r"^([A-Za-z][\w.-]{0,20}): \S", re.MULTILINE)
_STEP = re.compile(r"^\[step (\d+)\]", re.MULTILINE)
_ID_KEYS = frozenset({"item_id", "criterion_id", "id"})


@functools.lru_cache(maxsize=64)
def _strategy(key: str) -> st.SearchStrategy[Any]:
    return from_schema(json.loads(key))


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
    from a list, or returns None to keep the drawn value)."""
    ids = _ID_LINE.findall(text)
    steps = [int(s) for s in _STEP.findall(text)]
    lines = [line.strip() for line in text.splitlines() if 3 <= len(line.strip()) <= 200]

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, item in node.items():
            choices = (ids if key in _ID_KEYS and isinstance(item, str) else
                       steps if key == "step" and isinstance(item, int) else
                       lines if key == "quote" and isinstance(item, str) else None)
            chosen = pick(choices) if choices else None
            out[key] = chosen if chosen is not None else walk(item)
        return out

    return walk(value)


def drawing_script(data: Any, *, calls: list[dict[str, Any]] | None = None) -> ScriptFn:
    """A script that draws each answer with ``data.draw`` (inside a ``@given`` test)."""

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        assert schema is not None, "every model request of the product carries a schema"
        answer = data.draw(answers(schema), label=str(schema.get("title")))
        if data.draw(st.booleans(), label="aimed"):
            answer = aim(answer, prompt_text(messages), lambda options: data.draw(
                st.none() | st.sampled_from(options)))
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
                    seen.append(answers(schema).example())
                answer = seen[-1]
            else:
                answer = rng.choice(seen)
            if rng.random() < 0.5:
                answer = aim(answer, prompt_text(messages), lambda options: rng.choice(
                    [None, *options]))
        return json.dumps(answer)

    return script
