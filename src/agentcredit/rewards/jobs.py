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

from agentcredit.checklists.rules import load_rules
from agentcredit.errors import AgentCreditError, ConfigError, NoTrialToVerify
from agentcredit.formats import TrialStream
from agentcredit.formats.join import first_user_message
from agentcredit.llm.cache import ResponseCache
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for, concurrency_of
from agentcredit.redact import task_text as owned_text
from agentcredit.rewards.report import MAX_TRIALS, Shown, write_turn_report
from agentcredit.rewards.run import (
    Assignment,
    Seen,
    VerifySummary,
    reward_rows,
    skip_reason,
    task_text,
    verify_all,
)
from agentcredit.rewards.table import RewardTable
from agentcredit.runs.status import tell_progress
from agentcredit.schema import ReadError, Skill, SkillBank, Task
from agentcredit.skills.bank import load_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.ranking import retrieve
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

    The synchronous wrapper of :func:`turn_rewards_async` (same arguments).

    >>> import json, tempfile
    >>> from agentcredit.llm import register_script
    >>> from agentcredit.skills import import_skills
    >>> rubric = [{"statement": f"Result {i} was written.", "weight": 1.0,
    ...            "evidence": "A listing shows the file.", "failure": "No output shows the file."}
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
    progress: Callable[[str], None] | None = None,
) -> RewardResult:
    """Choose each trial's skill (``skill``, else top-1 retrieval on its task's text: the
    instruction of ``tasks`` or the trial's own), verify turn by turn (resumable) and write
    the per-turn rows. ``rules`` is a rules YAML whose evidence section decides when a cited
    quote is specific enough (default: the shipped rules), as it does for the judge.

    Raises:
        NothingToDo: no trial can be verified (every reason is in ``read_errors`` and the
            message).
        ConfigError: an unknown ``skill`` or an unusable model setting.
    """
    out = Path(out)
    rule = load_rules(rules).evidence  # when a cited quote is specific enough
    skills = bank if isinstance(bank, SkillBank) else load_bank(Path(bank))
    if skill is not None and skills.get(skill) is None:
        raise ConfigError(f"no skill {skill!r} in "
                          f"{'the bank' if isinstance(bank, SkillBank) else bank}")
    client = client_for(model, default_cache=out / "responses.sqlite")
    assert client is not None
    paths = [*map(Path, trials), *map(Path, tasks)]
    survey = await asyncio.to_thread(_Survey.read, paths)
    instructions = {t.id: t.instruction for t in survey.tasks}
    choices, chosen = await _choose(
        skills, survey, instructions, skill, embed,
        cache=client.cache.path if client.cache is not None else None,
        base_url=model.base_url if isinstance(model, ModelSpec) else None)
    skipped = {trial_id: why for trial_id, seen in survey.seen.items()
               if (why := skip_reason(trial_id, seen, chosen.get(trial_id), skills,
                                      instructions)) is not None}
    if len(skipped) == len(survey.seen):
        raise _nothing_to_verify(survey.errors, choices, skipped)
    owned = {t.id: owned_text(t.instruction, t.verifier_files) for t in survey.tasks}
    shown = {trial_id: Shown() for trial_id in survey.seen if trial_id not in skipped}
    shown = dict(list(shown.items())[:MAX_TRIALS])
    store = RunStore(out)
    try:
        assignments = _assignments(paths, survey, chosen, skills, instructions, owned, shown)
        tell_progress(progress, client, len(shown))
        summary = await verify_all(store, assignments, client, seed=seed,
                                   budget_tokens=budget_tokens,
                                   concurrency=concurrency_of(model), progress=progress,
                                   rule=rule)
        result = RewardResult(read_errors=survey.errors, choices=choices, skipped=skipped,
                              summary=summary, cache_path=client.cache.path
                              if client.cache is not None else None)
        if not summary.deferred:
            _write(result, store, survey.members(chosen, skipped, skills), shown, skills, out,
                   process_weight, normalize)
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

    def members(self, chosen: dict[str, str], skipped: dict[str, str], bank: SkillBank,
                ) -> dict[str, list[tuple[str, Skill, float | None]]]:
        """Each reward group's (trial id, skill, outcome), in the order the trials came."""
        groups: dict[str, list[tuple[str, Skill, float | None]]] = {}
        for trial_id, seen in self.seen.items():
            if trial_id not in skipped and (skill := bank.get(chosen[trial_id])):
                groups.setdefault(seen.task_id or trial_id, []).append(
                    (trial_id, skill, seen.outcome))
        return groups


def _nothing_to_verify(errors: list[ReadError], choices: dict[str, str],
                       skipped: dict[str, str]) -> NoTrialToVerify:
    rubric = skipped and all("has no rubric" in why for why in skipped.values())
    return NoTrialToVerify("no trial can be verified (see the reasons above)" + (
        "; a skill needs a rubric: `agentcredit skills import ... --model M` derives one"
        if rubric else "" if skipped else ": no trials were read"), errors, choices, skipped)


async def _assignments(paths: list[Path], survey: _Survey, chosen: dict[str, str],
                       bank: SkillBank, instructions: dict[str, str], owned: dict[str, str],
                       shown: dict[str, Shown]) -> AsyncIterator[Assignment]:
    """The second read: each trial to verify, with its skill, as the stream reads it (a
    trial the first read did not see, or could not verify, is left out)."""
    async for trial in TrialStream(paths):
        seen = survey.seen.get(trial.id)
        if seen is None or trial.id not in chosen or \
                skip_reason(trial.id, seen, chosen[trial.id], bank, instructions) is not None:
            continue
        skill = bank.get(chosen[trial.id])
        assert skill is not None
        if trial.id in shown:
            shown[trial.id] = Shown.of(trial, skill)
        yield Assignment(trial, skill, task_text(trial, instructions),
                         owned.get(trial.task_id or ""))


def _write(result: RewardResult, store: RunStore,
           members: dict[str, list[tuple[str, Skill, float | None]]], shown: dict[str, Shown],
           bank: SkillBank, out: Path, process_weight: float, normalize: bool) -> None:
    """The turn rows, written one group at a time (JSON Lines, Parquet) and the page."""
    table = result.table = RewardTable()
    rewarded: set[str] = set()

    def rows() -> Iterator[dict[str, Any]]:
        for row in reward_rows(store, members, table, process_weight=process_weight,
                               normalize=normalize):
            result.rows += 1
            rewarded.add(str(row["trial_id"]))
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
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """(task -> skill retrieved, trial -> skill): ``skill`` for every trial, else top-1
    retrieval for its task."""
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
    best = {r.task_id: r.best.skill_id for r in results if r.best is not None}
    return dict(sorted(best.items())), {
        trial_id: best[seen.task_id or trial_id] for trial_id, seen in survey.seen.items()
        if (seen.task_id or trial_id) in best}
