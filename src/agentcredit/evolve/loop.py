"""The alternating co-evolution loop (SkillRubric §3.3, B.4), resumable.

Every round, for the skill being evolved:

1. the current version is rolled out on up to ``tasks_per_round`` tasks (seeded sample);
   the rollouts are verified with the current rubric and join the trajectory pool;
2. guidance is diagnosed and, for a genuine defect, a candidate is proposed (rubric fixed),
   rolled out on the same tasks with the same seed, and :func:`guidance_gate` decides;
3. every ``h`` rounds the rubric is diagnosed (guidance fixed) and a candidate is rescored on
   the latest ``trajectories`` pool trajectories made with the current guidance (cached
   calls for unchanged criteria) and :func:`rubric_gate` decides.

A rejected candidate leaves the current version untouched. Every decision (also "no
genuine defect") becomes an :class:`EvolutionEvent` in the bank's history, with the bank
hash after it. Each step's result is stored in ``BANK/evolve/evolve.sqlite`` as soon as it
is known, and a restarted loop replays the rounds from those records, so a killed run
resumes at the round (and step) it was in without repeating rollouts or paid calls.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError
from agentcredit.evolve.gates import GateDecision, guidance_gate, rubric_gate
from agentcredit.evolve.propose import (
    NoProposal,
    Proposal,
    evidence_block,
    propose_guidance,
    propose_rubric,
)
from agentcredit.evolve.runners import Rollout, RolloutRunner
from agentcredit.hashing import canonical_sha256
from agentcredit.llm.client import Model
from agentcredit.redact import task_text
from agentcredit.rewards.table import rubric_satisfaction
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import EvolutionEvent, Skill, SkillBank, Task, Trial, TrialVerdict
from agentcredit.schema.outcomes import Deferred, Failed, Rejected
from agentcredit.skills.bank import freeze_bank, load_bank, make_bank, skill_hash
from agentcredit.skills.gates import GateContext
from agentcredit.skills.importing import require_rubric
from agentcredit.skills.tool_names import seen_tools
from agentcredit.store.units import UnitStore

STORE = "evolve.sqlite"


@dataclass(frozen=True)
class EvolveOptions:
    """Loop settings; the gate thresholds are the gates' keyword arguments."""

    rounds: int = 10
    h: int = 10
    tasks_per_round: int = 8
    trajectories: int = 128
    seed: int = 0
    max_regression: float = 0.05
    min_pairs: int = 4
    lcb_floor: float = -0.02
    confidence: float = 0.90
    max_pass_rate_change: float = 0.10
    pass_threshold: float = 0.5
    success_at: float = 0.5
    draws: int = 2000


@dataclass
class EvolveReport:
    """What a run (or a resumed run) decided, and what it could not do."""

    events: list[EvolutionEvent] = field(default_factory=list)
    replayed: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass
class _Pooled:
    trial: Trial
    outcome: float
    guidance: str


class _Loop:
    def __init__(self, bank_dir: Path, skill_id: str, tasks: Sequence[Task],
                 runner: RolloutRunner, proposer: Model, verifier: Model,
                 options: EvolveOptions, progress: Callable[[str], None] | None) -> None:
        self.bank_dir, self.skill_id, self.tasks = bank_dir, skill_id, list(tasks)
        self.runner, self.proposer, self.verifier = runner, proposer, verifier
        self.options, self.progress = options, progress
        self.store = UnitStore(bank_dir / "evolve", STORE)
        self.report = EvolveReport()
        self.pool: list[_Pooled] = []
        self.verdicts: dict[str, TrialVerdict] = {}

    # stored steps -------------------------------------------------------------
    def _stored(self, stage: str, unit: str, key: dict[str, Any]) -> tuple[str, Any] | None:
        return self.store.get(stage, unit, canonical_sha256(key))

    def _put(self, stage: str, unit: str, key: dict[str, Any], value: Any) -> None:
        self.store.put(stage, unit, canonical_sha256(key), "done", value)

    async def rollouts(self, skill: Skill, tasks: list[Task], label: str,
                       seed: int) -> list[Rollout]:
        key = {"skill": skill_hash(skill), "tasks": [t.id for t in tasks], "seed": seed,
               "runner": self.runner.name}
        stored = self._stored("rollouts", label, key)
        if stored is not None:
            return [Rollout(r["task_id"], Trial.model_validate(r["trial"]) if r["trial"]
                            else None, r["outcome"], r["note"]) for r in stored[1]]
        result = await self.runner.run(tasks, skill, label=label, seed=seed)
        self._put("rollouts", label, key, [
            {"task_id": r.task_id, "trial": r.trial.model_dump(mode="json") if r.trial
             else None, "outcome": r.outcome, "note": r.note} for r in result])
        return result

    async def verdict(self, trial: Trial, skill: Skill) -> TrialVerdict | None:
        unit = f"{trial.id}@{skill_hash(skill)[:16]}"
        seed = self.options.seed
        key = {"trial": trial.id, "skill": skill_hash(skill), "model": self.verifier.model_id,
               "seed": seed}
        stored = self._stored("verdicts", unit, key)
        if stored is not None:
            return TrialVerdict.model_validate(stored[1]) if stored[1] else None
        task = next((t for t in self.tasks if t.id == trial.task_id), None)
        result = await verify_trial(trial, skill, self.verifier,
                                    task.instruction if task else trial.instruction or "",
                                    seed=seed, owned=task_text(task.instruction,
                                                               task.verifier_files)
                                    if task else None)
        if not isinstance(result, TrialVerdict):
            self.report.problems.append(f"verifier on {trial.id}: {result}")
            return None  # not stored: a later run asks again (the model cache answers)
        self._put("verdicts", unit, key, result.model_dump(mode="json"))
        return result

    async def proposal(self, kind: str, skill: Skill, trials: list[Trial],
                       unit: str) -> Proposal | NoProposal | str:
        key = {"skill": skill_hash(skill), "trials": [t.id for t in trials], "kind": kind,
               "model": self.proposer.model_id}
        stored = self._stored(f"{kind}-proposal", unit, key)
        if stored is not None:
            return self.proposal_from(stored[1])
        evidence = evidence_block(trials, self.verdicts)
        context = GateContext(tools=seen_tools(trials), require_trials=False)
        propose = propose_guidance if kind == "guidance" else propose_rubric
        result = await propose(skill, trials, evidence, self.proposer, context)
        if isinstance(result, Proposal):
            value = {"kind": "proposal", "skill": result.skill.model_dump(mode="json"),
                     "defects": list(result.defects), "rationale": result.rationale}
        elif isinstance(result, NoProposal):
            value = {"kind": "none", "defects": list(result.defects),
                     "rationale": result.rationale}
        elif isinstance(result, Rejected):
            value = {"kind": "rejected", "reason": "proposal failed the skill gates: " +
                     "; ".join(str(f) for f in result.failures[:5])}
        else:
            assert isinstance(result, (Deferred, Failed))
            reason = "batch mode is not supported by evolve" if isinstance(result, Deferred) \
                else result.reason
            return f"proposal call failed: {reason}"  # not stored: retried on the next run
        self._put(f"{kind}-proposal", unit, key, value)
        return self.proposal_from(value)

    @staticmethod
    def proposal_from(value: dict[str, Any]) -> Proposal | NoProposal | str:
        if value["kind"] == "proposal":
            return Proposal(Skill.model_validate(value["skill"]), tuple(value["defects"]),
                            value["rationale"])
        if value["kind"] == "none":
            return NoProposal(tuple(value["defects"]), value["rationale"])
        return str(value["reason"])

    # bank ---------------------------------------------------------------------
    def bank(self) -> SkillBank:
        return load_bank(self.bank_dir)

    def record(self, r: int, kind: str, before: Skill, proposal: Proposal | NoProposal | str,
               decision: GateDecision | None) -> Skill:
        """Append the event once (replays find it) and return the current skill."""
        bank = self.bank()
        done = next((e for e in bank.history if e.round == r and e.skill_id == self.skill_id
                     and e.kind == kind), None)
        if done is not None:
            self.report.replayed += 1
            after = proposal.skill if isinstance(proposal, Proposal) else None
            return after if done.accepted and after is not None else before
        accepted = bool(decision and decision.accepted and isinstance(proposal, Proposal))
        after = proposal.skill if isinstance(proposal, Proposal) else None
        skills = [after if accepted and s.id == self.skill_id and after else s
                  for s in bank.skills]
        new = make_bank(skills, benchmark=bank.benchmark, embedding=bank.embedding,
                        rules_version=bank.rules_version, prompt_version=bank.prompt_version,
                        synthesizer=bank.synthesizer, tau=bank.tau)
        reason = decision.reason if decision else (
            f"no proposal: {proposal.rationale}" if isinstance(proposal, NoProposal)
            else str(proposal))
        event = EvolutionEvent(
            round=r, skill_id=self.skill_id, kind=kind,
            from_version=before.version, to_version=after.version if accepted and after
            else None, proposed=isinstance(proposal, Proposal), accepted=accepted,
            reason=reason, defects=proposal.defects if not isinstance(proposal, str) else (),
            before=_view(before, kind), after=_view(after, kind) if after else "",
            numbers=decision.numbers if decision else {}, bank_hash=new.hash,
            at=datetime.now(UTC).isoformat(timespec="seconds"))
        freeze_bank(new.model_copy(update={"history": (*bank.history, event)}),
                    self.bank_dir)
        self.report.events.append(event)
        return after if accepted and after else before

    # one round ----------------------------------------------------------------
    async def round(self, r: int, skill: Skill) -> Skill:
        o = self.options
        rng = random.Random(o.seed * 1_000_003 + r)
        tasks = sorted(rng.sample(self.tasks, min(o.tasks_per_round, len(self.tasks))),
                       key=lambda t: t.id)
        seed = o.seed * 1_000_003 + r
        prefix = f"{self.skill_id}/r{r}"
        current = await self.rollouts(skill, tasks, f"{prefix}-v{skill.version}", seed)
        trials = [x.trial for x in current if x.trial is not None]
        for trial in trials:
            found = await self.verdict(trial, skill)
            if found is not None:
                self.verdicts[trial.id] = found
        self.pool += [_Pooled(x.trial, x.outcome, skill.guidance_text()) for x in current
                      if x.trial is not None and x.outcome is not None]
        self._tick(f"round {r}: rolled out v{skill.version}")
        proposal = await self.proposal("guidance", skill, trials, prefix)
        decision = None
        if isinstance(proposal, Proposal):
            candidate = await self.rollouts(proposal.skill, tasks,
                                            f"{prefix}-candidate-v{proposal.skill.version}",
                                            seed)
            decision = guidance_gate([x.outcome for x in current],
                                     [x.outcome for x in candidate],
                                     max_regression=o.max_regression, min_pairs=o.min_pairs)
            if decision.accepted:
                self.pool += [_Pooled(x.trial, x.outcome, proposal.skill.guidance_text())
                              for x in candidate if x.trial is not None and
                              x.outcome is not None]
        skill = self.record(r, "guidance", skill, proposal, decision)
        self._tick(f"round {r}: guidance decided")
        if r % o.h == 0:
            skill = await self.rubric_round(r, skill, prefix)
        return skill

    async def rubric_round(self, r: int, skill: Skill, prefix: str) -> Skill:
        o = self.options
        pool = [p for p in self.pool if p.guidance == skill.guidance_text()][-o.trajectories:]
        trials = [p.trial for p in pool]
        proposal = await self.proposal("rubric", skill, trials, prefix)
        decision = None
        if isinstance(proposal, Proposal):
            rows = []
            for item in pool:
                old = await self.verdict(item.trial, skill)
                new = await self.verdict(item.trial, proposal.skill)
                s_old = rubric_satisfaction(old, skill.rubric or ()) if old else None
                s_new = rubric_satisfaction(new, proposal.skill.rubric or ()) if new else None
                if s_old is not None and s_new is not None:
                    rows.append((s_old, s_new, item.outcome >= o.success_at))
            decision = rubric_gate([a for a, _, _ in rows], [b for _, b, _ in rows],
                                   [y for _, _, y in rows], lcb_floor=o.lcb_floor,
                                   confidence=o.confidence,
                                   max_pass_rate_change=o.max_pass_rate_change,
                                   pass_threshold=o.pass_threshold, seed=o.seed + r,
                                   draws=o.draws)
            decision.numbers["dropped_trajectories"] = len(pool) - len(rows)
        skill = self.record(r, "rubric", skill, proposal, decision)
        self._tick(f"round {r}: rubric decided")
        return skill

    def _tick(self, what: str) -> None:
        if self.progress is not None:
            self.progress(what)


def _view(skill: Skill, kind: str) -> str:
    if kind == "guidance":
        return skill.guidance_text()
    return "\n".join(f"{c.id} (weight {c.weight:g}): {c.statement}\n  evidence: {c.evidence}"
                     f"\n  failure: {c.failure}" for c in skill.rubric or ())


async def evolve(bank_dir: Path, skill_id: str, tasks: Sequence[Task], runner: RolloutRunner,
                 proposer: Model, verifier: Model, options: EvolveOptions, *,
                 progress: Callable[[str], None] | None = None) -> EvolveReport:
    """Run (or resume) ``options.rounds`` rounds of co-evolution of one skill."""
    loop = _Loop(bank_dir, skill_id, tasks, runner, proposer, verifier, options, progress)
    try:
        skill = _start(loop, skill_id)
        for r in range(1, options.rounds + 1):
            skill = await loop.round(r, skill)
    finally:
        loop.store.close()
    return loop.report


def _start(loop: _Loop, skill_id: str) -> Skill:
    """The version this skill's evolution started from: stored on the first run, so that a
    resumed run replays the same rounds from the same skill."""
    stored = loop.store.get("start", skill_id, "start")
    if stored is not None:
        return Skill.model_validate(stored[1])
    current = loop.bank().get(skill_id)
    if current is None:
        raise ConfigError(f"no skill {skill_id!r} in {loop.bank_dir}")
    require_rubric(current)
    loop.store.put("start", skill_id, "start", "done", current.model_dump(mode="json"))
    return current
