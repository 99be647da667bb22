"""The GCPC job as one library call: checklists -> judging -> fusion -> scores -> report.

:func:`score` (sync) and :func:`score_async` do everything ``agentcredit run`` does and
write the same files into ``out``: ``checklists/``, ``run.sqlite``, ``scores.csv`` (or
``.jsonl``/``.parquet``), ``judgments.jsonl``, ``summary.json`` and ``report.html``. The
command line only parses options, calls :func:`score` and prints its :class:`RunResult`.
"""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

from agentcredit.analysis.agreement import evidence_kinds
from agentcredit.analysis.analyze import analyze_store
from agentcredit.checklists.build import BuildReport, build_checklists
from agentcredit.checklists.freeze import load_checklists
from agentcredit.checklists.rules import Rules, load_rules
from agentcredit.checklists.synthesize import PROMPT_VERSION as SYNTH_PROMPT_VERSION
from agentcredit.errors import ConfigError, NothingToScore
from agentcredit.evidence.quotes import EVIDENCE_MODES
from agentcredit.formats import TrialStream, load
from agentcredit.judging.panel import JudgePanel
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.llm.client import ModelClient
from agentcredit.llm.endpoint import EndpointInfo
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for, concurrency_of
from agentcredit.report.build import write_report
from agentcredit.runs.judging import JudgeOptions, JudgeSummary, judge_trials
from agentcredit.runs.lock import RunLock
from agentcredit.runs.shard import Shard, check_shard
from agentcredit.runs.status import RunStatus
from agentcredit.schema import Checklist, ReadError, Task, Trial
from agentcredit.store.exports import write_rows
from agentcredit.store.run_store import RunStore
from agentcredit.store.scores import SCORE_COLUMNS, ScoreTotals, iter_scores

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as each checklist or trial finishes."""
NO_INSPECT_SCORE = "no sample has a score from --inspect-scorer"


@dataclass
class RunResult:
    """What one run did and where it wrote it.

    Attributes:
        out: The run directory. ``scores_path``, ``report_path`` (None for ``judge_run``),
            ``store_path`` and ``cache_path``: the files in it.
        tasks: Tasks read. ``trials``: trials read. ``load_errors``: what could not be read.
        checklists: The checklists built, reused and rejected (with reasons).
        judged: The trials judged, skipped and failed.
        summary: What ``summary.json`` holds (``partial_credit``, counts, provenance).
        usage: Tokens, calls and cost of the model (None without one); ``judge_usage``: per
            judge of a panel. ``model``: its name. ``elapsed``: seconds.
        batch: Requests were queued for a batch. ``errors``: failed calls by kind.
    """

    out: Path
    tasks: int
    trials: int
    load_errors: list[ReadError]
    checklists: BuildReport
    judged: JudgeSummary
    summary: dict[str, Any]
    scores_path: Path
    report_path: Path | None
    store_path: Path
    usage: dict[str, Any] | None
    model: str | None
    elapsed: float
    stale_lock: dict[str, object] | None = None
    cache_path: Path | None = None
    batch: bool = False
    errors: dict[str, int] = field(default_factory=dict)
    judge_usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each judge's own usage when a panel judged (``judges``, ``samples``)."""

    @property
    def queued(self) -> bool:
        """Whether requests were queued for a batch (a later run finishes the work)."""
        return bool(self.checklists.deferred or self.judged.deferred)

    @property
    def failures(self) -> list[tuple[str, str]]:
        """(unit, reason) of every unit whose model call failed (retried on the next run)."""
        rejected = [(task, r.reason) for task, r in self.checklists.rejected.items()
                    if r.reason.startswith("model call failed")]
        return [*rejected, *self.judged.failed]


class JudgeRunOptions(TypedDict, total=False):
    """The keyword options :func:`judge_run` passes on to :func:`judge_run_async`."""

    tasks: Path | str | None
    per_item: bool
    holistic: bool
    generic: bool
    seed: int
    budget_tokens: int
    evidence: str
    progress: Progress | None
    workers: int
    rules: Path | str | None


class TrialSelection(TypedDict, total=False):
    """Which trials a run reads: ``inspect_scorer`` (an Inspect log's samples scored by
    that scorer) and ``shard`` (``K/N``: only the trials whose id hashes to shard K of N, so
    that N machines with one command cover them once; ``agentcredit merge`` joins the N run
    folders, and a folder resumes only as its shard)."""

    inspect_scorer: str | None
    shard: str | Shard | None


class ScoreOptions(TypedDict, total=False):
    """The keyword options :func:`score` passes on to :func:`score_async`."""

    rules: Path | str | None
    per_item: bool
    holistic: bool
    generic: bool
    seed: int
    budget_tokens: int
    fmt: str
    evidence: str
    inspect_scorer: str | None
    progress: Progress | None
    workers: int
    shard: str | Shard | None


def score(tasks: Path | str, trials: Path | str, out: Path | str, *,
          model: ModelLike | None = None, **options: Unpack[ScoreOptions]) -> RunResult:
    """Score the trials of ``trials`` against the tasks of ``tasks`` into ``out``.

    The synchronous wrapper of ``score_async`` (same arguments). With no model, the
    checklists are derived from the verifiers and items are judged from per-check verifier
    results only.

    Args:
        tasks: A folder of tasks (Harbor, Terminal-Bench, SWE-bench, Inspect logs).
        trials: A folder of the agents' trials (jobs) in any format ``agentcredit.load`` reads.
        out: The run directory (created; an earlier run there is resumed).
        model: ``provider/model``, a ``ModelSpec`` or a client; None: no LLM is used.
        **options: ``rules`` (an evidence-rules YAML), ``per_item`` (one call per item),
            ``holistic`` (also a 0-10 holistic score), ``generic`` (an untailored checklist
            judge, for the ablation), ``seed`` (0), ``budget_tokens`` (24,000: the judge's
            view of a trajectory), ``fmt`` (``csv`` or ``jsonl`` scores), ``evidence``
            (``outputs``, what counts as evidence), ``inspect_scorer`` (the Inspect score to
            read as the outcome), ``progress`` (a callback object) and ``workers`` (1).

    Examples:
        >>> import tempfile, agentcredit
        >>> out = Path(tempfile.mkdtemp()) / "run"
        >>> result = agentcredit.score("examples/tasks", "examples/jobs", out)
        >>> result.trials, sorted(p.name for p in out.iterdir() if "sqlite-" not in p.name)[1:]
        (8, ['judgments.jsonl', 'report.html', 'run.sqlite', 'scores.csv', 'summary.json'])
        >>> round(result.summary["partial_credit"], 3) == round(json.loads(
        ...     (out / "summary.json").read_text())["partial_credit"], 3)
        True
    """
    return asyncio.run(score_async(tasks, trials, out, model=model, **options))


async def score_async(
    tasks: Path | str, trials: Path | str, out: Path | str, *,
    model: ModelLike | None = None, rules: Path | str | None = None, per_item: bool = False,
    holistic: bool = False, generic: bool = False, seed: int = 0, budget_tokens: int = 24_000,
    fmt: str = "csv", evidence: str = "outputs", progress: Progress | None = None,
    workers: int = 1, **selection: Unpack[TrialSelection],
) -> RunResult:
    """Checklists -> judging -> fusion -> scores and the report, resumably, in ``out``.

    ``model``: a ``provider/model`` name, a :class:`~agentcredit.llm.ModelSpec` (base URL,
    cache, endpoint settings, limits, ``batch``, a panel's ``judges`` and ``samples``) or a
    client; its cache defaults to ``out/responses.sqlite``. A ``progress`` that is (or has
    as ``status``) a ``RunStatus`` learns the client. ``workers``: judging processes (more
    than one needs a script guarded by ``if __name__ == "__main__"``). ``selection``: see
    :class:`TrialSelection`. Interrupted, it keeps what finished; ``summary.json`` says so.

    Raises ConfigError for an option that cannot work (a judging mode without a model, a bad
    evidence mode or shard, the run folder in use), NothingToScore when nothing in the
    inputs can be scored, AgentCreditError for an edited checklist or an unusable store.
    """
    out, part = Path(out), Shard.parse(selection.get("shard"))
    check_options(model, evidence, holistic=holistic, generic=generic, per_item=per_item)
    with RunLock(out) as lock:
        start = time.perf_counter()
        client = client_for(model, default_cache=out / "responses.sqlite")
        progress = _watched(progress, client)
        inspect_scorer = selection.get("inspect_scorer")
        task_list, task_errors = _load_tasks(Path(tasks), inspect_scorer)
        rule_set = load_rules(rules)
        with summary_if_interrupted(out, fmt):
            report, checklists = await _checklists(task_list, out / "checklists", rule_set,
                                                   client, concurrency_of(model), progress)
        store, meta = RunStore(out), {"command": "run", "tasks": str(tasks), "trials": str(
            trials), "synthesis_prompt_version": SYNTH_PROMPT_VERSION if client else None}
        meta["shard"] = check_shard(store, part)

        def provenance(skipped: list[ReadError]) -> None:
            stamp_meta(store, {**meta, **_judge_meta(
                client, rule_set, seed=seed, holistic=holistic, per_item=per_item,
                budget_tokens=budget_tokens, evidence=evidence, skipped=skipped)})

        provenance(task_errors)
        options = replace(_judging(client, rule_set, model, store), seed=seed,
                          per_item=per_item, holistic=holistic, budget_tokens=budget_tokens,
                          generic=generic, evidence=evidence, workers=workers)
        trial_stream = _trial_stream(store, Path(trials), checklists, options, inspect_scorer)
        with summary_if_interrupted(out, fmt):  # all checklists queued: no trial is read
            judged = await _judge(store, trial_stream, checklists, task_list, options,
                                  progress, close=client is not model,
                                  read=not (report.deferred and not checklists), shard=part)
        _no_inspect_score(errors := [*task_errors, *trial_stream.result.errors])
        provenance(errors)  # the report waits until no request waits for a batch
        path, summary, report_path = _outputs(store, out, fmt, seed=seed, report=not (
            report.deferred or judged.deferred))
        return RunResult(
            out=out, tasks=len(task_list), trials=judged.trials, load_errors=errors,
            checklists=report, judged=judged, summary=summary, scores_path=path,
            report_path=report_path, store_path=store.path, stale_lock=lock.stale,
            elapsed=time.perf_counter() - start, **_client_fields(client, options.panel))


async def _checklists(tasks: list[Task], out: Path, rules: Rules, client: ModelClient | None,
                      concurrency: int, progress: Progress | None,
                      ) -> tuple[BuildReport, dict[str, Checklist]]:
    """Build (or keep) the tasks' checklists in ``out``, then load every frozen one."""
    report = await build_checklists(tasks, out, rules, model=client, concurrency=concurrency,
                                    progress=_stepper(progress, "checklists", len(tasks)))
    return report, load_checklists(out) if out.exists() else {}


def _panel(client: ModelClient | None, model: ModelLike | None, store: RunStore
           ) -> JudgePanel | None:
    """The judge panel a ModelSpec's ``judges`` and ``samples`` ask for (None: the run's
    model alone). Each judge gets the spec's cache, endpoint settings and limits (its base
    URL only when of the same provider); a judge named like the run's model is its client."""
    if not isinstance(model, ModelSpec) or client is None or \
            (not model.judges and model.samples == 1):
        return None
    provider = model.model.partition("/")[0]
    clients = [client if name == client.model_id else client_for(replace(
        model, model=name, judges=(), samples=1,
        base_url=model.base_url if name.partition("/")[0] == provider else None),
        default_cache=store.path.parent / "responses.sqlite") for name in model.judges]
    panel = JudgePanel(tuple(c for c in clients if c is not None) or (client,), model.samples)
    stamp_meta(store, {"judge_panel": panel.name, "samples": panel.samples})
    return panel


def _panel_usage(panel: JudgePanel | None) -> dict[str, dict[str, Any]]:
    if panel is None or panel.single:
        return {}
    return {judge.model_id: judge.ledger.summary()  # type: ignore[attr-defined]
            for judge in panel.judges}


def _client_fields(client: ModelClient | None, panel: JudgePanel | None = None
                   ) -> dict[str, Any]:
    """What a result says of the client that made it: model, usage, cache file, and each
    judge's usage when a panel judged."""
    if client is None:
        return {"model": None, "usage": None, "cache_path": None}
    return {"model": client.model_id, "usage": client.ledger.summary(), "batch": client.defer,
            "cache_path": client.cache.path if client.cache is not None else None,
            "judge_usage": _panel_usage(panel)}


def client_provenance(client: ModelClient | None) -> dict[str, Any]:
    """What a run's provenance says of how its model was asked: the endpoint settings
    (timeout, answer budget, structured-output mode, window, concurrency), as any process
    of the run learned them (judging workers keep theirs in the cache)."""
    if client is None:
        return {}
    info = client.info if client.cache is None else \
        EndpointInfo.from_json(client.cache.get_endpoint(client.endpoint) or vars(client.info))
    return {"endpoint": {**client.settings.record(), "structured_used": info.structured,
                         "window": info.context_tokens, "window_source": info.context_source,
                         "answer_cap": info.answer_cap}}


def _judge_meta(client: ModelClient | None, rules: Rules, *, seed: int, holistic: bool,
                per_item: bool, budget_tokens: int, evidence: str,
                skipped: list[ReadError]) -> dict[str, Any]:
    """What a run's provenance says of how it judged (model, seed, rules, prompts) and of
    the inputs it could not read."""
    return {
        "model": client.model_id if client else None, "seed": seed, "rules": rules.ref(),
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "holistic_prompt_version": HOLISTIC_PROMPT_VERSION if holistic else None,
        "per_item": per_item, "budget_tokens": budget_tokens, "evidence": evidence,
        "evidence_rules": rules.evidence.model_dump(), "skipped_inputs": skipped_inputs(skipped),
        **client_provenance(client)}


def check_options(model: object, evidence: str, **asked: bool) -> None:
    """Options that only a model can honour are refused without one, not ignored."""
    if evidence not in EVIDENCE_MODES:
        raise ConfigError(f"--evidence must be one of {', '.join(EVIDENCE_MODES)}")
    if asked.get("batch_auto") and model is not None and \
            not isinstance(model, str | ModelSpec):
        raise ConfigError("--batch-auto needs a provider/model name or a ModelSpec")
    wanted = [f"--{name.replace('_', '-')}" for name, on in asked.items() if on]
    if model is None and wanted:
        raise ConfigError(f"{', '.join(wanted)} needs --model (they ask an LLM judge; without "
                          "a model only the verifier evidence is used)")


def _load_tasks(tasks: Path, inspect_scorer: str | None) -> tuple[list[Task], list[ReadError]]:
    """The tasks (few: read whole; the trials are streamed)."""
    found = load([tasks], inspect_scorer=inspect_scorer)
    _no_inspect_score(found.errors)
    return found.tasks, found.errors


def _no_inspect_score(errors: list[ReadError]) -> None:
    for error in errors:
        if error.reason.startswith(NO_INSPECT_SCORE):
            raise NothingToScore(error.reason, errors)


def judge_run(trials: Path | str, checklists: Path | str, out: Path | str, *,
              model: ModelLike | None = None, **options: Unpack[JudgeRunOptions]) -> RunResult:
    """Judge trials against frozen checklists into ``out`` (resumable); the synchronous
    wrapper of ``judge_run_async``. Writes the store, scores, judgments and summary
    (no report: ``agentcredit analyze`` makes one)."""
    return asyncio.run(judge_run_async(trials, checklists, out, model=model, **options))


async def judge_run_async(
    trials: Path | str, checklists: Path | str, out: Path | str, *,
    model: ModelLike | None = None, tasks: Path | str | None = None, per_item: bool = False,
    holistic: bool = False, generic: bool = False, seed: int = 0, budget_tokens: int = 24_000,
    evidence: str = "outputs", progress: Progress | None = None,
    workers: int = 1, rules: Path | str | None = None,
) -> RunResult:
    """Judging only, against checklists frozen earlier (see :func:`score_async`); ``rules``
    gives the evidence section (what a specific quote is)."""
    out = Path(out)
    check_options(model, evidence, holistic=holistic, generic=generic, per_item=per_item)
    with RunLock(out) as lock:
        start = time.perf_counter()
        client = client_for(model, default_cache=out / "responses.sqlite")
        progress = _watched(progress, client)
        frozen = load_checklists(Path(checklists))
        rule_set = load_rules(rules)
        task_result = load([Path(tasks)]) if tasks else None
        task_list = task_result.tasks if task_result else []
        task_errors = task_result.errors if task_result else []
        store = RunStore(out)

        def provenance(skipped: list[ReadError]) -> None:
            stamp_meta(store, {
                "command": "judge", "trials": str(trials), "checklists": str(checklists),
                **_judge_meta(client, rule_set, seed=seed, holistic=holistic,
                              per_item=per_item, budget_tokens=budget_tokens,
                              evidence=evidence, skipped=skipped)})

        provenance(task_errors)
        options = replace(_judging(client, rule_set, model, store), seed=seed,
                          per_item=per_item, holistic=holistic, budget_tokens=budget_tokens,
                          generic=generic, evidence=evidence, workers=workers)
        trial_stream = _trial_stream(store, Path(trials), frozen, options, None)
        with summary_if_interrupted(out, "csv"):
            judged = await _judge(store, trial_stream, frozen, task_list, options,
                                  progress, close=client is not model)
        errors = [*task_errors, *trial_stream.result.errors]
        provenance(errors)
        path, summary, _ = _outputs(store, out, "csv", seed=seed, report=False)
        return RunResult(
            out=out, tasks=len(task_list), trials=judged.trials, load_errors=errors,
            checklists=BuildReport(), judged=judged, summary=summary, scores_path=path,
            report_path=None, store_path=store.path,
            elapsed=time.perf_counter() - start, stale_lock=lock.stale,
            **_client_fields(client, options.panel))


def _judging(client: ModelClient | None, rules: Rules, model: ModelLike | None,
             store: RunStore) -> JudgeOptions:
    """What every judging pass takes from its client, rules and judge panel."""
    return JudgeOptions(model=client, concurrency=concurrency_of(model),
                        specificity=rules.evidence,
                        retry_failed=bool(client and client.retry_failed),
                        panel=_panel(client, model, store))


def _watched(progress: Progress | None, client: ModelClient | None) -> Progress | None:
    """``progress``, its status (itself or its ``status``) told the run's client."""
    status = progress if isinstance(progress, RunStatus) else getattr(progress, "status", None)
    if isinstance(status, RunStatus):
        status.client = client
    return progress


@contextmanager
def summary_if_interrupted(run_dir: Path, fmt: str) -> Iterator[None]:
    """An interrupt (KeyboardInterrupt, a cancelled task) inside the block leaves a partial
    ``summary.json`` (``"interrupted": true``) and scores of what finished, then goes on up.
    """
    try:
        yield
    except (KeyboardInterrupt, asyncio.CancelledError):
        _write_partial(run_dir, fmt)
        raise


def _write_partial(run_dir: Path, fmt: str) -> None:
    try:
        if (run_dir / "run.sqlite").exists():
            write_scores(RunStore(run_dir), run_dir, fmt, interrupted=True)
        else:
            (run_dir / "summary.json").write_text(json.dumps(
                {"interrupted": True, "trials": 0}, indent=2) + "\n")
    except Exception as exc:  # the interrupt is what the caller must see, not this
        warnings.warn(f"could not write a partial summary in {run_dir}: {exc}", stacklevel=2)


def _stepper(progress: Progress | None, stage: str,
             total: int | TrialStream) -> Callable[[str], None]:
    """``progress`` told of each unit done; for a stream still being read, the total is 0
    (unknown) until reading ends, then exact."""
    done = 0

    def step(_: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(stage, done, total if isinstance(total, int) else total.total or 0)

    if progress is not None and isinstance(total, int):
        progress(stage, 0, total)
    return step


def _trial_stream(store: RunStore, trials: Path, checklists: dict[str, Checklist],
                  options: JudgeOptions, inspect_scorer: str | None) -> TrialStream:
    """The trials to judge, read as they are needed; a trial folder this run finished with
    (every judgment this run asks for recorded against today's checklist, no open error)
    and unchanged since is not read again: a rerun reads only what changed."""
    sources = ["verifier", *(["llm"] if options.model else []),
               *(["generic"] if options.model and options.generic else [])]
    finished = store.finished_inputs(
        sources, {task: c.hash for task, c in checklists.items()},
        holistic=options.holistic and options.model is not None,
        failed_again=options.retry_failed)
    return TrialStream([trials], inspect_scorer=inspect_scorer, finished=finished.get)


async def _indexed(store: RunStore, trials: TrialStream, shard: Shard | None,
                   ) -> AsyncIterator[Trial]:
    """The stream's trials (of ``shard`` only), each one's folder and fingerprint recorded
    as it passes."""
    async for trial in trials:
        if shard is not None and not shard.takes(trial.id):
            continue
        where = trials.folder_of(trial)
        if where is not None:
            store.record_input(trial.id, *where)
        yield trial


async def _judge(store: RunStore, trials: TrialStream, checklists: dict[str, Checklist],
                 tasks: list[Task], options: JudgeOptions, progress: Progress | None, *,
                 close: bool, read: bool = True, shard: Shard | None = None) -> JudgeSummary:
    """Judge the stream's trials (``read`` false: none, the stream is left unread)."""
    try:
        if not read:
            return JudgeSummary()
        summary = await judge_trials(store, _indexed(store, trials, shard), checklists,
                                     {t.id: t for t in tasks}, options,
                                     progress=_stepper(progress, "judging", trials))
        summary.trials += trials.skipped
        summary.resumed += trials.skipped
        return summary
    finally:
        if close and options.model is not None:
            await options.model.aclose()
        for judge in options.panel.judges if options.panel else ():
            if judge is not options.model:
                await judge.aclose()  # type: ignore[attr-defined]


MAX_SKIPPED_SHOWN = 1000


def skipped_inputs(errors: list[ReadError]) -> list[dict[str, str]]:
    """The inputs a run could not read, and why, as its provenance records them (the first
    :data:`MAX_SKIPPED_SHOWN`; the console shows them all)."""
    return [{"path": e.path, "reason": e.reason} for e in errors[:MAX_SKIPPED_SHOWN]]


def stamp_meta(store: RunStore, values: dict[str, Any]) -> None:
    """Record a command's provenance in the store (``created_at`` kept from the first)."""
    existing = store.meta()
    first = {"created_at": datetime.now(UTC).isoformat(timespec="seconds")}
    store.set_meta({**({} if "created_at" in existing else first), **values,
                    "updated_at": datetime.now(UTC).isoformat(timespec="seconds")})


def _outputs(store: RunStore, out: Path, fmt: str, *, seed: int, report: bool,
             ) -> tuple[Path, dict[str, Any], Path | None]:
    """Scores, judgments, summary (and the analysis and report) from the store, unless the
    files there were made from a store in the same state (a rerun that changed nothing
    rewrites nothing)."""
    state = store.state([fmt, seed, report])
    path, report_path = out / f"scores.{fmt}", out / "report.html" if report else None
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        current = store.meta().get("outputs_state") == state and path.exists() and \
            (report_path is None or report_path.exists()) and not summary.get("interrupted")
    except (OSError, ValueError, AttributeError):
        current = False
    if not current:
        path, summary = write_scores(store, out, fmt)
        if report_path is not None:
            write_report(store, analyze_store(store, seed=seed), report_path)
        store.set_meta({"outputs_state": state})
    return path, summary, report_path


def _votes_by_item(store: RunStore) -> Callable[[str, str], list[dict[str, Any]]]:
    """A lookup of one item's panel votes, reading one trial's votes at a time."""
    held: dict[str, dict[str, list[dict[str, Any]]]] = {}

    def lookup(trial_id: str, item_id: str) -> list[dict[str, Any]]:
        if trial_id not in held:
            held.clear()
            mine: dict[str, list[dict[str, Any]]] = held.setdefault(trial_id, {})
            for _, item, judge, sample, judgment in store.votes(trial_id):
                mine.setdefault(item, []).append({
                    "judge": judge, "sample": sample, "label": judgment.label,
                    "reason": judgment.reason, "rationale": judgment.rationale,
                    "evidence": [c.model_dump(mode="json") for c in judgment.evidence]})
        return held[trial_id].get(item_id, [])

    return lookup


def write_scores(store: RunStore, run_dir: Path, fmt: str, *, interrupted: bool = False,
                 ) -> tuple[Path, dict[str, Any]]:
    """Write ``scores.<fmt>``, ``judgments.jsonl`` and ``summary.json`` from the store
    (``interrupted``: the run stopped before it finished; the summary says so)."""
    totals = ScoreTotals()

    def rows() -> Iterator[dict[str, Any]]:
        for score in iter_scores(store):  # written and summed as they come, never held
            totals.add(score)
            yield score.row()

    path = write_rows(rows(), run_dir / f"scores.{fmt}", fmt, SCORE_COLUMNS)
    rigging = {t["trial_id"]: [f.model_dump() for f in t["rigging"]]
               for t in store.iter_trials() if t["rigging"]}
    votes = _votes_by_item(store) if store.meta().get("judge_panel") else None
    judgments = ({"trial_id": t, "source": j.source, **j.model_dump(mode="json"),
                  **({"rigging": rigging[t]} if t in rigging else {}),
                  **({"votes": votes(t, j.item_id)} if votes and j.source == "llm" else {})}
                 for t, j in store.iter_judgments())
    write_rows(judgments, run_dir / "judgments.jsonl", "jsonl")
    summary = totals.result()
    summary["errors"] = {"open": len(store.errors()), "resolved": len(store.resolved_errors())}
    summary["evidence_kinds"] = evidence_kinds(j for _, j in store.iter_judgments("llm"))
    if interrupted:
        summary["interrupted"] = True
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return path, summary
