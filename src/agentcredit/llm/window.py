"""Fitting a prompt into the model's context window, for every stage that asks a model.

A stage renders its prompt from one size knob (a token budget for a trajectory view, a
character allowance for verifier source or a turn's output). :func:`fit_to_window` renders
it, estimates its tokens offline (:mod:`agentcredit.llm.tokens`), and while it is larger
than what the window leaves after the answer, renders it again with a smaller knob. It
measures the part that does not shrink (the prompt at ``floor``) so one or two renders
usually suffice. A prompt that does not fit even at ``floor`` is returned as it is: the
client refuses it as ``too_long`` with its size and the window, never sends it to fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentcredit.llm.tokens import estimate_tokens
from agentcredit.llm.types import Message

MESSAGE_TOKENS = 6  # a chat template's tokens around each message (role, separators)


def prompt_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of a chat prompt (text parts; images are not counted).

    >>> prompt_tokens([Message(role="user", content="hello there")]) >= 2
    True
    """
    return sum(estimate_tokens(m.text()) + MESSAGE_TOKENS for m in messages) + 3


async def room_for_prompt(model: object) -> int | None:
    """Tokens a prompt may take at ``model``'s endpoint (None: the window is unknown, or
    ``model`` is not a client that knows windows, such as the scripted model)."""
    budget_of = getattr(model, "prompt_budget", None)
    if budget_of is None:
        return None
    room = await budget_of()
    return room if isinstance(room, int) else None


async def fit_to_window(model: object, render: Callable[[int], list[Message]], size: int, *,
                        floor: int, tries: int = 12) -> list[Message]:
    """``render(size)``, with ``size`` made smaller (never below ``floor``) until the
    prompt's estimate fits the window that ``model`` reports.

    Each step aims at the room from the tokens the knob still controls; when a smaller
    knob changed nothing (it was above what there is to show), the next step halves the
    distance to the floor instead."""
    messages = render(size)
    room = await room_for_prompt(model)
    if room is None or size <= floor:
        return messages
    used = prompt_tokens(messages)
    if used <= room:
        return messages
    smallest = render(floor)
    fixed = prompt_tokens(smallest)
    if fixed >= room:
        return smallest
    high, halve = size, False
    for _ in range(tries):
        guess = (floor + high) // 2 if halve else \
            int(high * (room - fixed) / max(used - fixed, 1) * 0.9)
        guess = max(floor, min(guess, high - 1))
        if guess <= floor:
            break
        messages = render(guess)
        tokens = prompt_tokens(messages)
        if tokens <= room:
            return messages
        halve, high, used = tokens >= used, guess, tokens
    return smallest
