"""agentcredit: evidence-grounded partial credit for AI-agent runs.

The three jobs, each one call (a sync wrapper over an async core):

- :func:`agentcredit.score` — GCPC: checklists, judging, scores and the report of a run;
- :mod:`agentcredit.skills` — ``build_bank``, ``import_skills``, ``retrieve``: a SkillBank;
- :func:`agentcredit.rewards.turn_rewards` and :func:`agentcredit.evolve.evolve` — SkillRubric
  rewards and co-evolution.
"""

from typing import TYPE_CHECKING, Any

from agentcredit.errors import AgentCreditError, ConfigError, InputError, PrerequisiteError
from agentcredit.formats import LoadResult, join_warnings, load, read_trajectory_file
from agentcredit.schema import Oracle, ReadError, Step, Task, Trial

if TYPE_CHECKING:
    from agentcredit.runs.pipeline import (
        RunResult,
        judge_run,
        judge_run_async,
        score,
        score_async,
    )

from agentcredit.version import __version__

_PIPELINE = frozenset({"RunResult", "judge_run", "judge_run_async", "score", "score_async"})


def __getattr__(name: str) -> Any:
    """The pipeline is imported on first use: ``import agentcredit`` stays light."""
    if name in _PIPELINE:
        from agentcredit.runs import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'agentcredit' has no attribute {name!r}")


__all__ = [
    "AgentCreditError",
    "ConfigError",
    "InputError",
    "LoadResult",
    "Oracle",
    "PrerequisiteError",
    "ReadError",
    "RunResult",
    "Step",
    "Task",
    "Trial",
    "__version__",
    "join_warnings",
    "judge_run",
    "judge_run_async",
    "load",
    "read_trajectory_file",
    "score",
    "score_async",
]
