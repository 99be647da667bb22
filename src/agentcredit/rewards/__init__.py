"""SkillRubric's turn-level rewards: the causal turn verifier, reward and advantage math,
and the hooks trainers call.

The job (loaded on first use): :func:`turn_rewards` / :func:`turn_rewards_async`
(see :mod:`agentcredit.rewards.jobs`).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcredit.errors import NoTrialToVerify
    from agentcredit.rewards.jobs import (
        RewardResult,
        turn_rewards,
        turn_rewards_async,
    )

__all__ = ["NoTrialToVerify", "RewardResult", "turn_rewards", "turn_rewards_async"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentcredit.rewards import jobs

        return getattr(jobs, name)
    raise AttributeError(f"module 'agentcredit.rewards' has no attribute {name!r}")
