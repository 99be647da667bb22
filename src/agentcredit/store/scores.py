"""Scores of a run: fusion and metrics applied to the stored judgments."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from agentcredit.schema import Checklist, ItemJudgment, rigging_text
from agentcredit.scoring.fusion import fuse
from agentcredit.scoring.metrics import score
from agentcredit.store.run_store import RunStore

SCORE_COLUMNS = (
    "trial_id", "task_id", "outcome", "partial_credit", "coverage", "perfect",
    "perfect_with_endpoint", "items", "yes", "no", "abstain", "unverified_evidence",
    "endpoint", "fusion", "judge", "holistic", "condition", "checks_passed", "checks_total",
    "checklist_hash", "rules", "synthesizer", "judge_model", "prompt_version", "seed",
    "not_judged", "rigging",
)
NOT_JUDGED = "not judged"
"""The ``judge`` column of a trial the run's model was asked to judge and did not: its
scores are left empty (never filled from the verifier evidence) and ``not_judged`` says why."""


@dataclass(frozen=True)
class TrialScore:
    """One row of scores.csv."""

    trial_id: str
    task_id: str | None
    outcome: str
    partial_credit: float | None
    coverage: float | None
    perfect: bool
    perfect_with_endpoint: bool
    items: int
    yes: int
    no: int
    abstain: int
    unverified_evidence: int
    endpoint: str | None
    fusion: str
    judge: str
    holistic: float | None
    condition: str | None
    checks_passed: int
    checks_total: int
    checklist_hash: str
    rules: str
    synthesizer: str
    judge_model: str | None
    prompt_version: str | None
    seed: int | None
    not_judged: str | None = None
    rigging: str = ""
    """The actions that rig the trial's measurement, ``kind@step; …`` (never raises a score)."""

    def row(self) -> dict[str, Any]:
        return asdict(self)


def score_trial(checklist: Checklist, judgments: list[ItemJudgment], outcome: str, *,
                propagate_pass: bool = True, endpoint: bool = True) -> tuple[Any, Any]:
    """(fused, metrics) for one trial; flags switch fusion parts off for ablations."""
    fused = fuse(checklist, judgments, outcome,  # type: ignore[arg-type]
                 propagate_pass=propagate_pass, endpoint=endpoint)
    return fused, score(fused.labels.values(), fused.endpoint)


@dataclass(frozen=True)
class StoredTrial:
    """A stored trial with its checklist and every judgment of it, ready to be scored."""

    row: dict[str, Any]
    checklist: Checklist
    source: str
    """The judgments scored: ``llm`` when the LLM judged it, else ``verifier`` (or the
    source asked for)."""
    judgments: dict[str, list[ItemJudgment]]
    """Every source's judgments of this trial (llm, verifier, generic)."""
    holistic: float | None
    statuses: list[str]

    @property
    def labels(self) -> list[ItemJudgment]:
        return self.judgments.get(self.source, [])


def scored_trials(store: RunStore, *, source: str | None = None,
                  include_unjudged: bool = False, by_id: bool = False,
                  ) -> Iterator[StoredTrial]:
    """Every stored trial that has its checklist, with what scoring it needs: the one read
    of the store that run scores, the report and the validity studies share. In a run with
    a model, a trial the model did not judge is left out (the studies never see verifier
    labels in its place) unless ``include_unjudged``. ``by_id``: in trial id order."""
    asked = source is None and store.meta().get("model") is not None
    checklists = store.checklists()
    for trial in store.iter_trials(by_id=by_id):  # one at a time: memory does not grow
        checklist = checklists.get(trial["checklist_hash"] or "")
        if checklist is None:
            continue
        judged = store.judgments_of(trial["trial_id"])
        if asked and "llm" not in judged and not include_unjudged:
            continue
        yield StoredTrial(row=trial, checklist=checklist,
                          source=source or ("llm" if "llm" in judged else "verifier"),
                          judgments=judged, holistic=store.holistic_score(trial["trial_id"]),
                          statuses=list(trial["checks"].values()))


def run_scores(store: RunStore, *, source: str | None = None) -> list[TrialScore]:
    """A score per stored trial, from the LLM judgments when present, else the verifier's."""
    return list(iter_scores(store, source=source))


def iter_scores(store: RunStore, *, source: str | None = None) -> Iterator[TrialScore]:
    """:func:`run_scores` one trial at a time."""
    asked = source is None and store.meta().get("model") is not None
    reasons = _open_reasons(store) if asked else {}
    for stored in scored_trials(store, source=source, include_unjudged=True):
        if asked and "llm" not in stored.judgments:
            yield _unjudged(stored.row, stored.checklist, stored.holistic, reasons.get(
                stored.row["trial_id"], "not judged yet (run again)"))
            continue
        trial, checklist, chosen, labels = stored.row, stored.checklist, stored.source, \
            stored.labels
        fused, metrics = score_trial(checklist, labels, trial["outcome"])
        model, prompt, seed = store.judged_model(trial["trial_id"], chosen)
        statuses = stored.statuses
        yield TrialScore(
            trial_id=trial["trial_id"], task_id=trial["task_id"], outcome=trial["outcome"],
            partial_credit=metrics.partial_credit, coverage=metrics.coverage,
            perfect=metrics.perfect, perfect_with_endpoint=metrics.perfect_with_endpoint,
            items=metrics.items, yes=metrics.yes, no=metrics.no, abstain=metrics.abstain,
            unverified_evidence=sum(1 for j in labels if j.reason == "unverified_evidence"),
            endpoint=fused.endpoint, fusion=fused.applied, judge=_judge_name(chosen, labels),
            holistic=stored.holistic,
            condition=trial["condition"],
            checks_passed=sum(1 for s in statuses if s == "passed"), checks_total=len(statuses),
            checklist_hash=checklist.hash,
            rules=f"{checklist.rules.id}@{checklist.rules.version}",
            synthesizer=checklist.synthesizer, judge_model=model, prompt_version=prompt,
            seed=seed, rigging=rigging_text(trial.get("rigging", ())))
    if asked:  # a task without a checklist: its trials' holistic scores (``--holistic``)
        for trial in store.iter_trials(without_checklist=True):
            holistic = store.holistic_score(trial["trial_id"])
            if holistic is not None:
                yield _unjudged(trial, None, holistic, reasons.get(
                    trial["trial_id"], f"no checklist for task {trial['task_id']!r}"))


def _judge_name(source: str, labels: list[ItemJudgment]) -> str:
    """Who decided the trial's labels: ``llm`` only when the model said yes or no to some
    item; ``outcome`` when it abstained on all of them (the score is the outcome's alone).

    >>> from agentcredit.schema import ItemJudgment
    >>> _judge_name("llm", [ItemJudgment(item_id="C1", label="abstain", source="llm")])
    'outcome'
    """
    if source == "llm" and all(j.label == "abstain" for j in labels):
        return "outcome"
    return source


def _open_reasons(store: RunStore) -> dict[str, str]:
    """The first open judge or holistic error of each trial."""
    reasons: dict[str, str] = {}
    for trial_id, stage, message in store.errors():
        if trial_id is not None and stage in ("judge", "generic"):
            reasons.setdefault(trial_id, message)
    return reasons


def _unjudged(trial: dict[str, Any], checklist: Checklist | None, holistic: float | None,
              reason: str) -> TrialScore:
    """The row of a trial the model did not judge (or that has no checklist to judge): no
    score, the holistic baseline when there is one, and why."""
    statuses = list(trial["checks"].values())
    return TrialScore(
        trial_id=trial["trial_id"], task_id=trial["task_id"], outcome=trial["outcome"],
        partial_credit=None, coverage=None, perfect=False, perfect_with_endpoint=False,
        items=len(checklist.items) if checklist else 0, yes=0, no=0, abstain=0,
        unverified_evidence=0, endpoint=None, fusion="none", judge=NOT_JUDGED,
        holistic=holistic, condition=trial["condition"],
        checks_passed=sum(1 for s in statuses if s == "passed"),
        checks_total=len(statuses), checklist_hash=checklist.hash if checklist else "",
        rules=f"{checklist.rules.id}@{checklist.rules.version}" if checklist else "",
        synthesizer=checklist.synthesizer if checklist else "", judge_model=None,
        prompt_version=None, seed=None, not_judged=reason,
        rigging=rigging_text(trial.get("rigging", ())))


class _Mean:
    """A mean of the defined values, folded (the sum taken in order, as ``sum`` does)."""

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total: float = 0
        self.n = 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.n += 1

    @property
    def value(self) -> float | None:
        return self.total / self.n if self.n else None


_MEANS = ("partial_credit", "coverage", "perfect", "perfect_with_endpoint")


class ScoreTotals:
    """What :func:`aggregate` says of a run's scores, folded one row at a time (the rows
    are never held: a run of any size is summed in constant memory, but for the ids of
    the trials flagged for rigging)."""

    def __init__(self) -> None:
        self.rows = self.judged = self.undefined = self.unverified = 0
        self.labels = {"yes": 0, "no": 0, "abstain": 0}
        self.means = {name: _Mean() for name in _MEANS}
        self.tasks: dict[str, tuple[list[int], dict[str, _Mean]]] = {}
        self.flagged: list[str] = []
        self.kinds: dict[str, int] = {}

    def add(self, row: TrialScore) -> None:
        self.rows += 1
        self.add_rigging(row)
        if row.judge == NOT_JUDGED:
            return
        self.judged += 1
        self.undefined += row.partial_credit is None
        self.unverified += row.unverified_evidence
        for label in self.labels:
            self.labels[label] += getattr(row, label)
        values = {"partial_credit": row.partial_credit, "coverage": row.coverage,
                  "perfect": float(row.perfect),
                  "perfect_with_endpoint": float(row.perfect_with_endpoint)}
        for name, mean_of in self.means.items():
            mean_of.add(values[name])
        count, task = self.tasks.setdefault(row.task_id or "?", ([0], {
            name: _Mean() for name in ("partial_credit", "coverage", "perfect", "pass_rate")}))
        count[0] += 1
        for name in ("partial_credit", "coverage", "perfect"):
            task[name].add(values[name])
        if row.outcome != "none":
            task["pass_rate"].add(float(row.outcome == "pass"))

    def add_rigging(self, row: TrialScore) -> None:
        if row.rigging:
            self.flagged.append(row.trial_id)
            for kind in {cell.split("@")[0] for cell in row.rigging.split("; ")}:
                self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def rigging(self) -> dict[str, Any]:
        return {"trials_flagged": len(self.flagged), "by_kind": dict(sorted(self.kinds.items())),
                "flagged": self.flagged}

    def result(self) -> dict[str, Any]:
        means = {name: m.value for name, m in self.means.items()}
        return {
            "trials": self.judged, "not_judged": self.rows - self.judged,
            "partial_credit": means["partial_credit"], "coverage": means["coverage"],
            "perfect": means["perfect"], "perfect_with_endpoint": means["perfect_with_endpoint"],
            "undefined_partial_credit": self.undefined, "labels": dict(self.labels),
            "unverified_evidence": self.unverified,
            "tasks": {task: {"trials": count[0], **{k: m.value for k, m in task_means.items()}}
                      for task, (count, task_means) in sorted(self.tasks.items())},
            "rigging": self.rigging(),
        }


def aggregate(all_rows: Iterable[TrialScore]) -> dict[str, Any]:
    """Per-task and per-run means (undefined partial credit is left out, and counted; trials
    the model did not judge are left out of every mean, and counted as ``not_judged``)."""
    totals = ScoreTotals()
    for row in all_rows:
        totals.add(row)
    return totals.result()
