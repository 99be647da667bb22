"""The in-flight limit: a freed slot goes to the longest waiter alone, a cancelled waiter
gives back a slot it was handed, and a raised limit lets waiters in."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcredit.llm.limits import AdaptiveLimit


def test_slots_go_to_waiters_in_arrival_order() -> None:
    async def scenario() -> list[int]:
        limit, order = AdaptiveLimit(1), []

        async def one(n: int) -> None:
            await limit.acquire()
            order.append(n)
            await asyncio.sleep(0.001)
            await limit.release()

        await asyncio.gather(*(one(n) for n in range(6)))
        assert limit.in_flight == 0 and limit.peak == 1
        return order

    assert asyncio.run(scenario()) == list(range(6))


def test_a_cancelled_waiter_never_keeps_a_slot() -> None:
    async def scenario(handed_first: bool) -> int:
        limit = AdaptiveLimit(1)
        await limit.acquire()
        waiter = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0)
        if handed_first:  # the slot is handed over, and the waiter cancelled before it runs
            limit.in_flight -= 1
            limit._hand_over()
            waiter.cancel()
        else:  # cancelled while waiting, then the slot is freed
            waiter.cancel()
            await limit.release()
        await asyncio.gather(waiter, return_exceptions=True)
        assert waiter.cancelled()
        await asyncio.wait_for(limit.acquire(), 1)  # the slot is free again
        return limit.in_flight

    assert asyncio.run(scenario(True)) == asyncio.run(scenario(False)) == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.lists(st.integers(0, 3), min_size=1, max_size=30))
def test_never_more_in_flight_than_the_limit(ceiling: int, waits: list[int]) -> None:
    async def scenario() -> None:
        limit = AdaptiveLimit(ceiling, adaptive=True)

        async def one(ms: int) -> None:
            await limit.acquire()
            assert limit.in_flight <= limit.limit
            await asyncio.sleep(ms / 1000)
            limit.succeeded()
            await limit.release()

        await asyncio.gather(*(one(ms) for ms in waits))
        assert limit.in_flight == 0 and limit.peak <= ceiling

    asyncio.run(scenario())
