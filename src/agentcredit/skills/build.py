"""Building a SkillBank from teacher trials, in four resumable stages (SkillRubric §3.1, C).

1. intra-teacher: one call per teacher x task over that teacher's trials of the task;
2. cross-teacher: one call per task over the teachers' candidates;
3. dual-view: one call per task -> a gated skill (applicability, guidance, rubric);
4. cross-task: complete-linkage clustering of the task-level skills by the cosine distance
   of their applicability embeddings (threshold ``1 - tau``); one call per multi-skill
   cluster merges it into a gated capability-level skill or rejects the merge, in which
   case the cluster's skills stay as they are (supported alternatives are kept).

A teacher is a trial's agent + model. Every unit's output is stored in ``BANK/build.sqlite``
as soon as it is known. In batch mode (a client with ``defer``) the build goes as far as
the cache allows and says which stage is waiting: one batch round per stage.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.checklists.freeze import file_name
from agentcredit.errors import ModelCallError
from agentcredit.formats.oracle import read_oracle
from agentcredit.hashing import canonical_sha256
from agentcredit.llm.client import Model
from agentcredit.llm.types import Message
from agentcredit.llm.window import fit_to_window
from agentcredit.schema import Lineage, ParentRef, Skill, SkillBank, Task, Trial
from agentcredit.schema.outcomes import Deferred, Failed, Rejected
from agentcredit.skills import prompts
from agentcredit.skills.bank import BANK_NAME, freeze_bank, make_bank, read_bank, slug, unique_ids
from agentcredit.skills.cluster import complete_linkage
from agentcredit.skills.embed import Embedder, cosine_matrix
from agentcredit.skills.gates import RULES_VERSION, GateContext
from agentcredit.skills.leaks import leak_literals
from agentcredit.skills.stages import ask, ask_gated, skill_from_draft
from agentcredit.skills.teachers import Teachers
from agentcredit.store.units import UnitStore

MIN_TEACHER_TOKENS = 300  # the smallest view of a teacher's trials when fitting a window
STAGES = ("intra-teacher", "cross-teacher", "dual-view", "cross-task")
REJECTIONS = "rejections"


@dataclass(frozen=True)
class BuildOptions:
    """How to build."""

    model: Model
    embedder: Embedder
    tau: float = 0.7
    budget_tokens: int = 24_000
    concurrency: int = 8


@dataclass
class BankBuildReport:
    """What a build did, stage by stage."""

    units: dict[str, Counter[str]] = field(
        default_factory=lambda: {s: Counter() for s in STAGES})
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    rejected: list[tuple[str, str, Rejected]] = field(default_factory=list)
    merges: list[tuple[tuple[str, ...], str | None, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    waiting: str | None = None
    """The first stage with a unit queued for a batch round (None: nothing waits)."""
    pending: list[tuple[str, str]] = field(default_factory=list)
    """(stage, unit) of every unit queued for a batch round; the bank written meanwhile
    holds the skills that are ready, and the next run completes the rest."""
    bank: SkillBank | None = None


class _Build:
    def __init__(self, out: Path, options: BuildOptions, report: BankBuildReport,
                 progress: Callable[[str], None] | None) -> None:
        self.out = out
        self.options = options
        self.report = report
        self.store = UnitStore(out)
        self.progress = progress
        self.semaphore = asyncio.Semaphore(max(1, options.concurrency))

    def _input_key(self, messages: Sequence[Message]) -> str:
        return canonical_sha256({"model": self.options.model.model_id,
                          "prompt_version": prompts.PROMPT_VERSION,
                          "messages": [m.model_dump(mode="json") for m in messages]})

    async def unit(self, stage: str, unit: str, messages: Sequence[Message],
                   call: Callable[[], Awaitable[Any]]) -> tuple[str, Any] | None:
        """(status, stored output) of a unit: from the store, or asked now and stored."""
        key = self._input_key(messages)
        counts = self.report.units[stage]
        stored = self.store.get(stage, unit, key)
        if stored is None:
            async with self.semaphore:
                result = await call()
            stored = self._record(stage, unit, key, result)
        else:
            counts["resumed"] += 1
        if self.progress is not None:
            self.progress(stage)
        if stored is not None and stored[0] == "rejected":
            self.report.rejected.append((stage, unit, Rejected(attempts=stored[1]["attempts"])))
        return stored

    def _record(self, stage: str, unit: str, key: str, result: Any) -> tuple[str, Any] | None:
        counts = self.report.units[stage]
        if isinstance(result, Deferred):
            counts["queued"] += 1
            self.report.waiting = self.report.waiting or stage
            self.report.pending.append((stage, unit))
            return None
        if isinstance(result, Failed):
            counts["failed"] += 1
            self.report.failed.append((stage, unit, result.reason))
            self.store.error(stage, unit, result.reason)
            return None
        if isinstance(result, Rejected):
            counts["rejected"] += 1
            body = result.as_dict(unit)
            self.store.put(stage, unit, key, "rejected", body)
            folder = self.out / REJECTIONS
            folder.mkdir(parents=True, exist_ok=True)
            (folder / file_name(f"{stage}__{unit}")).write_text(
                json.dumps({"stage": stage, **body}, indent=2) + "\n", encoding="utf-8")
            self.report.rejected.append((stage, unit, result))
            return None
        counts["asked"] += 1
        self.store.put(stage, unit, key, "done", result)
        (self.out / REJECTIONS / file_name(f"{stage}__{unit}")).unlink(missing_ok=True)
        return "done", result


async def build_bank(trials: Iterable[Trial] | Teachers, tasks: Sequence[Task], out: Path,
                     options: BuildOptions, *,
                     progress: Callable[[str], None] | None = None) -> BankBuildReport:
    """Run (or resume) the four stages and freeze the bank. While units wait for a batch
    round (``report.pending``), the bank holds the skills that are ready (a cluster whose
    merge waits stays apart) and the next run completes it: one pending unit never holds
    back the others.

    ``trials``: the teacher trials (a list or a stream, read once; at most
    :data:`~agentcredit.skills.teachers.TEACHER_TRIALS` per task and teacher are kept), or
    the :class:`~agentcredit.skills.teachers.Teachers` gathered from them already.
    """
    report = BankBuildReport()
    by_task = {t.id: t for t in tasks}
    teachers = trials.for_tasks(tasks) if isinstance(trials, Teachers) \
        else Teachers.gather(trials, tasks)
    report.skipped += teachers.skipped
    report.notes += teachers.notes()
    build = _Build(out, options, report, progress)
    try:
        contexts = _contexts(teachers, by_task, report)
        skills = await _task_skills(build, teachers, by_task, contexts)
        final = await _cross_task(build, skills, contexts) if report.waiting is None \
            else [skills[k] for k in sorted(skills)]  # clustered once every task is in
        if final is not None and (final or report.waiting is None):
            report.bank = _freeze(out, final, tasks, options)
    finally:
        build.store.close()
    return report


def _contexts(teachers: Teachers, tasks: dict[str, Task],
              report: BankBuildReport) -> dict[str, GateContext]:
    tools = teachers.all_tools()
    ids = frozenset().union(*teachers.ids.values())
    out: dict[str, GateContext] = {}
    for task_id in teachers.groups:
        oracle, problems = read_oracle(tasks[task_id])
        report.notes += [f"oracle of {task_id}: {p}" for p in problems]
        out[task_id] = GateContext(leaks=leak_literals(tasks[task_id], oracle),
                                   tools=tools, trial_ids=ids)
    return out


async def _task_skills(build: _Build, teachers: Teachers, tasks: dict[str, Task],
                       contexts: dict[str, GateContext]) -> dict[str, Skill]:
    model = build.options.model

    async def one(task_id: str) -> tuple[str, Skill | None]:
        task, groups = tasks[task_id], teachers.groups[task_id]
        analyses = await asyncio.gather(*(
            _teacher(build, task, name, group) for name, group in sorted(groups.items())))
        if any(a is None for a in analyses):
            return task_id, None
        done = {name: a for name, a in zip(sorted(groups), analyses, strict=True)
                if a is not None}
        messages = prompts.consolidate_messages(task, done)
        stored = await build.unit("cross-teacher", task_id, messages,
                                  lambda: _as_dict(ask(model, messages,
                                                       prompts.ConsolidatedSkill)))
        if stored is None or stored[0] != "done":
            return task_id, None
        consolidated = prompts.ConsolidatedSkill.model_validate(stored[1])
        lineage = Lineage(stage="dual-view", source_tasks=(task_id,),
                          teachers=tuple(sorted(groups)),
                          trial_ids=tuple(sorted(t.id for group in groups.values()
                                                 for t in group)), model=model.model_id)
        dual = prompts.dual_view_messages(task, consolidated)

        def to_skill(draft: prompts.DualViewDraft) -> Skill:
            return skill_from_draft(draft, skill_id=slug(task_id), lineage=lineage)

        stored = await build.unit("dual-view", task_id, dual, lambda: _as_dict(ask_gated(
            model, dual, prompts.DualViewDraft, to_skill, contexts[task_id])))
        if stored is None or stored[0] != "done":
            return task_id, None
        return task_id, Skill.model_validate(stored[1])

    results = await asyncio.gather(*(one(task_id) for task_id in sorted(teachers.groups)))
    return {task_id: skill for task_id, skill in results if skill is not None}


async def _teacher(build: _Build, task: Task, teacher: str,
                   trials: list[Trial]) -> prompts.TeacherAnalysis | None:
    messages = await fit_to_window(
        build.options.model,
        lambda budget: prompts.teacher_messages(task, teacher, trials, budget_tokens=budget),
        build.options.budget_tokens, floor=MIN_TEACHER_TOKENS)
    stored = await build.unit("intra-teacher", f"{task.id}::{teacher}", messages,
                              lambda: _as_dict(ask(build.options.model, messages,
                                                   prompts.TeacherAnalysis)))
    if stored is None or stored[0] != "done":
        return None
    return prompts.TeacherAnalysis.model_validate(stored[1])


async def _as_dict(pending: Awaitable[Any]) -> Any:
    """A stage answer as JSON-ready data (markers pass through)."""
    value = await pending
    if isinstance(value, (Deferred, Failed, Rejected)):
        return value
    return value.model_dump(mode="json")


async def _cross_task(build: _Build, skills: dict[str, Skill],
                      contexts: dict[str, GateContext]) -> list[Skill] | None:
    ordered = [skills[k] for k in sorted(skills)]
    if len(ordered) < 2:
        return ordered
    try:
        vectors = await build.options.embedder.embed([s.applicability for s in ordered])
    except ModelCallError as exc:
        build.report.failed.append(("cross-task", "embeddings", str(exc)))
        return None
    clusters = complete_linkage(cosine_matrix(vectors, vectors), build.options.tau)
    final: list[Skill] = []
    taken = {s.id for s in ordered}
    for cluster in clusters:
        members = [ordered[i] for i in cluster]
        if len(members) == 1:
            final.append(members[0])
            continue
        merged = await _merge(build, members, contexts, taken)
        if isinstance(merged, Skill):
            taken.add(merged.id)
            final.append(merged)
        else:
            final += members  # kept apart (or, while the merge waits, apart for now)
    return final


async def _merge(build: _Build, members: list[Skill], contexts: dict[str, GateContext],
                 taken: set[str]) -> Skill | None:
    model = build.options.model
    names = tuple(s.id for s in members)
    unit = "+".join(names)
    tasks = sorted({t for s in members for t in s.lineage.source_tasks})
    context = GateContext(
        leaks={k: v for t in tasks if t in contexts for k, v in contexts[t].leaks.items()},
        tools=next(iter(contexts.values())).tools,
        trial_ids=next(iter(contexts.values())).trial_ids)
    lineage = Lineage(
        stage="cross-task", source_tasks=tuple(tasks),
        teachers=tuple(sorted({t for s in members for t in s.lineage.teachers})),
        trial_ids=tuple(sorted({t for s in members for t in s.lineage.trial_ids})),
        parents=tuple(ParentRef(skill_id=s.id, version=s.version) for s in members),
        model=model.model_id)
    reasons: list[str] = []

    def to_skill(answer: prompts.MergeAnswer) -> Skill | None:
        reasons.append(answer.reason)
        if not answer.coherent or answer.merged is None:
            return None
        skill_id = unique_ids([slug(answer.merged.title)], taken)[0]
        return skill_from_draft(answer.merged, skill_id=skill_id,
                                lineage=lineage.model_copy(update={"note": answer.reason}))

    async def call() -> Any:
        result = await ask_gated(model, messages, prompts.MergeAnswer, to_skill, context)
        if result is None:
            return {"merged": None, "reason": reasons[-1] if reasons else ""}
        if isinstance(result, Skill):
            return {"merged": result.model_dump(mode="json"), "reason": reasons[-1]}
        return result

    messages = prompts.merge_messages(members)
    stored = await build.unit("cross-task", unit, messages, call)
    if stored is None:
        if (("cross-task", unit)) not in build.report.pending:
            build.report.merges.append((names, None, "merge failed; the skills are kept apart"))
        return None
    if stored[0] != "done":
        build.report.merges.append((names, None, "merge rejected by the gates; kept apart"))
        return None
    merged = stored[1]["merged"]
    skill = Skill.model_validate(merged) if merged else None
    build.report.merges.append((names, skill.id if skill else None, stored[1]["reason"]))
    return skill


def _freeze(out: Path, skills: list[Skill], tasks: Sequence[Task],
            options: BuildOptions) -> SkillBank:
    kept: list[Skill] = []
    if (out / BANK_NAME).exists():
        kept = [s for s in read_bank(out).skills if s.lineage.stage == "import"]
    built_ids = {s.id for s in skills}
    benchmarks = {t.benchmark for t in tasks}
    bank = make_bank([*skills, *(s for s in kept if s.id not in built_ids)],
                     benchmark=benchmarks.pop() if len(benchmarks) == 1 else None,
                     embedding=options.embedder.name, rules_version=RULES_VERSION,
                     prompt_version=prompts.PROMPT_VERSION,
                     synthesizer=options.model.model_id, tau=options.tau)
    freeze_bank(bank, out)
    return bank
