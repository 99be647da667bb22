"""Trainer hooks: a TRL ``GRPOTrainer`` reward function, a verl ``compute_score`` and
per-turn advantages for trainers that place rewards on turns.

TRL computes the group-relative advantage itself from the scalar it is given, so the TRL
and verl hooks return ``outcome + process_weight * S`` per completion (``S``: the rubric
satisfaction of the completion, when a verifier model and a skill with a rubric are
given), or ``None`` where nothing applies (no ground truth and no rubric score).
:func:`turn_advantages` returns the full per-turn advantages of
:mod:`agentcredit.rewards.advantages` for a group of verified trajectories.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import math
import os
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from agentcredit.errors import ConfigError, InputError, env_value
from agentcredit.evidence.dataflow import flow_of
from agentcredit.formats.openai_messages import messages_to_steps
from agentcredit.llm.client import Model
from agentcredit.llm.endpoint import EndpointSettings, environment_base_url
from agentcredit.rewards.acting import score_answer, score_answer_semantic
from agentcredit.rewards.checklist import RUBRICS, Rubric, criteria_of
from agentcredit.rewards.table import Scored, advantages_of, rubric_satisfaction
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import (
    Checklist,
    Origin,
    RubricCriterion,
    SkillBank,
    Step,
    Trial,
    TrialVerdict,
    rigging_text,
)

T = TypeVar("T")
_log = logging.getLogger("agentcredit.rewards")


def trial_from_completion(prompt: Any, completion: Any, trial_id: str = "completion") -> Trial:
    """A one-trajectory trial from a TRL prompt and completion (strings or chat messages)."""
    messages: list[dict[str, Any]] = []
    for part, role in ((prompt, "user"), (completion, "assistant")):
        if isinstance(part, str) and (part or role == "assistant"):
            messages.append({"role": role, "content": part})
        elif isinstance(part, list):
            messages += [m for m in part if isinstance(m, dict)]
    where = Path(f"<{trial_id}>")
    origins = [Origin(path=str(where), pointer=f"/{i}") for i in range(len(messages))]
    steps: tuple[Step, ...] = messages_to_steps(where, messages, env_replies_as_user=False,
                                                origins=origins)
    return Trial(id=trial_id, steps=steps, outcome="none", format="trl-completion",
                 source_path=str(where))


class _SharedLoop:
    """One event loop per process, in a daemon thread, that every hook call runs on: the
    verifier client (its connections, limits and cache) then lives across calls and is
    shared by the TRL hooks, verl's per-sample and batch functions alike."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def get(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.thread is None or not self.thread.is_alive():
                loop = asyncio.new_event_loop()
                self.thread = threading.Thread(target=loop.run_forever, daemon=True,
                                               name="agentcredit-rewards")
                self.thread.start()
                self.loop = loop
            return self.loop

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if threading.current_thread() is self.thread:
            coroutine.close()
            raise RuntimeError("a reward hook was called from inside its own event loop")
        return asyncio.run_coroutine_threadsafe(coroutine, self.get())


_LOOP = _SharedLoop()


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the shared loop and wait (also when the caller runs a loop)."""
    return _LOOP.submit(coroutine).result()


class SkillRubricReward:
    """A TRL reward function: ``outcome + process_weight * S`` per completion (or None).

    Args:
        answer_column: dataset column with the reference answer (outcome via ``<answer>``).
        outcome_column: dataset column (or keyword) with the environment's own outcome per
            completion (a number, e.g. its tests' pass fraction; None: use the answer).
        bank: SkillBank whose skills' rubrics score the process (needs ``verifier``).
        skill_column: dataset column naming each sample's skill id (else top-1 retrieval
            of the prompt text is not attempted and ``default_skill`` is used).
        verifier: model for the turn verifier (and for semantic answer checks when
            ``semantic`` is true).
        rigging_penalty: subtracted from the reward of a completion whose actions rig the
            measurement (``agentcredit.schema.RiggingFlag``; 0: only reported, in the
            detail's ``rigging``). A flag never raises a reward.
        checklists: frozen GCPC checklists by task id (``load_checklists(DIR)``): with
            ``rubric="checklist"`` or ``"both"`` the turn verifier checks the items of the
            checklist of the task named in ``task_column``; a sample whose task has none is
            unscored (``no_checklist``), never scored against another task's.
    """

    __name__ = "skillrubric"

    def __init__(self, *, answer_column: str = "ground_truth", outcome_column: str = "outcome",
                 bank: SkillBank | None = None,
                 skill_column: str = "skill_id", default_skill: str | None = None,
                 verifier: Model | None = None, process_weight: float = 0.5,
                 tolerance: float = 0.05, semantic: bool = False,
                 rigging_penalty: float = 0.0, checklists: dict[str, Checklist] | None = None,
                 rubric: Rubric = "skill", task_column: str = "task_id") -> None:
        if rubric not in RUBRICS:
            raise ConfigError(f"rubric {rubric!r}: use one of {', '.join(RUBRICS)}")
        self.checklists, self.rubric, self.task_column = checklists or {}, rubric, task_column
        if not 0 <= rigging_penalty < math.inf or not math.isfinite(process_weight):
            raise ConfigError(f"rigging_penalty must be a finite number of 0 or more and "
                              f"process_weight a finite number, not {rigging_penalty} and "
                              f"{process_weight}")
        self.rigging_penalty = rigging_penalty
        self.answer_column = answer_column
        self.outcome_column = outcome_column
        self.bank = bank
        self.skill_column = skill_column
        self.default_skill = default_skill
        self.verifier = verifier
        self.process_weight = process_weight
        self.tolerance = tolerance
        self.semantic = semantic
        self.last_details: list[dict[str, Any]] = []

    def __call__(self, prompts: list[Any], completions: list[Any],
                 **kwargs: Any) -> list[float | None]:
        return _run(self.score_all(prompts, completions, **kwargs))

    async def score_all(self, prompts: list[Any], completions: list[Any],
                        **kwargs: Any) -> list[float | None]:
        results = await self.score_details(prompts, completions, **kwargs)
        self.last_details = [d for _, d in results]
        return [r for r, _ in results]

    async def score_details(self, prompts: list[Any], completions: list[Any],
                            **kwargs: Any) -> list[tuple[float | None, dict[str, Any]]]:
        """(reward, detail) per completion; the detail holds the outcome, the satisfaction
        and, when the process was verified, the ``TrialVerdict`` (``verdict``)."""
        truths = kwargs.get(self.answer_column) or [None] * len(completions)
        skills = kwargs.get(self.skill_column) or [None] * len(completions)
        tasks = kwargs.get(self.task_column) or [None] * len(completions)
        given = kwargs.get(self.outcome_column) or [None] * len(completions)
        # Twice as many samples under way as the verifier has requests in flight: the next
        # ones are ready to send, and the rest are not prepared all at once ahead of the
        # answers (512 coarse prompts built up front kept the first answers waiting ~250 ms).
        started = asyncio.Semaphore(2 * getattr(self.verifier, "capacity", 32))

        async def windowed(i: int, p: Any, c: Any, t: Any, s: Any, k: Any,
                           ) -> tuple[float | None, dict[str, Any]]:
            async with started:
                return await self._contained(i, p, c, t, s, k, given[i])

        return list(await asyncio.gather(*(
            windowed(i, p, c, t, s, k) for i, (p, c, t, s, k) in
            enumerate(zip(prompts, completions, truths, skills, tasks, strict=True)))))

    async def _contained(self, index: int, prompt: Any, completion: Any, truth: Any,
                         skill_id: Any, task_id: Any = None, given: Any = None,
                         ) -> tuple[float | None, dict[str, Any]]:
        """One sample's reward; a sample that cannot be scored gets None, a stable
        ``unscored_code`` and a sentence (``unscored``), never an exception that would cost
        the trainer the whole batch."""
        try:
            reward, detail = await self._one(index, prompt, completion, truth, skill_id,
                                             task_id, given)
        except InputError as exc:
            reward, detail = None, _unscored("unreadable_completion",
                                             f"unreadable completion: {exc.reason}")
        except Exception as exc:  # a bug must not cost every reward of the step
            _log.exception("reward of sample %d failed", index)
            reward, detail = None, _unscored(
                "reward_error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        if reward is None and "unscored_code" not in detail:
            detail.update(_unscored(detail.pop("process_code", "nothing_applies"),
                                    detail.get("process") or "nothing applies: no label to "
                                    "check the answer against and no rubric score"))
        return reward, detail

    async def _one(self, index: int, prompt: Any, completion: Any, truth: Any,
                   skill_id: Any, task_id: Any = None, given: Any = None,
                   ) -> tuple[float | None, dict[str, Any]]:
        text = _text(completion)
        outcome: float | None = None
        detail: dict[str, Any] = {}
        if given is not None:  # the environment's own outcome: no answer to check
            outcome = float(given)
            detail.update(outcome=outcome, reason="given")
        elif truth is not None:
            model = self.verifier if self.semantic else None
            scored = await score_answer_semantic(text, str(truth), model, question=_text(prompt),
                                                 tolerance=self.tolerance) if model else \
                score_answer(text, str(truth), tolerance=self.tolerance)
            outcome = scored.score
            detail.update(outcome=scored.score, answer=scored.answer, reason=scored.reason)
        trial = None if isinstance(completion, str) else \
            trial_from_completion(prompt, completion, f"completion-{index}")
        if trial is not None and outcome is not None:  # the endpoint item's outcome
            trial = trial.model_copy(update={"outcome": "pass" if outcome >= 1 else "fail"})
        satisfaction = await self._process(index, prompt, completion, skill_id, detail, trial,
                                           task_id)
        flags = flow_of(trial).flags if trial is not None else ()
        if flags:
            detail["rigging"] = rigging_text(flags)
        if (outcome is None and satisfaction is None) or \
                detail.get("process_code") == "no_checklist":  # never half a reward
            return None, detail
        reward = (outcome or 0.0) + self.process_weight * (satisfaction or 0.0)
        return reward - (self.rigging_penalty if flags else 0.0), detail

    async def _process(self, index: int, prompt: Any, completion: Any, skill_id: Any,
                       detail: dict[str, Any], trial: Trial | None = None,
                       task_id: Any = None) -> float | None:
        if self.verifier is None or (self.bank is None and self.rubric != "checklist"):
            return None
        skill = self.bank.get(str(skill_id or self.default_skill or "")) \
            if self.bank is not None and self.rubric != "checklist" else None
        if self.rubric != "checklist" and (skill is None or skill.rubric is None):
            detail.update(process="no skill with a rubric", process_code="no_skill")
            return None
        checklist = self.checklists.get(str(task_id or "")) if self.rubric != "skill" else None
        if self.rubric != "skill" and checklist is None:
            detail.update(process=f"no frozen checklist for task {task_id!r}",
                          process_code="no_checklist")
            return None
        trial = trial or trial_from_completion(prompt, completion, f"completion-{index}")
        verdict = await verify_trial(trial, skill, self.verifier, _text(prompt),
                                     checklist=checklist, rubric=self.rubric)
        if not isinstance(verdict, TrialVerdict):
            why = getattr(verdict, "reason", None) or "its answer waits for a batch (--batch)"
            detail.update(process=f"the turn verifier failed: {' '.join(str(why).split())}",
                          process_code="verifier_failed")
            return None
        criteria = criteria_of(skill, checklist, self.rubric)
        satisfaction = rubric_satisfaction(verdict, criteria)
        detail.update(satisfaction=satisfaction, criteria=criteria, rubric=self.rubric)
        detail.update({k: v for k, v in (("checklist_hash", verdict.checklist_hash),
                                          ("skill_hash", verdict.skill_hash)) if v})
        failed = [v for v in verdict.criteria if v.status == "failed"]
        if satisfaction is None and failed:  # e.g. its answer named criteria of other ids
            detail.update(process=f"the turn verifier gave no usable verdict for {len(failed)} "
                          f"of {len(verdict.criteria)} criteria ({failed[0].criterion_id}: "
                          f"{failed[0].rationale})", process_code="verifier_failed")
        elif satisfaction is None:
            detail.update(process="the verifier found no rubric criterion applicable",
                          process_code="no_applicable_criterion")
        detail["verdict"] = verdict
        return satisfaction


UNSCORED_CODES = ("unreadable_completion", "reward_error", "nothing_applies", "no_skill",
                  "no_checklist", "verifier_failed", "no_applicable_criterion")
"""Why a sample got no reward (``detail["unscored_code"]``): its completion could not be
read; computing it failed; it has neither a label nor a rubric; no skill with a rubric
applies (or retrieval scored below its floor); its task has no frozen checklist; the turn
verifier's call failed or is waiting for a batch; the verifier found no criterion
applicable."""


def _unscored(code: str, reason: str) -> dict[str, Any]:
    return {"unscored_code": code, "unscored": reason}


@dataclass(frozen=True)
class UnscoredPolicy:
    """What a protocol that cannot carry null sends for a sample that could not be scored:
    ``null`` (send null; the default), or ``fallback:X`` (send ``X``, a number the trainer
    chose; the sample's ``unscored`` reason is sent beside it)."""

    fallback: float | None = None

    @classmethod
    def parse(cls, text: str) -> UnscoredPolicy:
        """``null`` or ``fallback:X``.

        >>> UnscoredPolicy.parse("fallback:-1").fallback, UnscoredPolicy.parse("null")
        (-1.0, UnscoredPolicy(fallback=None))
        """
        mode, _, value = text.strip().partition(":")
        if mode == "null" and not value:
            return cls()
        try:
            number = float(value) if mode == "fallback" else math.nan
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ConfigError(f"unscored policy {text!r}: use 'null' or 'fallback:<number>'")
        return cls(number)

    def apply(self, reward: float | None) -> float | None:
        """The reward as sent: the fallback in place of None, when one is set."""
        return self.fallback if reward is None else reward

    def __str__(self) -> str:
        return "null" if self.fallback is None else f"fallback:{self.fallback:g}"


class AsyncSkillRubricReward(SkillRubricReward):
    """The same reward as an ``async`` callable (TRL runs async reward functions together)."""

    async def __call__(  # type: ignore[override]
            self, prompts: list[Any], completions: list[Any],
            **kwargs: Any) -> list[float | None]:
        future = _LOOP.submit(self.score_all(prompts, completions, **kwargs))
        return await asyncio.wrap_future(future)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(m.get("content") or "") for m in value if isinstance(m, dict))
    return "" if value is None else str(value)


def compute_score(data_source: str, solution_str: str, ground_truth: str,
                  extra_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """verl's custom reward function: ``{"score": outcome [+ λ·S], "outcome", ...}``.

    Configure with ``custom_reward_function.path`` = this module's file and ``.name`` =
    ``compute_score`` (per sample) or ``compute_score_batch`` (verl's ``batch`` reward
    manager). ``extra_info["outcome"]``, when set, is the environment's own outcome (used
    instead of checking the answer). The process part is added when ``extra_info`` names a
    ``skill_id`` and ``AGENTCREDIT_BANK`` and ``AGENTCREDIT_VERIFIER_MODEL`` are set (with
    ``AGENTCREDIT_RUBRIC=checklist`` or ``both``: ``extra_info`` names a ``task_id`` whose
    frozen checklist is in ``AGENTCREDIT_CHECKLISTS``, a folder)
    (``AGENTCREDIT_PROCESS_WEIGHT``, default 0.5; ``AGENTCREDIT_BASE_URL``,
    ``AGENTCREDIT_CACHE``; ``AGENTCREDIT_RIGGING_PENALTY``; the endpoint settings of
    ``EndpointSettings.from_environment``: ``AGENTCREDIT_TIMEOUT``, ``_MAX_TOKENS``,
    ``_STRUCTURED``, ``_CONTEXT_TOKENS``, ``_CONCURRENCY``). The bank, the client and its
    cache are built once per process. verl needs a number for every sample: a sample that
    cannot be scored raises a ConfigError naming it, unless ``AGENTCREDIT_UNSCORED`` is
    ``fallback:<value>`` (that value is sent, with ``unscored_code`` and ``unscored``).
    """
    [result] = compute_score_batch([data_source], [solution_str], [ground_truth],
                                   [extra_info])
    return result


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str],
                        ground_truths: Sequence[str],
                        extra_infos: Sequence[dict[str, Any] | None] | None = None,
                        **_: Any) -> list[dict[str, Any]]:
    """verl's batch reward function (``reward_model.reward_manager=batch``): every sample
    of the batch scored concurrently (bounded by the client's limits), one dict each."""
    extras = [e or {} for e in (extra_infos or [None] * len(solution_strs))]
    reward = verl_reward()
    scores = reward([e.get("prompt", "") for e in extras], list(solution_strs),
                    ground_truth=list(ground_truths),
                    skill_id=[e.get("skill_id") for e in extras],
                    task_id=[e.get("task_id") for e in extras],
                    outcome=[e.get("outcome") for e in extras])
    details = reward.last_details or [{} for _ in scores]
    policy = UnscoredPolicy.parse(os.environ.get("AGENTCREDIT_UNSCORED", "null"))
    for n, (score, detail) in enumerate(zip(scores, details, strict=True)):
        if score is None and policy.fallback is None:
            raise ConfigError(
                f"sample {n} could not be scored ({detail.get('unscored_code')}: "
                f"{detail.get('unscored')}) and verl needs a number: set "
                "AGENTCREDIT_UNSCORED=fallback:<value> to send that value for such samples "
                "(each result's 'unscored' says why)")
    return [{"score": float(policy.apply(score)),  # type: ignore[arg-type]
             "data_source": source,
             **{k: v for k, v in detail.items() if isinstance(v, (int, float, str))}}
            for score, source, detail in zip(scores, data_sources, details, strict=True)]


def verl_reward() -> SkillRubricReward:
    """The reward the environment configures, built once per process and settings."""
    model = os.environ.get("AGENTCREDIT_VERIFIER_MODEL") or None
    base_url = env_value("AGENTCREDIT_BASE_URL", None, "url")
    where = base_url or (environment_base_url(model) if model else None)
    return shared_reward(os.environ.get("AGENTCREDIT_BANK") or None, model,
                         process_weight=env_value("AGENTCREDIT_PROCESS_WEIGHT", 0.5),
                         base_url=base_url, cache=os.environ.get("AGENTCREDIT_CACHE") or None,
                         rigging_penalty=env_value("AGENTCREDIT_RIGGING_PENALTY", 0.0, low=0),
                         endpoint=EndpointSettings.from_environment(where),
                         checklists=os.environ.get("AGENTCREDIT_CHECKLISTS") or None,
                         rubric=os.environ.get("AGENTCREDIT_RUBRIC") or "skill")


_SHARED: dict[tuple[Any, ...], SkillRubricReward] = {}
_SHARED_LOCK = threading.Lock()


def shared_reward(bank: str | Path | None, model: str | None, *, process_weight: float = 0.5,
                  base_url: str | None = None, cache: str | Path | None = None,
                  rigging_penalty: float = 0.0, endpoint: EndpointSettings | None = None,
                  checklists: str | Path | None = None, rubric: str = "skill",
                  ) -> SkillRubricReward:
    """One reward per (bank content, checklists, model, settings) in this process: the bank
    and the checklists are loaded and verified, and the verifier client and its cache
    opened, the first time only (``endpoint``: timeout, answer tokens, structured form,
    window, concurrency)."""
    if rubric not in RUBRICS:
        raise ConfigError(f"AGENTCREDIT_RUBRIC={rubric!r}: use one of {', '.join(RUBRICS)}")
    if not model or (not bank and rubric != "checklist"):
        return SkillRubricReward()
    if rubric != "skill" and not checklists:
        raise ConfigError(f"rubric {rubric!r} needs the frozen checklists: set "
                          "AGENTCREDIT_CHECKLISTS to their folder")
    endpoint = endpoint or EndpointSettings()
    loaded = _bank(str(Path(bank).resolve()), _stamp(Path(bank))) if bank else None
    frozen = _checklists(str(Path(checklists).resolve())) if checklists else {}
    key = (loaded.hash if loaded else None, tuple(sorted((t, c.hash) for t, c in
                                                         frozen.items())), rubric,
           model, process_weight, base_url, str(cache or ""), rigging_penalty,
           tuple(sorted(endpoint.record().items())))
    with _SHARED_LOCK:
        if key not in _SHARED:
            from agentcredit.llm.spec import ModelSpec

            client = ModelSpec(model, base_url=base_url, endpoint=endpoint,
                               cache=Path(cache) if cache else None).client()
            _SHARED[key] = SkillRubricReward(bank=loaded, verifier=client,
                                             process_weight=process_weight,
                                             rigging_penalty=rigging_penalty,
                                             checklists=frozen,
                                             rubric=rubric)
        return _SHARED[key]


def _stamp(bank_dir: Path) -> tuple[int, int]:
    stat = (bank_dir / "bank.json").stat()
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _bank(path: str, stamp: tuple[int, int]) -> SkillBank:
    """The bank in ``path`` as of ``stamp`` (a changed bank.json is loaded again)."""
    from agentcredit.skills.bank import load_bank

    return load_bank(Path(path))


def _checklists(folder: str) -> dict[str, Checklist]:
    """The frozen checklists of ``folder`` by task id (a missing folder is a ConfigError)."""
    if not Path(folder).is_dir():
        raise ConfigError(f"AGENTCREDIT_CHECKLISTS: {folder} is not a folder of frozen "
                          "checklists (agentcredit checklists build writes one)")
    return _frozen(folder, Path(folder).stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _frozen(folder: str, stamp: int) -> dict[str, Checklist]:
    """The checklists of ``folder`` as of ``stamp`` (a folder changed is read again)."""
    from agentcredit.checklists.freeze import load_checklists

    return load_checklists(folder)


def reset_shared() -> None:
    """Forget the shared rewards and banks (tests; a trainer never needs it)."""
    with _SHARED_LOCK:
        _SHARED.clear()
    _bank.cache_clear()
    _frozen.cache_clear()


def turn_advantages(verdicts: Sequence[TrialVerdict],
                    rubrics: Sequence[Sequence[RubricCriterion]],
                    outcomes: Sequence[float | None], groups: Sequence[str], *,
                    process_weight: float = 1.0, normalize: bool = False) -> list[np.ndarray]:
    """Per-turn combined advantages, one array per trajectory (its real turns only)."""
    items = [Scored(verdict=v, rubric=tuple(r), outcome=o, group=g)
             for v, r, o, g in zip(verdicts, rubrics, outcomes, groups, strict=True)]
    if not items:
        return []
    result = advantages_of(items, process_weight=process_weight, normalize=normalize)
    return [result.combined[i, :len(v.turn_steps)].copy() for i, v in enumerate(verdicts)]
