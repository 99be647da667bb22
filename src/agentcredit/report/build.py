"""The self-contained HTML report of a run: inline CSS, JS and SVG, no network."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from agentcredit.analysis.studies import (
    FAIL,
    NONE,
    OUTCOMES,
    PASS,
    SCORERS,
    TrialRow,
    TrialTable,
    trial_rows,
)
from agentcredit.checklists.build import COVERAGE
from agentcredit.evidence.view import action_text, output_text
from agentcredit.formats import load
from agentcredit.redact import redact_text
from agentcredit.report.svg import histogram_svg, roc_points, roc_svg
from agentcredit.schema import ItemJudgment, Trial
from agentcredit.store.run_store import RunStore
from agentcredit.store.scores import ScoreTotals, iter_scores, score_trial
from agentcredit.text import shorten

MAX_TRIALS = 100
"""Trials shown in full at most, whatever the run's size (the scores file has them all)."""
PER_TASK = 2
"""Per task and kind: the lowest-scoring FAIL, highest-scoring PASS and largest disagreements."""
MAX_OUTPUT = 1_500
MAX_STEPS_HEAD = 30  # steps shown from the start of a trajectory (cited ones always are)
MAX_STEPS_TAIL = 15  # and from its end
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.:-]")


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A number for display; an em dash for an undefined one."""
    return "—" if value is None else f"{value:.{digits}f}"


_fmt = fmt_number


def _anchor(trial_id: str, step: int) -> str:
    return f"{_SAFE_ID.sub('_', trial_id)}-step-{step}"


def _steps(trial: Trial | None, cited: dict[int, list[str]]) -> list[dict[str, Any]]:
    """The steps shown for a trial: the first and last ones and every cited step, so a
    trajectory of 100,000 steps makes a page of a few hundred."""
    if trial is None:
        return []
    out: list[dict[str, Any]] = []
    count = len(trial.steps)
    shown = [s for s in trial.steps if s.index < MAX_STEPS_HEAD or
             s.index >= count - MAX_STEPS_TAIL or (s.index + 1) in cited]
    previous = -1
    for step in shown:
        if step.index > previous + 1:
            out.append({"n": f"{previous + 2}–{step.index}", "source": "", "anchor": "",
                        "claim": "", "action": "",
                        "output": f"[{step.index - previous - 1} steps not shown]"})
        previous = step.index
        number = step.index + 1
        html = escape(redact_text(shorten(output_text(step), MAX_OUTPUT)))
        for quote in cited.get(number, []):
            needle = escape(quote)
            if needle and needle in html:
                html = html.replace(needle, f"<mark>{needle}</mark>", 1)
        out.append({"n": number, "source": step.source, "anchor": _anchor(trial.id, number),
                    "claim": redact_text(shorten(step.message.strip(), 600)
                                         if step.source == "agent"
                                         else shorten(step.message.strip(), 300)),
                    "action": redact_text(shorten(action_text(step), 1_200)), "output": html})
    return out


def _trial_view(row: dict[str, Any], judgments: list[ItemJudgment], trial: Trial | None,
                checklists: dict[str, Any], score: Any,
                verifier: list[ItemJudgment] | None = None) -> dict[str, Any]:
    checklist = checklists[row["checklist_hash"]]
    by_item = {j.item_id: j for j in judgments}
    by_verifier = {j.item_id: j for j in verifier or []}
    cited: dict[int, list[str]] = {}
    items = []
    for item in checklist.items:
        judged = by_item.get(item.id)
        citations = []
        for c in judged.evidence if judged else ():
            cited.setdefault(c.step, []).append(redact_text(c.quote))
            citations.append({"step": c.step, "quote": redact_text(c.quote),
                              "kind": c.kind or "not found",
                              "anchor": _anchor(row["trial_id"], c.step)})
        ver = by_verifier.get(item.id)
        items.append({"id": item.id, "text": item.text, "route": item.route,
                      "label": score.labels.get(item.id, "abstain"),
                      "judged": judged.label if judged else "abstain",
                      "reason": judged.reason if judged else "not judged",
                      "rationale": redact_text(judged.rationale) if judged else "",
                      "citations": citations,
                      "verifier": ver.label if ver is not None and item.route == "assertion"
                      else "", "checks": ", ".join(
                          f"{c} ({row['checks'].get(c, 'missing')})" for c in item.checks)})
    return {"id": row["trial_id"], "task": row["task_id"], "outcome": row["outcome"],
            "rows": items, "steps": _steps(trial, cited), "hash": row["checklist_hash"][:16],
            "log_note": "the log could not be re-read from " + str(row["source_path"]),
            "endpoint": None, "fusion": "", "judge": "", "pc": "—", "coverage": "—"}


def _reread(stored: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Trial | None]]:
    """Each stored trial with its log read back, one source at a time: the report never
    holds more than one source's trials (a run may still hold its own copy)."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for row in stored:
        by_source.setdefault(row["source_path"] or "", []).append(row)
    for source, rows in by_source.items():
        found = {t.id: t for t in load([source]).trials} if source else {}
        for row in rows:
            yield row, found.get(row["trial_id"]) or _by_name(found, row["trial_id"])
        del found


def _by_name(found: dict[str, Trial], trial_id: str) -> Trial | None:
    """A trial that was renamed apart from a namesake (``id@job``) when first read."""
    base = trial_id.split("@", 1)[0]
    return found.get(base) if base != trial_id and len(found) == 1 else None


def requirement_views(path: Path, checklists: dict[str, Any]) -> list[dict[str, Any]]:
    """Per task, its requirement units and the items answering them (from the file that
    ``checklists build`` writes); empty when the run has none."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    for_model = {(c.task_id, i.id) for c in checklists.values() for i in c.items
                 if i.needs_model}
    views = []
    for task, units in sorted(table.items()) if isinstance(table, dict) else []:
        rows = [{"kind": u["kind"], "text": u["text"],
                 "answer": ", ".join(f"{i} (for a model)" if (task, i) in for_model else i
                                     for i in u["items"])
                 or (f"waived: {u['waiver']}" if u["waiver"] else "nothing")} for u in units]
        model_only = sum(1 for u in units if u["items"]
                         and all((task, i) in for_model for i in u["items"]))
        views.append({"task": task, "rows": rows, "total": len(units),
                      "answered": sum(1 for u in units if u["items"]),
                      "waived": sum(1 for u in units if not u["items"] and u["waiver"]),
                      "for_model": model_only})
    return views


def build_report(store: RunStore, analysis: dict[str, Any], *, max_trials: int = MAX_TRIALS
                 ) -> str:
    """Render the report HTML for a run and its analysis."""
    rows, checklists = trial_rows(store, hold=lambda _: False)
    order = {trial_id: n for n, trial_id in enumerate(chosen_trials(rows, max_trials))}
    totals, scores = ScoreTotals(), {}
    for score in iter_scores(store):  # summed as they come; the chosen trials' kept
        totals.add(score)
        if score.trial_id in order:
            scores[score.trial_id] = score
    summary = totals.result()
    meta = analysis.get("meta", {})
    discrimination = analysis.get("discrimination", {"scorers": {}, "paired": {}})
    trials = _trial_views(store, order, checklists, scores)
    curves = _curves(rows, discrimination)
    pc, outcomes = rows.column("partial_credit"), rows.outcomes()
    hist = {name: pc[(outcomes == code) & ~np.isnan(pc)] for code, name in enumerate(OUTCOMES)}
    template = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
        resources.files("agentcredit.report").joinpath("template.html.j2").read_text("utf-8"))
    from agentcredit.version import __version__

    return template.render(
        title=str(meta.get("command", "run")) + " · " + str(store.path.parent.name),
        generated=datetime.now(UTC).isoformat(timespec="seconds"), version=__version__,
        seed=analysis.get("seed", 0), draws=analysis.get("bootstrap_draws", 0),
        provenance=_provenance(meta),
        cards=_cards(summary, discrimination, analysis.get("agreement") or {},
                     analysis.get("progress_among_failures") or {}),
        agreement=_agreement(analysis.get("agreement") or {}),
        kinds=analysis.get("evidence_kinds") or {},
        scorers=_scorer_rows(discrimination),
        discrimination_note=f"{discrimination.get('n_trials', 0)} trials with an official "
        f"outcome; {discrimination.get('excluded_no_outcome', 0)} without one were excluded.",
        roc_svg=roc_svg(curves) if curves else "<p class='muted'>needs trials of both "
        "outcomes</p>",
        hist_svg=histogram_svg({k: v for k, v in hist.items() if len(v)}),
        tasks=[{"task": t, "trials": v["trials"], "pass_rate": _fmt(v["pass_rate"], 2),
                "pc": _fmt(v["partial_credit"]), "coverage": _fmt(v["coverage"]),
                "perfect": _fmt(v["perfect"], 2)} for t, v in summary["tasks"].items()],
        pairs=_pairs(analysis.get("skill_pairs")),
        units=requirement_views(store.path.parent / "checklists" / COVERAGE, checklists),
        trials=trials,
        panel=_panel_view(analysis.get("panel")),
        rigging=[{"trial": t["trial_id"], "task": t["task_id"] or "-",
                  "flags": [{"step": f.step, "kind": f.kind, "reason": f.reason}
                            for f in t["rigging"]]}
                 for t in store.iter_trials() if t["rigging"]],
        open_errors=[{"trial": t or "-", "stage": st, "message": m}
                     for t, st, m in store.errors()],
        skipped_inputs=store.meta().get("skipped_inputs") or [],
        resolved_errors=[{"trial": t or "-", "stage": st, "message": m,
                          "at": datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")}
                         for t, st, m, at in store.resolved_errors()],
        trials_note=(f"showing {len(trials)} of {totals.rows} scored trials: per task the "
                     "lowest-scoring FAIL, the highest-scoring PASS and the largest "
                     "disagreements between partial credit and the verifier's outcome; every "
                     "trial is in the scores file and judgments.jsonl"
                     if totals.rows > len(trials) else ""),
    )


def chosen_trials(rows: TrialTable | Sequence[TrialRow], max_trials: int = MAX_TRIALS,
                  per_task: int = PER_TASK) -> list[str]:
    """The trials a reader wants, per task: the lowest-scoring FAIL trials, the
    highest-scoring PASS trials and the largest disagreements between the judged partial
    credit and the verifier's outcome (a PASS scored low, a FAIL scored high), ties going to
    the first trial id; tasks take turns until ``max_trials`` are chosen."""
    table = TrialTable.of(rows)
    pc, outcome, (_, tasks) = table.column("partial_credit"), table.outcomes(), table.tasks()
    scored = np.flatnonzero(~np.isnan(pc))  # in trial id order
    scored = scored[np.argsort(tasks[scored], kind="stable")]
    queues = []
    for found in np.split(scored, np.flatnonzero(np.diff(tasks[scored])) + 1):
        if not len(found):
            continue
        fails, passes = found[outcome[found] == FAIL], found[outcome[found] == PASS]
        decided = found[outcome[found] != NONE]
        apart = -np.abs(pc[decided] - (outcome[decided] == PASS))
        picks = [int(i) for group in (fails[np.lexsort((fails, pc[fails]))],
                                      passes[np.lexsort((passes, -pc[passes]))],
                                      decided[np.lexsort((decided, apart))])
                 for i in group[:per_task]]
        queues.append([table.ids[i] for i in dict.fromkeys(picks)] or
                      [table.ids[i] for i in found[:per_task]])
    chosen: list[str] = []
    while len(chosen) < max_trials and any(queues):
        for queue in queues:
            if queue and len(chosen) < max_trials:
                chosen.append(queue.pop(0))
    return chosen


def _trial_views(store: RunStore, order: dict[str, int], checklists: dict[str, Any],
                 scores: dict[str, Any]) -> list[dict[str, Any]]:
    """One view per chosen trial (its items, labels, evidence and scores)."""
    stored = [t for t in store.iter_trials() if t["trial_id"] in order]
    trials = []
    for row, trial in _reread(stored):
        if row["trial_id"] not in scores or row["checklist_hash"] not in checklists:
            continue  # not judged by the run's model: listed in the errors, not scored
        s = scores[row["trial_id"]]
        judgments = store.judgments_of(row["trial_id"])
        fused = score_trial(checklists[row["checklist_hash"]], judgments.get(
            "llm" if "llm" in judgments else "verifier", []), row["outcome"])[0]
        view = _trial_view(row, judgments.get(s.judge, []), trial, checklists,
                           _Labels(dict(fused.labels)), judgments.get("verifier", []))
        view.update({"endpoint": s.endpoint, "fusion": s.fusion, "judge": s.judge,
                     "pc": _fmt(s.partial_credit), "coverage": _fmt(s.coverage)})
        trials.append(view)
    return sorted(trials, key=lambda view: order[view["id"]])


def _curves(rows: TrialTable, discrimination: dict[str, Any],
            ) -> dict[str, list[tuple[float, float]]]:
    """ROC points per scorer, over trials with an official pass or fail."""
    curves: dict[str, list[tuple[float, float]]] = {}
    outcome = rows.outcomes()
    for name in ("judge_only", "holistic", "partial_credit", "check_fraction"):
        values = rows.column(name)
        usable = (outcome != NONE) & ~np.isnan(values)
        points = roc_points(values[usable], outcome[usable] == PASS)
        if points:
            auc = discrimination["scorers"].get(name, {}).get("auc", {}).get("estimate")
            curves[f"{SCORERS[name]} (AUC {_fmt(auc)})"] = points
    return curves


class _Labels:
    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels


def _cards(summary: dict[str, Any], disc: dict[str, Any], agreement: dict[str, Any],
           progress: dict[str, Any]) -> list[dict[str, str]]:
    scorers = disc.get("scorers", {})
    return [*_auc_cards(scorers, disc, agreement), *_progress_cards(progress), *[
        {"id": "coverage", "label": "mean evidence coverage", "value": _fmt(summary["coverage"]),
         "note": "share of items decided yes or no"},
        {"id": "counts", "label": "trials (with an outcome)", "value":
         f"{summary['trials']} ({disc.get('n_trials', 0)})",
         "note": f"mean partial credit {_fmt(summary['partial_credit'])} (uses the outcome)"
         + (f"; {summary['not_judged']} more not judged by the model (no score; see the "
            "errors)" if summary.get("not_judged") else "")}]]


def _progress_cards(progress: dict[str, Any]) -> list[dict[str, str]]:
    """Spearman's rho among FAIL trials with the per-check pass fraction, judge-only and
    holistic, beside the AUCs: how well each orders failures by how far they got."""
    scorers = progress.get("scorers", {})
    n_failed = progress.get("n_failed", 0)
    cards = []
    for name, title in (("judge_only", "judge-only"), ("holistic", "holistic")):
        rho = scorers.get(name, {}).get("spearman", {})
        ci = f" [{_fmt(rho.get('ci_low'))}, {_fmt(rho.get('ci_high'))}]" \
            if rho.get("ci_low") is not None else ""
        cards.append({"id": f"progress-{name.replace('_', '-')}",
                      "label": f"{title} ρ with checks passed, FAIL trials{ci}",
                      "value": _fmt(rho.get("estimate")),
                      "note": f"orders {n_failed} failed trials by progress" if rho else
                      "needs a --model run with failed trials"})
    return cards


def _auc_cards(scorers: dict[str, Any], disc: dict[str, Any],
               agreement: dict[str, Any]) -> list[dict[str, str]]:

    def auc(name: str) -> tuple[str, str]:
        a = scorers.get(name, {}).get("auc", {})
        ci = f"[{_fmt(a.get('ci_low'))}, {_fmt(a.get('ci_high'))}]" if a.get("ci_low") \
            is not None else ""
        return _fmt(a.get("estimate")), ci

    judge, judge_ci = auc("judge_only")
    holistic, holistic_ci = auc("holistic")
    paired = disc.get("judge_only_paired", {}).get("holistic")
    kappa = agreement.get("kappa", {})
    cards = [
        {"id": "judge-only", "label": f"judge-only AUC vs outcome {judge_ci}", "value": judge,
         "note": "LLM labels alone: does not use the outcome"},
        {"id": "holistic", "label": f"holistic judge AUC {holistic_ci}", "value": holistic,
         "note": "one 0-1 score per trial: does not use the outcome"},
        {"id": "delta", "label": "Δ judge-only − holistic" + (
            f" [{_fmt(paired['delta_auc']['ci_low'])}, {_fmt(paired['delta_auc']['ci_high'])}]"
            if paired else ""), "value": _fmt(paired["delta_auc"]["estimate"]) if paired
         else "—", "note": f"P(Δ>0) {_fmt(paired['share_positive'], 2)}" if paired else ""},
        {"id": "kappa", "label": "judge–verifier Cohen's κ" + (
            f" [{_fmt(kappa.get('ci_low'))}, {_fmt(kappa.get('ci_high'))}]"
            if kappa.get("ci_low") is not None else ""), "value": _fmt(kappa.get("estimate")),
         "note": f"{agreement.get('decided_both', 0)} assertion items decided by both"},
    ]
    why = {"judge-only": "needs an LLM judge: run with --model",
           "holistic": "needs --model and --holistic",
           "delta": "needs --model and --holistic",
           "kappa": "needs an LLM judge: run with --model"}
    for card in cards:  # an empty tile says what would fill it
        if card["value"] == "—":
            card["note"] = why[card["id"]]
    return cards


def _agreement(agreement: dict[str, Any]) -> dict[str, Any] | None:
    if not agreement.get("items"):
        return None
    labels = ("yes", "no", "abstain")
    return {
        "matrix": [(a, [agreement["confusion"][f"llm_{a}"][f"verifier_{b}"] for b in labels])
                   for a in labels],
        "raw": _fmt(agreement["raw_agreement"]), "note": agreement["note"],
        "conflicts": [{**c, "anchors": [{"step": q["step"], "quote": q["quote"],
                                         "anchor": _anchor(c["trial_id"], q["step"])}
                                        for q in c["quotes"]]}
                      for c in agreement["conflicts"][:300]],
        "per_task": [(t, v["decided"], _fmt(v["raw_agreement"]), _fmt(v["kappa"]))
                     for t, v in agreement["per_task"].items()],
    }


def _provenance(meta: dict[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Provenance as (key, rows) tables: nested values become rows, never Python reprs
    (``outputs_state``, the run's own bookkeeping of when its files were made, is left out)."""
    out = []
    for key, value in sorted(meta.items()):
        if key == "outputs_state":
            continue
        if isinstance(value, dict):
            out.append((key, [(str(k), _plain(v)) for k, v in sorted(value.items())]))
        else:
            out.append((key, [("", _plain(value))]))
    return out


def _plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value) or "—"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_plain(v)}" for k, v in sorted(value.items()))
    return str(value)


def _scorer_rows(disc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, entry in disc.get("scorers", {}).items():
        auc = entry["auc"]
        paired = disc.get("paired", {}).get(name)
        out.append({"label": entry["label"], "n": entry["n"], "auc": _fmt(auc["estimate"]),
                    "uses": "uses the outcome" if entry.get("uses_outcome") else "no",
                    "ci": f"[{_fmt(auc['ci_low'])}, {_fmt(auc['ci_high'])}]",
                    "delta": _fmt(paired["delta_auc"]["estimate"]) if paired else "",
                    "share": _fmt(paired["share_positive"], 2) if paired else ""})
    return out


def _pairs(study: dict[str, Any] | None) -> dict[str, Any] | None:
    if not study:
        return None
    return {
        "threshold": study["threshold"],
        "transitions": [(name, {"pairs": t["pairs"], "median": _fmt(t["median_change"]),
                                "improving": _fmt(t.get("share_improving"), 2),
                                "regressing": _fmt(t.get("share_regressing"), 2)})
                        for name, t in study["transitions"].items()],
        "list": [{**p, "scores": f"{_fmt(p['before'])} → {_fmt(p['after'])}"}
                 for p in study["list"]],
        "changed": study["items_changed_most"],
    }


def _panel_view(panel: dict[str, Any] | None) -> dict[str, Any] | None:
    """The judges section: alpha, each judge's scores, the items whose votes split."""
    if not panel:
        return None

    def ci(value: dict[str, Any] | None) -> str:
        if not value or value.get("estimate") is None:
            return "undefined"
        return f"{_fmt(value['estimate'])} [{_fmt(value['ci_low'])}, {_fmt(value['ci_high'])}]"

    alpha = panel.get("alpha", {})
    rows = [("between judges", alpha["between_judges"])] if "between_judges" in alpha else []
    rows += [(f"between samples of {j}", a)
             for j, a in (alpha.get("between_samples") or {}).items()]
    return {
        "judges": ", ".join(panel["judges"]), "samples": panel["samples"],
        "alpha": [{"what": w, "three": ci(a["yes_no_abstain"]), "two": ci(a["yes_no"]),
                   "units": a["units"]} for w, a in rows],
        "per_judge": [{"judge": name, "n": r["n"], "auc": ci(r["judge_only_auc"]),
                       "rho": ci(r["progress_among_failures_rho"]),
                       "kappa": ci(r["kappa_vs_verifier"])}
                      for name, r in panel["per_judge"].items()],
        "splits": [{**s, "rate": _fmt(s["rate"], 2)} for s in panel["split_items"][:50]],
    }


def write_report(store: RunStore, analysis: dict[str, Any], out: Path) -> Path:
    """Write the report file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(store, analysis), encoding="utf-8")
    return out
