"""A deterministic model for tests and examples: answers from a list or a function.

It is only ever used when asked for by name (``scripted/<name>``), and its answers are
whatever its author scripted; it never pretends to be a real model. A scripted answer
may be an exception instance (ProviderError) to rehearse failures.
"""

from __future__ import annotations

import inspect
import json
import pickle
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError, ProviderError
from agentcredit.llm.providers.base import ProviderRecipe, RawAnswer
from agentcredit.llm.types import GenerationConfig, Message, Usage

ScriptFn = Callable[[list[dict[str, Any]], dict[str, Any] | None], "str | ProviderError"]
Script = Sequence["str | ProviderError"] | ScriptFn

_SCRIPTS: dict[str, Script] = {}


def register_script(name: str, script: Script) -> None:
    """Make ``scripted/<name>`` answer from ``script`` (a list, consumed in order, or a
    function of (messages, schema) -> answer text)."""
    _SCRIPTS[name] = script


def _load(name: str) -> Script:
    if name in _SCRIPTS:
        return _SCRIPTS[name]
    path = Path(name)
    if path.suffix == ".json" and path.is_file():
        answers = json.loads(path.read_text())
        if isinstance(answers, list):
            return [a if isinstance(a, str) else json.dumps(a) for a in answers]
    known = ", ".join(sorted(_SCRIPTS)) or "none registered"
    raise ConfigError(f"no script named {name!r} (registered: {known}; or give a .json file "
                      "holding a list of answers)")


class ScriptedProvider:
    """Answers scripted in advance; counts the calls it received."""

    name = "scripted"

    def __init__(self, model: str) -> None:
        self.model = model
        self.script = _load(model)
        self.calls = 0
        self._lock = threading.Lock()

    async def aclose(self) -> None:
        """Nothing to close."""

    def recipe(self) -> ProviderRecipe | None:
        """The same script in another process, when it is a function that process can
        import (a list of answers is consumed in order: two processes would each start it
        from the top, so it stays in this one)."""
        if not callable(self.script):
            return None
        try:
            pickle.dumps(self.script)
        except (pickle.PicklingError, AttributeError, TypeError):
            return None  # a lambda or a closure
        return ProviderRecipe(f"scripted/{self.model}", script=self.script)

    def body(self, messages: list[Message], schema: dict[str, Any] | None,
             config: GenerationConfig) -> dict[str, Any]:
        return {"model": self.model, "messages": [m.model_dump(mode="json") for m in messages],
                "schema": schema, "config": config.model_dump()}

    async def send(self, body: dict[str, Any], timeout: float) -> RawAnswer:
        with self._lock:
            index = self.calls
            self.calls += 1
        if callable(self.script):
            answer = self.script(body["messages"], body["schema"])
            if inspect.isawaitable(answer):  # a script that takes its time, as a model does
                answer = await answer
        elif index < len(self.script):
            answer = self.script[index]
        else:
            raise ProviderError("unknown", f"script {self.model!r} has only "
                                f"{len(self.script)} answers")
        if isinstance(answer, ProviderError):
            raise answer
        prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
        return RawAnswer(text=answer, usage=Usage(input=prompt, output=len(answer) // 4),
                         request_id=f"scripted-{index}")

    def answer_from_body(self, response: dict[str, Any]) -> RawAnswer:
        return RawAnswer(text=str(response.get("text", "")), usage=Usage())
