"""Turn-level rubric rewards as one library call: retrieve, verify turn by turn, write.

:func:`turn_rewards` does what ``agentcredit skills reward`` does and writes the same files
into ``out``: ``run.sqlite`` (turn verdicts, resumable), ``turn_rewards.jsonl`` (and
``.parquet`` with the ``parquet`` extra) and ``turn_rewards.html``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.checklists.rules import load_rules
from agentcredit.errors import AgentCreditError, ConfigError, NoTrialToVerify
from agentcredit.formats import load
from agentcredit.llm.cache import ResponseCache
from agentcredit.llm.redact import task_text as owned_text
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for, concurrency_of
from agentcredit.rewards.report import write_turn_report
from agentcredit.rewards.run import VerifySummary, assign, rewards_of, task_text, verify_all
from agentcredit.rewards.table import RewardTable
from agentcredit.schema import ReadError, SkillBank, Task, Trial
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
    """None while requests are queued for a batch."""
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
    seed: int = 0, budget_tokens: int = 24_000, rules: Path | None = None,
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
    loaded = load([*map(Path, trials), *map(Path, tasks)])
    instructions = {t.id: t.instruction for t in loaded.tasks}
    choices, chosen = await _choose(
        skills, loaded.trials, instructions, skill, embed,
        cache=client.cache.path if client.cache is not None else None,
        base_url=model.base_url if isinstance(model, ModelSpec) else None)
    owned = {t.id: owned_text(t.instruction, t.verifier_files) for t in loaded.tasks}
    assignments, skipped = assign(loaded.trials, skills, chosen, instructions, owned)
    if not assignments:
        rubric = skipped and all("has no rubric" in why for why in skipped.values())
        raise NoTrialToVerify("no trial can be verified (see the reasons above)" + (
            "; a skill needs a rubric: `agentcredit skills import ... --model M` derives one"
            if rubric else "" if skipped else ": no trials were read"),
            loaded.errors, choices, skipped)
    store = RunStore(out)
    try:
        summary = await verify_all(store, assignments, client, seed=seed,
                                   budget_tokens=budget_tokens,
                                   concurrency=concurrency_of(model), progress=progress,
                                   rule=rule)
        result = RewardResult(read_errors=loaded.errors, choices=choices, skipped=skipped,
                              summary=summary, cache_path=client.cache.path
                              if client.cache is not None else None)
        if not summary.deferred:
            _write(result, store, assignments, skills, out, process_weight, normalize)
        result.usage = client.ledger.summary()
        return result
    finally:
        store.close()
        if client is not model:
            await client.aclose()


def _write(result: RewardResult, store: RunStore, assignments: list[Any], bank: SkillBank,
           out: Path, process_weight: float, normalize: bool) -> None:
    table = rewards_of(store, assignments, process_weight=process_weight, normalize=normalize)
    result.table = table
    result.written.append(write_rows(table.rows, out / "turn_rewards.jsonl", "jsonl"))
    try:
        result.written.append(write_rows(table.rows, out / "turn_rewards.parquet", "parquet"))
    except AgentCreditError:
        result.parquet_skipped = True
    result.written.append(write_turn_report(out / "turn_rewards.html", table,
                                            store.turn_verdicts(),
                                            {a.trial.id: a for a in assignments}, bank))


async def _choose(bank: SkillBank, trials: list[Trial], instructions: dict[str, str],
                  skill: str | None, embed: str, *, cache: Path | None, base_url: str | None,
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """(task -> skill retrieved, trial -> skill): ``skill`` for every trial, else top-1
    retrieval for its task."""
    if skill is not None:
        return {}, {t.id: skill for t in trials}
    by_task: dict[str, Task] = {}
    for trial in trials:
        key = trial.task_id or trial.id
        text = task_text(trial, instructions)
        if text and key not in by_task:
            by_task[key] = Task(id=key, instruction=text, benchmark="-", source_path="-")
    embedder = make_embedder(embed, base_url=base_url, cache=None if cache is None or embed in
                             ("lexical", "bm25") else ResponseCache(cache))
    results = await retrieve(bank, list(by_task.values()), embedder)
    best = {r.task_id: r.best.skill_id for r in results if r.best is not None}
    return dict(sorted(best.items())), {t.id: best[t.task_id or t.id] for t in trials
                                        if (t.task_id or t.id) in best}
