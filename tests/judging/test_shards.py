"""Worker processes that judge whole trials: the same run as one process records, every
call counted in this process's usage, a worker killed mid-run reported and resumed without
judging anything twice, and a run that goes on here when no worker can start."""

from __future__ import annotations

import asyncio
import logging
import sys
import types
from pathlib import Path

import pytest

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.errors import WorkerError
from agentcredit.formats import load
from agentcredit.llm import ModelClient, ResponseCache, make_provider, register_script
from agentcredit.llm.spec import ClientRecipe, part, recipe_of
from agentcredit.runs import shards
from agentcredit.runs.judging import JudgeOptions, JudgeSummary, judge_trials
from agentcredit.schema import Checklist, Trial
from agentcredit.store.run_store import RunStore
from tests.judging import scripted_judge, shard_scripts
from tests.judging.synthetic import write_task, write_trials

TRIALS = 48


@pytest.fixture
def only_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process judges nothing while the workers start (so that they judge every
    trial, however fast this machine starts them)."""
    monkeypatch.setattr(shards, "HERE_FIRST", 0)


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[list[Trial], dict[str, Checklist], dict[str, object]]:
    write_task(tmp_path / "tasks")
    write_trials(tmp_path / "trials", TRIALS, steps=12)
    (task,) = load([tmp_path / "tasks"]).tasks
    checklist = derive_checklist(task, load_rules())
    assert isinstance(checklist, Checklist)
    return load([tmp_path / "trials"]).trials, {task.id: checklist}, {task.id: task}


def _run(run: Path, inputs: tuple[list[Trial], dict[str, Checklist], dict[str, object]],
         script: str, workers: int, concurrency: int = 4
         ) -> tuple[JudgeSummary, ModelClient, RunStore]:
    trials, checklists, tasks = inputs
    store = RunStore(run)
    model = ModelClient(make_provider(f"scripted/{script}"),
                        cache=ResponseCache(run / "responses.sqlite"))
    summary = asyncio.run(judge_trials(store, trials, checklists, tasks,  # type: ignore[arg-type]
                                       JudgeOptions(model=model, concurrency=concurrency,
                                                    workers=workers)))
    return summary, model, store


def _judgments(store: RunStore) -> list[tuple[object, ...]]:
    return sorted(store.db.execute(
        "SELECT trial_id, source, item_id, label, rationale, evidence, checklist_hash, model, "
        "prompt_version FROM judgments"))


def test_workers_judge_whole_trials_and_record_what_one_process_records(
        tmp_path: Path, inputs: tuple, only_workers: None) -> None:
    register_script("shards-answer", shard_scripts.answer)
    _, one_model, one_store = _run(tmp_path / "one", inputs, "shards-answer", 1)
    two, two_model, two_store = _run(tmp_path / "two", inputs, "shards-answer", 2)
    assert recipe_of(two_model) is not None
    assert two_model.provider.calls == 0  # type: ignore[attr-defined]  # the workers asked
    assert (two.trials, two.judged, two.failed, two.deferred) == (TRIALS, TRIALS, [], 0)
    assert _judgments(two_store) == _judgments(one_store)
    assert len(_judgments(two_store)) == TRIALS * 20  # ten items from the verifier and judge
    # every worker's calls are in this client's usage, as one process's are
    assert two_model.ledger.summary() == one_model.ledger.summary()
    assert two_model.ledger.calls == TRIALS


def test_the_workers_calls_count_here_as_their_trials_finish(
        tmp_path: Path, inputs: tuple, only_workers: None) -> None:
    """The live status line reads this client's counts: a worker's calls reach them with
    its finished trials, not when the pass ends (and are counted once)."""
    register_script("shards-answer", shard_scripts.answer)
    trials, checklists, tasks = inputs
    model = ModelClient(make_provider("scripted/shards-answer"),
                        cache=ResponseCache(tmp_path / "run" / "responses.sqlite"))
    seen: list[int] = []
    summary = asyncio.run(judge_trials(
        RunStore(tmp_path / "run"), trials, checklists, tasks,  # type: ignore[arg-type]
        JudgeOptions(model=model, concurrency=4, workers=2),
        progress=lambda trial_id: seen.append(model.ledger.calls)))
    assert summary.judged == TRIALS and len(seen) == TRIALS
    assert model.provider.calls == 0  # type: ignore[attr-defined]  # the workers asked
    assert seen[0] >= 1  # the first finished trial came with its call
    assert model.ledger.calls == TRIALS and model.in_flight == 0


def test_this_process_judges_while_the_workers_start(tmp_path: Path, inputs: tuple) -> None:
    register_script("shards-answer", shard_scripts.answer)
    summary, model, store = _run(tmp_path / "run", inputs, "shards-answer", 2)
    assert summary.judged == TRIALS and len(store.done_set("llm")) == TRIALS
    assert model.ledger.calls == TRIALS  # here and there, each trial asked once
    assert model.provider.calls > 0  # type: ignore[attr-defined]


def test_no_more_workers_start_than_requests_may_be_in_flight(
        tmp_path: Path, inputs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    register_script("shards-answer", shard_scripts.answer)
    shares: list[int] = []
    real = shards.judge_in_shards

    async def counted(*args: object, **kwargs: object) -> JudgeSummary:
        shares.append(args[4].workers)  # type: ignore[attr-defined]
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("agentcredit.runs.judging.judge_in_shards", counted)
    summary, model, _ = _run(tmp_path / "one", inputs, "shards-answer", 8, concurrency=1)
    assert summary.judged == TRIALS and shares == []  # one request in flight: judged here
    assert model.provider.calls == TRIALS  # type: ignore[attr-defined]
    summary, _, _ = _run(tmp_path / "two", inputs, "shards-answer", 8, concurrency=2)
    assert summary.judged == TRIALS and shares == [2]


def test_a_worker_killed_mid_run_is_reported_and_the_rerun_judges_each_trial_once(
        tmp_path: Path, inputs: tuple, only_workers: None) -> None:
    register_script("shards-killing", shard_scripts.killing)
    shard_scripts.KILL_FLAG.touch()
    try:
        with pytest.raises(WorkerError, match=r"stopped \(exit code -9\).*rerun resumes"):
            _run(tmp_path / "run", inputs, "shards-killing", 2)
    finally:
        shard_scripts.KILL_FLAG.unlink(missing_ok=True)
    done_before = RunStore(tmp_path / "run").done_set("llm")
    assert len(done_before) < TRIALS
    summary, model, store = _run(tmp_path / "run", inputs, "shards-killing", 2)
    assert summary.judged + summary.resumed == TRIALS and not summary.failed
    assert len(store.done_set("llm")) == TRIALS
    # the rerun asked for exactly the trials the first run had not recorded (a killed
    # worker's calls in flight were answered but not recorded: those come from the cache)
    assert model.ledger.calls + model.ledger.cache_hits == TRIALS - len(done_before)
    assert len(_judgments(store)) == TRIALS * 20


def test_when_no_worker_can_start_this_process_judges_every_trial(
        tmp_path: Path, inputs: tuple, only_workers: None,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # a function of a module this process has and the workers cannot import: every worker
    # stops as it starts (as with a script that starts a run without a __main__ guard)
    ghost = types.ModuleType("agentcredit_ghost_scripts")

    def answer(messages: list[dict[str, object]], schema: dict[str, object] | None) -> str:
        return scripted_judge.answer(messages, schema)  # type: ignore[arg-type]

    answer.__module__ = ghost.__name__
    answer.__qualname__ = "answer"
    ghost.answer = answer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, ghost.__name__, ghost)
    register_script("shards-ghost", answer)
    with caplog.at_level(logging.WARNING, logger=shards.__name__):
        summary, model, store = _run(tmp_path / "run", inputs, "shards-ghost", 2)
    assert summary.judged == TRIALS and len(store.done_set("llm")) == TRIALS
    assert model.provider.calls == TRIALS  # type: ignore[attr-defined]
    warned = [r.message for r in caplog.records if "stopped as it started" in r.message]
    assert len(warned) == 1 and "__main__" in warned[0]


def test_queued_for_a_batch_by_the_workers(tmp_path: Path, inputs: tuple,
                                           only_workers: None) -> None:
    register_script("shards-answer", shard_scripts.answer)
    trials, checklists, tasks = inputs
    run = tmp_path / "run"
    model = ModelClient(make_provider("scripted/shards-answer"),
                        cache=ResponseCache(run / "responses.sqlite"), defer=True)
    summary = asyncio.run(judge_trials(RunStore(run), trials, checklists, tasks,  # type: ignore[arg-type]
                                       JudgeOptions(model=model, workers=2)))
    assert summary.deferred == TRIALS and summary.judged == 0
    assert model.cache is not None and model.cache.pending_count() == TRIALS


def test_a_recipe_shares_the_limits_out() -> None:
    register_script("shards-answer", shard_scripts.answer)
    client = ModelClient(make_provider("scripted/shards-answer"), rpm=100, tpm=9_001)
    recipe = recipe_of(client)
    assert isinstance(recipe, ClientRecipe)
    worker = recipe.client(2)
    assert worker.limiter_args == (50, 4_501) and worker.settings.concurrency == 4
    assert part(3, 4) == 1
    register_script("shards-list", ["{}"])  # answers consumed in order stay in one process
    assert recipe_of(ModelClient(make_provider("scripted/shards-list"))) is None
    register_script("shards-lambda", lambda m, s: "{}")
    assert recipe_of(ModelClient(make_provider("scripted/shards-lambda"))) is None
