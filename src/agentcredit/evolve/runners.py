"""Rollout runners: tasks + a guidance version -> trials with outcomes.

Both versions of a comparison are run by the same runner object, so the agent, model,
decoding settings and seed are the same; only the installed guidance differs.

- :class:`HarborRunner` copies each task folder, installs the guidance as an Agent Skill
  (``environment/skills/<id>/SKILL.md`` by default, SkillsBench's layout), runs ``harbor
  run`` on the copies and reads the job folder back with the Harbor reader.
- :class:`CommandRunner` runs any executable that writes a Harbor-layout job folder.
- Any other object with the :class:`RolloutRunner` method, registered in-process with
  :func:`register_runner` and named ``simulated/<name>`` on the command line (the tests
  register one that draws outcomes from a function).

A finished job folder is read back instead of being run again (resume).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentcredit.errors import ConfigError
from agentcredit.formats import load
from agentcredit.rewards.table import outcome_value
from agentcredit.schema import Skill, Task, Trial
from agentcredit.skills.agent_skills import export_skill_md

DONE = ".agentcredit-done"


@dataclass(frozen=True)
class Rollout:
    """One rollout: its trial (None when the run produced none) and its outcome."""

    task_id: str
    trial: Trial | None
    outcome: float | None
    note: str | None = None


class RolloutRunner(Protocol):
    """What the co-evolution loop needs from a runner."""

    name: str

    async def run(self, tasks: Sequence[Task], skill: Skill, *, label: str,
                  seed: int) -> list[Rollout]:
        """One rollout per task with ``skill``'s guidance installed."""
        ...


def read_job(folder: Path, tasks: Sequence[Task]) -> list[Rollout]:
    """Rollouts of a Harbor-layout job folder, one per task (missing ones with a note)."""
    loaded = load([folder]) if folder.exists() else None
    by_task: dict[str, Trial] = {}
    for trial in loaded.trials if loaded else []:
        if trial.task_id is not None:
            by_task.setdefault(trial.task_id, trial)
    out = []
    for task in tasks:
        found = by_task.get(task.id)
        if found is None:
            out.append(Rollout(task.id, None, None, f"no trial for {task.id} in {folder}"))
        else:
            out.append(Rollout(task.id, found, outcome_value(found),
                               found.outcome_reason if found.outcome == "none" else None))
    return out


def stage_tasks(tasks: Sequence[Task], skill: Skill, folder: Path,
                skills_subdir: str = "environment/skills") -> Path:
    """Copies of the task folders with the guidance installed as ``SKILL.md``."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for task in tasks:
        source = Path(task.source_path)
        if not (source / "instruction.md").is_file():
            raise ConfigError(f"task {task.id}: {source} is not a Harbor task folder")
        target = folder / task.id
        shutil.copytree(source, target, symlinks=True)
        skills = target / skills_subdir
        if skills.exists():
            shutil.rmtree(skills)  # only the version under test is installed
        export_skill_md([skill], skills)
    return folder


@dataclass
class CommandRunner:
    """Any executable writing a Harbor-layout job folder.

    ``argv`` items may hold ``{tasks}`` (the staged task folders), ``{out}`` (the job
    folder to write), ``{job}`` (its name), ``{jobs_dir}``, ``{seed}`` and ``{skill}``.
    """

    argv: list[str]
    work_dir: Path
    skills_subdir: str = "environment/skills"
    timeout: float | None = None
    name: str = "command"

    def command(self, staged: Path, job: str, seed: int, skill: Skill) -> list[str]:
        values = {"tasks": str(staged), "out": str(self.work_dir / "jobs" / job), "job": job,
                  "jobs_dir": str(self.work_dir / "jobs"), "seed": str(seed),
                  "skill": skill.id}
        return [part.format(**values) for part in self.argv]

    async def run(self, tasks: Sequence[Task], skill: Skill, *, label: str,
                  seed: int) -> list[Rollout]:
        job_dir = self.work_dir / "jobs" / label
        if (job_dir / DONE).exists():
            return read_job(job_dir, tasks)
        staged = stage_tasks(tasks, skill, self.work_dir / "staged" / label, self.skills_subdir)
        argv = self.command(staged, label, seed, skill)
        job_dir.parent.mkdir(parents=True, exist_ok=True)
        log = self.work_dir / "logs" / f"{label}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as handle:
            try:
                process = await asyncio.create_subprocess_exec(*argv, stdout=handle,
                                                               stderr=handle)
            except OSError as exc:
                raise ConfigError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
            try:
                code = await asyncio.wait_for(process.wait(), self.timeout)
            except TimeoutError:
                process.kill()
                await process.wait()
                code = None
        rollouts = read_job(job_dir, tasks)
        if code != 0:
            why = "timed out" if code is None else f"exited with {code}"
            rollouts = [r if r.trial is not None else
                        Rollout(r.task_id, None, None, f"{argv[0]} {why} (see {log})")
                        for r in rollouts]
        if job_dir.exists():
            (job_dir / DONE).write_text(f"exit {code}\n")
        return rollouts


@dataclass
class HarborRunner(CommandRunner):
    """``harbor run`` on staged copies of the tasks (Harbor's CLI, not imported)."""

    harbor: str = "harbor"
    agent: str = "claude-code"
    model: str | None = None
    extra: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)
    work_dir: Path = Path("evolve-runs")
    name: str = "harbor"

    def command(self, staged: Path, job: str, seed: int, skill: Skill) -> list[str]:
        argv = [self.harbor, "run", "--path", str(staged), "--agent", self.agent,
                "--job-name", job, "--jobs-dir", str(self.work_dir / "jobs")]
        if self.model:
            argv += ["--model", self.model]
        return argv + list(self.extra)


_RUNNERS: dict[str, RolloutRunner] = {}


def register_runner(name: str, runner: RolloutRunner) -> None:
    """Make ``--runner simulated/<name>`` use ``runner`` (your own code: tests, notebooks)."""
    _RUNNERS[name] = runner


def registered_runner(name: str) -> RolloutRunner:
    if name not in _RUNNERS:
        known = ", ".join(sorted(_RUNNERS)) or "none registered"
        raise ConfigError(f"no runner named {name!r} (registered: {known})")
    return _RUNNERS[name]
