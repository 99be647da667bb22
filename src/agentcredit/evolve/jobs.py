"""Co-evolution as one library call: pick the runner, group tasks by skill, evolve each.

:func:`evolve` does what ``agentcredit skills evolve`` does: every accepted or rejected
decision is appended to the bank's history, and a killed run resumes at its round.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentcredit.errors import AgentCreditError, ConfigError
from agentcredit.evolve.loop import EvolveOptions, EvolveReport
from agentcredit.evolve.loop import evolve as evolve_skill
from agentcredit.evolve.runners import (
    CommandRunner,
    HarborRunner,
    RolloutRunner,
    registered_runner,
)
from agentcredit.formats import load
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for
from agentcredit.schema import ReadError, SkillBank, Task
from agentcredit.skills.bank import load_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.ranking import retrieve


@dataclass
class EvolveResult:
    """Each evolved skill's report (or why it could not run) and the bank afterwards."""

    read_errors: list[ReadError]
    groups: dict[str, list[Task]]
    reports: dict[str, EvolveReport] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    bank: SkillBank | None = None
    usage: dict[str, Any] = field(default_factory=dict)


def make_runner(runner: str, *, work_dir: Path | str, harbor: str = "harbor",
                agent: str = "claude-code", agent_model: str | None = None,
                runner_args: Sequence[str] = (), command: str | None = None) -> RolloutRunner:
    """The rollout runner a ``--runner`` name asks for (harbor, command, simulated/<name>)."""
    if runner == "harbor":
        _on_path(harbor, "the harbor executable (install Harbor, or give --harbor PATH)")
        return HarborRunner(harbor=harbor, agent=agent, model=agent_model,
                            extra=list(runner_args), work_dir=Path(work_dir))
    if runner == "command":
        if not command:
            raise ConfigError("--runner command needs --command")
        _on_path(shlex.split(command)[0], "the --command program")
        return CommandRunner(argv=shlex.split(command), work_dir=Path(work_dir))
    if runner.startswith("simulated/"):
        return registered_runner(runner.split("/", 1)[1])
    raise ConfigError(f"unknown runner {runner!r} (harbor, command, simulated/<name>)")


def _on_path(program: str, what: str) -> None:
    """ConfigError unless ``program`` can be run (a path, or a name found on PATH)."""
    if shutil.which(program) is None:
        raise ConfigError(f"{program!r} not found: {what}")


def evolve(bank_dir: Path | str, tasks: Sequence[Path | str], *,
           runner: str | RolloutRunner, model: ModelLike, **options: Any,
           ) -> EvolveResult:
    """Co-evolve the guidance and rubric of the bank's skills on ``tasks``.

    The synchronous wrapper of ``evolve_async`` (same arguments). The tasks are grouped
    by the skill retrieved for each (or all given to ``skill``).
    """
    return asyncio.run(evolve_async(bank_dir, tasks, runner=runner, model=model, **options))


async def evolve_async(
    bank_dir: Path | str, tasks: Sequence[Path | str], *, runner: str | RolloutRunner,
    model: ModelLike, verifier_model: ModelLike | None = None,
    skill: str | None = None, rounds: int = 10, h: int = 10, tasks_per_round: int = 8,
    trajectories: int = 128, seed: int = 0, work_dir: Path | str | None = None,
    harbor: str = "harbor", agent: str = "claude-code", agent_model: str | None = None,
    runner_args: Sequence[str] = (), command: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvolveResult:
    """Evolve every skill that has tasks (see :func:`evolve`); a skill whose loop fails is
    reported in ``failures`` and the others go on.

    Raises:
        ConfigError: an unusable bank, runner or model setting, or an unknown ``skill``.
    """
    bank_dir = Path(bank_dir)
    bank = load_bank(bank_dir)
    if isinstance(model, ModelSpec) and isinstance(verifier_model, str):
        verifier_model = replace(model, model=verifier_model)  # same endpoint and cache
    proposer = client_for(model, default_cache=bank_dir / "responses.sqlite")
    verifier = client_for(verifier_model, default_cache=bank_dir / "responses.sqlite") \
        if verifier_model else proposer
    assert proposer is not None and verifier is not None
    chosen = runner if not isinstance(runner, str) else make_runner(
        runner, work_dir=Path(work_dir) if work_dir else Path(bank_dir) / "evolve" / "runs",
        harbor=harbor, agent=agent, agent_model=agent_model, runner_args=runner_args,
        command=command)
    loaded = load([Path(t) for t in tasks])
    result = EvolveResult(read_errors=loaded.errors,
                          groups=await _groups(bank, loaded.tasks, skill))
    settings = EvolveOptions(rounds=rounds, h=h, tasks_per_round=tasks_per_round,
                             trajectories=trajectories, seed=seed)
    try:
        for skill_id, group in result.groups.items():
            try:
                result.reports[skill_id] = await evolve_skill(
                    bank_dir, skill_id, group, chosen, proposer, verifier, settings,
                    progress=progress)
            except AgentCreditError as exc:
                result.failures[skill_id] = str(exc)
    finally:
        for client, given in ((proposer, model), (verifier, verifier_model)):
            if client is not given:
                await client.aclose()
    result.bank = load_bank(bank_dir)
    result.usage = proposer.ledger.summary()
    return result


async def _groups(bank: SkillBank, tasks: list[Task], skill: str | None,
                  ) -> dict[str, list[Task]]:
    if skill is not None:
        if bank.get(skill) is None:
            raise ConfigError(f"no skill {skill!r} in the bank")
        return {skill: tasks}
    results = await retrieve(bank, tasks, make_embedder("lexical"))
    groups: dict[str, list[Task]] = {}
    by_id = {t.id: t for t in tasks}
    for r in results:
        if r.best is not None:
            groups.setdefault(r.best.skill_id, []).append(by_id[r.task_id])
    return groups
