"""Every stage's prompt fits the window: the one fitting routine, synthesis, the turn
verifier and the skill teacher stage, against a model that reports a small window."""

from __future__ import annotations

import asyncio
from typing import Any

from agentcredit.checklists.rules import load_rules
from agentcredit.checklists.synthesize import synthesis_messages, synthesize
from agentcredit.formats import load
from agentcredit.llm import ModelClient, register_script
from agentcredit.llm.providers.scripted import ScriptedProvider
from agentcredit.llm.types import Message
from agentcredit.llm.window import fit_to_window, prompt_tokens
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge


class Windowed(ModelClient):
    """A scripted client whose endpoint reports ``room`` prompt tokens; records prompts."""

    def __init__(self, script: Any, room: int) -> None:
        register_script("windowed", script)
        super().__init__(ScriptedProvider("windowed"), cache=None)
        self.room = room

    async def prompt_budget(self, answer_tokens: int | None = None) -> int | None:
        return self.room


def _text(size: int) -> list[Message]:
    return [Message(role="system", content="fixed part " * 40),
            Message(role="user", content="word " * size)]


def test_fit_shrinks_only_the_part_that_shrinks_and_leaves_an_unknown_window_alone() -> None:
    class Room:
        async def prompt_budget(self) -> int:
            return 600

    fitted = asyncio.run(fit_to_window(Room(), _text, 5_000, floor=10))
    assert prompt_tokens(fitted) <= 600
    assert fitted[1].text().count("word") > 300  # not cut to the floor: close to the room
    assert asyncio.run(fit_to_window(object(), _text, 5_000, floor=10)) == _text(5_000)
    too_small = asyncio.run(fit_to_window(type("R", (), {"prompt_budget": Room.prompt_budget,
                                                          })(), _text, 10, floor=10))
    assert too_small == _text(10)  # at the floor already: sent as is, refused as too_long


def test_synthesis_fits_a_small_window_keeping_the_instruction_and_check_ids_whole() -> None:
    task = next(t for t in load([EXAMPLES / "tasks"]).tasks if t.verifier_files)
    rules = load_rules(None)
    full = prompt_tokens(synthesis_messages(task, rules))
    seen: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        seen.append("\n".join(str(m["content"]) for m in messages))
        return scripted_judge.answer(messages, schema)

    room = full - 150
    model = Windowed(script, room)
    asyncio.run(synthesize(task, model, rules))
    prompt = seen[0]
    assert prompt_tokens([Message(role="user", content=prompt)]) <= room + 20
    assert task.instruction in prompt and all(check in prompt for check in task.checks)
    assert "cut to head and tail for length" in prompt or "omitted for length" in prompt
