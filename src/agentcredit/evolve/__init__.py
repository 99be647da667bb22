"""SkillRubric's co-evolution: gates (pure), rollout runners, proposals and the loop.

The job (loaded on first use): :func:`evolve` / :func:`evolve_async`
(see :mod:`agentcredit.evolve.jobs`).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcredit.evolve.jobs import EvolveResult, evolve, evolve_async, make_runner

__all__ = ["EvolveResult", "evolve", "evolve_async", "make_runner"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentcredit.evolve import jobs

        return getattr(jobs, name)
    raise AttributeError(f"module 'agentcredit.evolve' has no attribute {name!r}")
