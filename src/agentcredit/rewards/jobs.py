"""Turn-level rubric rewards as one library call: retrieve, verify turn by turn, write.

:func:`turn_rewards` does what ``agentcredit skills reward`` does and writes the same files
into ``out``: ``run.sqlite`` (turn verdicts, resumable), ``turn_rewards.jsonl`` (and
``.parquet`` with the ``parquet`` extra) and ``turn_rewards.html``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.checklists.build import derive_checklist
from agentcredit.checklists.freeze import load_checklists
from agentcredit.checklists.rules import Rules, load_rules
from agentcredit.errors import AgentCreditError, ConfigError, NoTrialToVerify
from agentcredit.formats import TrialStream
from agentcredit.formats.join import first_user_message
from agentcredit.llm.cache import ResponseCache
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for, concurrency_of
from agentcredit.redact import task_text as owned_text
from agentcredit.rewards.checklist import Rubric, RubricChoice, criteria_of
from agentcredit.rewards.report import MAX_TRIALS, Shown, write_turn_report
from agentcredit.rewards.run import (
    Assignment,
    Member,
    Seen,
    VerifySummary,
    reward_rows,
    skip_reason,
    task_text,
    verify_all,
)
from agentcredit.rewards.table import RewardTable
from agentcredit.runs.status import tell_progress
from agentcredit.schema import Checklist, ReadError, Skill, SkillBank, Task, Trial
from agentcredit.schema.turns import rubric_key
from agentcredit.skills.bank import load_bank, skill_hash
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.ranking import floor_of, retrieve
from agentcredit.store.exports import write_rows
from agentcredit.store.run_store import RunStore


@dataclass
class RewardResult:
    """What a reward run chose, verified and wrote."""

    read_errors: list[ReadError]
    choices: dict[str, str]
    """task id -> the skill retrieved for it (empty with a fixed ``skill``)."""
    skipped: dict[str, str]
    """trial id -> why it was not verified."""
    summary: VerifySummary
    table: RewardTable | None = None
    """What the group rules did (suppressed and dropped groups); None while requests are
    queued for a batch. The rows themselves are in the files (``written``), not here."""
    rows: int = 0
    """Turn rows written."""
    rewarded: int = 0
    """Trials with turn rows."""
    written: list[Path] = field(default_factory=list)
    parquet_skipped: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    cache_path: Path | None = None

    @property
    def waiting(self) -> str | None:
        """The verifier stage whose requests are queued ("coarse" or "fine"), if any."""
        if not self.summary.deferred:
            return None
        return "coarse" if "coarse" in self.summary.deferred.values() else "fine"


def turn_rewards(bank: SkillBank | Path | str, trials: Sequence[Path | str], out: Path | str,
                 *, model: ModelLike, **options: Any) -> RewardResult:
    """Per-turn rewards and advantages of the trials under their skills' rubrics.

    The synchronous wrapper of ``turn_rewards_async`` (same arguments).

    Examples:
        >>> import json, tempfile
        >>> from agentcredit.llm import register_script
        >>> from agentcredit.skills import import_skills
        >>> rubric = [{"statement": f"Result {i} was written.", "weight": 1.0,
        ...            "evidence": "A listing shows the file.",
        ...            "failure": "No output shows the file."}
        ...           for i in (1, 2, 3)]
        >>> def model(messages, schema):  # a scripted rubric writer and verifier, for the example
        ...     if schema["title"] == "RubricDraft":
        ...         return json.dumps({"rubric": rubric})
        ...     if schema["title"] == "CoarseAnswer":
        ...         return json.dumps({"turns": [], "criteria": []})
        ...     return json.dumps({"criteria": [{"criterion_id": f"R{i}", "satisfied": False}
        ...                                     for i in (1, 2, 3)]})
        >>> register_script("doc-verifier", model)
        >>> work = Path(tempfile.mkdtemp())
        >>> _ = import_skills(["examples/skills"], work / "bank", model="scripted/doc-verifier")
        >>> result = turn_rewards(work / "bank", ["examples/jobs"], work / "run",
        ...                       model="scripted/doc-verifier")
        >>> len(result.summary.verified), sorted(p.name for p in result.written)[:2]
        (8, ['turn_rewards.html', 'turn_rewards.jsonl'])
    """
    return asyncio.run(turn_rewards_async(bank, trials, out, model=model, **options))


async def turn_rewards_async(
    bank: SkillBank | Path | str, trials: Sequence[Path | str], out: Path | str, *,
    model: ModelLike, process_weight: float = 1.0, normalize: bool = False,
    skill: str | None = None, tasks: Sequence[Path | str] = (), embed: str = "lexical",
    seed: int = 0, budget_tokens: int = 24_000, rules: Path | str | None = None,
    progress: Callable[[str], None] | None = None, choice: RubricChoice | None = None,
) -> RewardResult:
    """Choose each trial's skill (``skill``, else top-1 retrieval on its task's text: the
    instruction of ``tasks`` or the trial's own), verify turn by turn (resumable) and write
    the per-turn rows. ``rules`` is a rules YAML whose evidence section decides when a cited
    quote is specific enough (default: the shipped rules), as it does for the judge.
    ``choice.rubric``: the skill's criteria, the task's frozen checklist (``checklists``,
    else derived from a task in ``tasks``; none: ``no_checklist``) or both in the same calls;
    retrieval below ``choice.floor`` (default: the ranker's measured one) is ``no_skill``. Raises
    NothingToDo when no trial can be verified (every reason is in ``read_errors`` and
    the message), ConfigError for an unknown ``skill`` or an unusable model setting.
    """
    out, rule_set = Path(out), load_rules(rules)  # its evidence: when a quote is specific
    skills = bank if isinstance(bank, SkillBank) else load_bank(Path(bank))
    if skill is not None and skills.get(skill) is None:
        raise ConfigError(f"no skill {skill!r} in "
                          f"{'the bank' if isinstance(bank, SkillBank) else bank}")
    client = client_for(model, default_cache=out / "responses.sqlite")
    assert client is not None
    paths, choice = [*map(Path, trials), *map(Path, tasks)], choice or RubricChoice()
    survey = await asyncio.to_thread(_Survey.read, paths)
    instructions = {t.id: t.instruction for t in survey.tasks}
    rubric, frozen = choice.rubric, frozen_checklists(choice, survey.tasks, rule_set)
    choices, chosen = ({}, {}) if rubric == "checklist" else await _choose(
        skills, survey, instructions, skill, embed,
        cache=client.cache.path if client.cache is not None else None,
        base_url=model.base_url if isinstance(model, ModelSpec) else None,
        floor=floor_of(embed, choice.floor, len(skills.skills)))
    plan = _Plan(skills, frozen, chosen, rubric)
    skipped = {trial_id: why for trial_id, seen in survey.seen.items()
               if (why := plan.skip(trial_id, seen, instructions)) is not None}
    if len(skipped) == len(survey.seen):
        raise _nothing_to_verify(survey.errors, choices, skipped)
    owned = {t.id: owned_text(t.instruction, t.verifier_files) for t in survey.tasks}
    shown = {t: Shown() for t in [t for t in survey.seen if t not in skipped][:MAX_TRIALS]}
    store = RunStore(out)
    try:
        assignments = _assignments(paths, survey, plan, instructions, owned, shown)
        tell_progress(progress, client, len(shown))
        summary = await verify_all(store, assignments, client, seed=seed,
                                   budget_tokens=budget_tokens,
                                   concurrency=concurrency_of(model), progress=progress,
                                   rule=rule_set.evidence)
        result = RewardResult(read_errors=survey.errors, choices=choices, skipped=skipped,
                              summary=summary, cache_path=client.cache.path
                              if client.cache is not None else None)
        if not summary.deferred:
            _write(result, store, survey.members(plan, skipped), shown, skills, out,
                   process_weight, normalize, survey.seen)
        result.usage = client.ledger.summary()
        return result
    finally:
        store.close()
        if client is not model:
            await client.aclose()


@dataclass
class _Survey:
    """The first read of a reward run: the tasks, the read errors and what each trial's
    skill choice and rewards need (:class:`Seen`), the logs dropped as they are read."""

    tasks: list[Task]
    errors: list[ReadError]
    seen: dict[str, Seen]
    said: dict[str, str]
    """group (task id, else trial id) -> the first instruction a trial's own log shows."""

    @classmethod
    def read(cls, paths: list[Path]) -> _Survey:
        stream = TrialStream(paths)
        seen: dict[str, Seen] = {}
        said: dict[str, str] = {}
        for trial in stream:
            seen[trial.id] = Seen.of(trial)
            key = trial.task_id or trial.id
            if key not in said and (text := first_user_message(trial)):
                said[key] = text
        return cls(stream.result.tasks, stream.result.errors, seen, said)

    def members(self, plan: _Plan, skipped: dict[str, str]) -> dict[str, list[Member]]:
        """Each reward group's trials, in the order they came."""
        groups: dict[str, list[Member]] = {}
        for trial_id, seen in self.seen.items():
            if trial_id not in skipped:
                skill, checklist = plan.parts(trial_id, seen.task_id)
                groups.setdefault(seen.task_id or trial_id, []).append(
                    (trial_id, criteria_of(skill, checklist, plan.rubric), rubric_key(
                        plan.rubric, skill_hash(skill) if skill else None,
                        checklist.hash if checklist else None), seen.outcome))
        return groups


@dataclass(frozen=True)
class _Plan:
    """What each trial is verified against: its skill, its task's checklist, or both."""

    bank: SkillBank
    checklists: dict[str, Checklist]
    chosen: dict[str, str]
    rubric: Rubric

    def checklist(self, task_id: str | None) -> Checklist | None:
        return self.checklists.get(task_id or "") if self.rubric != "skill" else None

    def skip(self, trial_id: str, seen: Seen, instructions: dict[str, str]) -> str | None:
        """Why a trial cannot be verified (None when it can)."""
        return skip_reason(trial_id, seen, self.chosen.get(trial_id), self.bank, instructions,
                           self.checklist(seen.task_id), self.rubric)

    def parts(self, trial_id: str, task_id: str | None) -> tuple[Skill | None,
                                                                 Checklist | None]:
        skill = self.bank.get(self.chosen.get(trial_id, "")) if self.rubric != "checklist" \
            else None
        return skill, self.checklist(task_id)

    def assignment(self, trial: Trial, instruction: str,
                   owned: str | None = None) -> Assignment:
        return Assignment(trial, *self.parts(trial.id, trial.task_id), instruction, owned,
                          rubric=self.rubric)


def frozen_checklists(choice: RubricChoice, tasks: Sequence[Task], rules: Rules,
                      ) -> dict[str, Checklist]:
    """The frozen checklists of ``choice.checklists`` by task id, and for a task of ``tasks``
    without one, the checklist derived from its verifier (no model) when it passes the
    gates; none under a skill's rubric."""
    if choice.rubric == "skill":
        return {}
    found = load_checklists(choice.checklists) if choice.checklists is not None else {}
    for task in tasks:
        if task.id not in found and isinstance(made := derive_checklist(task, rules),
                                               Checklist):
            found[task.id] = made
    return found


def _nothing_to_verify(errors: list[ReadError], choices: dict[str, str],
                       skipped: dict[str, str]) -> NoTrialToVerify:
    rubric = skipped and all("has no rubric" in why for why in skipped.values())
    return NoTrialToVerify("no trial can be verified (see the reasons above)" + (
        "; a skill needs a rubric: `agentcredit skills import ... --model M` derives one"
        if rubric else "" if skipped else ": no trials were read"), errors, choices, skipped)


async def _assignments(paths: list[Path], survey: _Survey, plan: _Plan,
                       instructions: dict[str, str], owned: dict[str, str],
                       shown: dict[str, Shown]) -> AsyncIterator[Assignment]:
    """The second read: each trial to verify, with its skill and checklist, as the stream
    reads it (a trial the first read did not see, or could not verify, is left out)."""
    async for trial in TrialStream(paths):
        seen = survey.seen.get(trial.id)
        if seen is None or plan.skip(trial.id, seen, instructions) is not None:
            continue
        item = plan.assignment(trial, task_text(trial, instructions),
                               owned.get(trial.task_id or ""))
        if trial.id in shown:
            shown[trial.id] = Shown.of(trial, item.criteria, item.label)
        yield item


def _write(result: RewardResult, store: RunStore,
           members: dict[str, list[Member]], shown: dict[str, Shown],
           bank: SkillBank, out: Path, process_weight: float, normalize: bool,
           seen: dict[str, Seen]) -> None:
    """The turn rows, written one group at a time (JSON Lines, Parquet) and the page."""
    table = result.table = RewardTable()
    rewarded: set[str] = set()

    def rows() -> Iterator[dict[str, Any]]:
        for row in reward_rows(store, members, table, process_weight=process_weight,
                               normalize=normalize):
            result.rows += 1
            rewarded.add(str(row["trial_id"]))
            row["check_fraction"] = seen[str(row["trial_id"])].check_fraction
            if (item := shown.get(str(row["trial_id"]))) is not None:
                item.rows.append(row)
            yield row

    jsonl = write_rows(rows(), out / "turn_rewards.jsonl", "jsonl")
    result.written.append(jsonl)
    result.rewarded = len(rewarded)
    try:
        result.written.append(write_rows(_lines(jsonl), out / "turn_rewards.parquet",
                                         "parquet"))
    except AgentCreditError:
        result.parquet_skipped = True
    for item in shown.values():
        if item.rows:
            item.verdict = store.turn_verdicts([str(item.rows[0]["trial_id"])]).get(
                str(item.rows[0]["trial_id"]))
    result.written.append(write_turn_report(out / "turn_rewards.html", table, result.rows,
                                            shown, bank))
def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


async def _choose(bank: SkillBank, survey: _Survey, instructions: dict[str, str],
                  skill: str | None, embed: str, *, cache: Path | None, base_url: str | None,
                  floor: float = 0.0) -> tuple[dict[str, str], dict[str, str]]:
    """(task -> skill retrieved, trial -> skill): ``skill`` for every trial, else top-1
    retrieval for its task when it scores at least ``floor``."""
    if skill is not None:
        return {}, dict.fromkeys(survey.seen, skill)
    by_task: dict[str, Task] = {}
    for trial_id, seen in survey.seen.items():
        key = seen.task_id or trial_id
        text = instructions.get(seen.task_id or "") or survey.said.get(key, "")
        if text and key not in by_task:
            by_task[key] = Task(id=key, instruction=text, benchmark="-", source_path="-")
    embedder = make_embedder(embed, base_url=base_url, cache=None if cache is None or embed in
                             ("lexical", "bm25") else ResponseCache(cache))
    results = await retrieve(bank, list(by_task.values()), embedder)
    best = {r.task_id: r.best.skill_id for r in results
            if r.best is not None and r.best.score >= floor}
    return dict(sorted(best.items())), {
        trial_id: best[seen.task_id or trial_id] for trial_id, seen in survey.seen.items()
        if (seen.task_id or trial_id) in best}
