"""``agentcredit analyze`` and ``agentcredit report``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentcredit.analysis.analyze import analyze_store, analyze_trials, perturb_store
from agentcredit.analysis.labels import label_validation
from agentcredit.cli.console import fail, print_read_errors
from agentcredit.cli.options import BaseUrlOpt, ModelOpt, notice
from agentcredit.cli.text import count, q
from agentcredit.errors import AgentCreditError, NothingToDo
from agentcredit.formats import load
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.spec import ModelSpec, client_for
from agentcredit.report.build import fmt_number as _fmt
from agentcredit.report.build import write_report
from agentcredit.store.run_store import STORE_NAME, RunStore


def _ci(auc: dict[str, Any]) -> str:
    return f"{_fmt(auc['estimate'])} [{_fmt(auc['ci_low'])}, {_fmt(auc['ci_high'])}]"


def _print_progress(console: Console, progress: dict[str, Any] | None) -> None:
    """Progress validity among failures: Spearman's rho with the per-check pass fraction."""
    if not progress or not progress["scorers"]:
        return
    console.print(f"progress among the {q(progress['n_failed'])} FAIL trials (Spearman's ρ with "
                  "the fraction of checks passed):", soft_wrap=True)
    for entry in progress["scorers"].values():
        console.print(f"  {q(entry['label'])}: ρ {_ci(entry['spearman'])} (n={q(entry['n'])}, "
                      f"{q(entry['tasks'])} tasks)", soft_wrap=True)
    scorers = progress["scorers"]
    for name, paired in progress["judge_only_paired"].items():
        label = scorers[name]["label"] if name in scorers else name
        console.print(f"  judge only − {q(label)}: Δρ {_ci(paired['delta_rho'])}, "
                      f"P(Δ>0) {_fmt(paired['share_positive'], 2)} (n={q(paired['n'])})",
                      soft_wrap=True)


def print_result(console: Console, result: dict[str, Any]) -> None:
    disc = result.get("discrimination")
    if disc is None:  # raw trials: check fraction only
        console.print(f"{count(result['n_trials'], 'trial')} in {count(result['tasks'], 'task')} "
                      f"({q(result['excluded_no_outcome'])} without an outcome excluded): AUC of "
                      f"the per-check pass fraction vs the official outcome {_ci(result['auc'])}")
        return
    table = Table(title=f"outcome discrimination ({disc['n_trials']} trials; "
                  f"{disc['excluded_no_outcome']} without an outcome excluded)",
                  title_justify="left")
    for col in ("scorer", "n", "AUC [95% CI]", "uses the outcome", "ΔAUC GCPC − scorer [CI]",
                "P(Δ>0)"):
        table.add_column(col)
    for name, entry in disc["scorers"].items():
        paired = disc["paired"].get(name)
        table.add_row(q(entry["label"]), q(str(entry["n"])), _ci(entry["auc"]),
                      q("uses the outcome" if entry.get("uses_outcome") else "no"),
                      _ci(paired["delta_auc"]) if paired else "",
                      _fmt(paired["share_positive"], 2) if paired else "")
    console.print(table)
    for name, paired in disc.get("judge_only_paired", {}).items():
        console.print(f"judge only − {q(disc['scorers'][name]['label'])}: ΔAUC "
                      f"{_ci(paired['delta_auc'])}, P(Δ>0) {_fmt(paired['share_positive'], 2)}"
                      f" (n={q(paired['n'])})")
    _print_progress(console, result.get("progress_among_failures"))
    _print_more(console, result)


def _print_more(console: Console, result: dict[str, Any]) -> None:
    """Agreement, evidence kinds, a compared run, human ratings and skill pairs."""
    agree = result.get("agreement")
    if agree and agree["items"]:
        console.print(f"judge–verifier agreement on assertion items: {q(agree['decided_both'])} "
                      f"decided by both of {q(agree['items'])}; raw agreement "
                      f"{_fmt(agree['raw_agreement'])}; Cohen's κ {_ci(agree['kappa'])}; "
                      f"{agree['conflicts_total']} conflicts ({q(agree['note'])})", soft_wrap=True)
    kinds = result.get("evidence_kinds")
    if kinds and any(kinds.values()):
        console.print("evidence kinds of the judge's citations: " + ", ".join(
            f"{q(k)} {q(v)}" for k, v in kinds.items()))
    if "compare" in result and result["compare"].get("delta_auc"):
        console.print(f"compared run: ΔAUC {_ci(result['compare']['delta_auc'])} on "
                      f"{q(result['compare']['n'])} shared trials")
    if "human" in result:
        for name, entry in result["human"]["scorers"].items():
            rho = entry.get("spearman")
            pairs = entry.get("pairs")
            console.print(f"human agreement · {q(name)}: "
                          + (f"Spearman {_ci(rho)} (n={q(entry['n_rated'])}) " if rho else "")
                          + (f"pairs {_fmt(pairs['agreement'])} ({q(pairs['concordant'])}/"
                             f"{q(pairs['concordant'] + pairs['discordant'])}, {q(pairs['ties'])} "
                             "ties)" if pairs else ""))
    pairs = result.get("skill_pairs")
    if pairs:
        table = Table(title=f"skill pairs ({pairs['pairs']})", title_justify="left")
        for col in ("transition", "pairs", "median change", "improving", "regressing"):
            table.add_column(col)
        for name, t in pairs["transitions"].items():
            table.add_row(q(name), q(str(t["pairs"])), _fmt(t["median_change"]),
                          _fmt(t.get("share_improving"), 2), _fmt(t.get("share_regressing"), 2))
        console.print(table)
        for p in pairs["list"]:
            console.print(f"  {q(p['task_id'])}: {q(p['transition'])} {_fmt(p['before'])} → "
                          f"{_fmt(p['after'])} (checks {q(p['checks_before'])} → "
                          f"{q(p['checks_after'])})")
    _print_panel(console, result.get("panel"))
    _print_labels(console, result.get("labels"))
    if "perturbation" in result:
        p = result["perturbation"]
        console.print(f"evidence perturbation: {q(p['perturbed'])} items; to No "
                      f"{_fmt(p['share_to_no'], 2)}, to No or Abstain "
                      f"{_fmt(p['share_to_no_or_abstain'], 2)}")


def _print_panel(console: Console, panel: dict[str, Any] | None) -> None:
    """Alpha between judges and samples, each judge's scores, the items that split most."""
    if not panel:
        return
    console.print(f"judge panel: {q(', '.join(panel['judges']))} × {q(panel['samples'])} "
                  "sample(s); Krippendorff's α (nominal) yes/no/abstain · yes/no:")
    alpha = panel["alpha"]
    rows = [("between judges", alpha["between_judges"])] if "between_judges" in alpha else []
    rows += [(f"between samples of {j}", a) for j, a in alpha.get("between_samples", {}).items()]
    for what, a in rows:
        console.print(f"  {q(what)}: α {_ci(a['yes_no_abstain'])} · {_ci(a['yes_no'])} "
                      f"({q(a['units'])} items, {q(a['tasks'])} tasks)", soft_wrap=True)
    for name, r in panel["per_judge"].items():
        console.print(f"  {q(name)}: judge-only AUC {_ci(r['judge_only_auc'])}; ρ among "
                      f"failures {_ci(r['progress_among_failures_rho'])}; κ vs verifier "
                      f"{_ci(r['kappa_vs_verifier'])} (n={q(r['n'])})", soft_wrap=True)
    for split in panel["split_items"][:5]:
        console.print(f"  split: {q(split['item_id'])} in {q(split['split_in'])} of "
                      f"{q(split['trials'])} trials: {q(split['text'][:80])}", soft_wrap=True)


def _print_labels(console: Console, labels: dict[str, Any] | None) -> None:
    """The judge against a person's labels, per split and rater."""
    if not labels:
        return
    if "scores" in labels:
        console.print(f"against {q(labels['scores'])} trial scores of {q(labels['file'])} "
                      f"({q(labels['not_in_run'])} not in the run), Spearman's ρ:")
        for split, entry in labels["splits"].items():
            console.print(f"  {q(split)} ({q(entry['trials'])} trials): " + "; ".join(
                f"{q(name)} {_fmt(v['spearman'], 2)} (n={q(v['n'])})"
                for name, v in entry["scorers"].items()), soft_wrap=True)
        return
    console.print(f"against {q(labels['labels'])} labels of {q(labels['file'])} "
                  f"({q(labels['not_in_run'])} not in the run):")
    for split, entry in labels["splits"].items():
        for rater, m in entry["raters"].items():
            per = ", ".join(f"{k} P {_fmt(v['precision'], 2)} R {_fmt(v['recall'], 2)} F1 "
                            f"{_fmt(v['f1'], 2)}" for k, v in m["per_label"].items()
                            if v["support"])
            console.print(f"  {q(split)} ({q(entry['items'])} items, {q(entry['tasks'])} "
                          f"tasks) · {q(rater)}: balanced accuracy "
                          f"{_fmt(m['balanced_accuracy'], 2)}, κ {_fmt(m['kappa'], 2)}, α "
                          f"{_fmt(m['alpha'], 2)}; {q(per)}", soft_wrap=True)


def analyze(
    run_dir: Annotated[Path, typer.Argument(help="Run directory, or trial files/folders.")],
    compare: Annotated[Path | None, typer.Option("--compare", help="A second run.")] = None,
    human: Annotated[Path | None, typer.Option("--human", help="Human labels CSV.")] = None,
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="A person's item labels (CSV or JSONL trial_id,item_id,label): "
        "precision, recall, F1, balanced accuracy, κ and α on a dev and a test split.")]
    = None,
    pairs: Annotated[str, typer.Option("--pairs", help="auto, none or a pairing CSV.")] = "auto",
    perturb: Annotated[int, typer.Option("--perturb", help="Items to perturb (needs --model).")
                       ] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap draws.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers here.")
                        ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Validity analyses: AUC with task-clustered CIs, ablations, human agreement, skill pairs,
    evidence perturbation."""
    console = Console()
    try:
        if not (run_dir / STORE_NAME).exists():
            loaded = load([run_dir])
            if not loaded.trials:
                print_read_errors(console, loaded.errors)
                raise NothingToDo(f"{run_dir}: " + ("no such file or folder" if not
                                  run_dir.exists() else "no run store and no trial read "
                                  "here; give a run folder (--out of `run`) or trial files"))
            result = analyze_trials(loaded.trials, seed=seed, draws=bootstrap)
        else:
            store = RunStore(run_dir)
            other = RunStore(compare) if compare else None
            result = analyze_store(store, seed=seed, draws=bootstrap, human=human,
                                   pairs=None if pairs == "none" else pairs, compare=other)
            if labels is not None:
                result["labels"] = label_validation(store, labels)
            if perturb:
                client = client_for(None if model is None else ModelSpec(
                    model, base_url=base_url, endpoint=EndpointSettings(concurrency=4),
                    notify=notice),
                    default_cache=run_dir / "responses.sqlite")
                if client is None:
                    console.print("[yellow]--perturb needs --model; skipped[/yellow]")
                else:
                    result["perturbation"] = asyncio.run(
                        perturb_store(store, client, n=perturb, seed=seed))
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    print_result(console, result)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2, default=str) + "\n")
        console.print(f"numbers: {q(json_out)}")


def report(
    run_dir: Annotated[Path, typer.Argument(help="Run directory.")],
    out: Annotated[Path | None, typer.Option("--out", help="HTML file.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap draws.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
) -> None:
    """Write a self-contained HTML report (opens with no network)."""
    console = Console()
    if not (run_dir / STORE_NAME).exists():
        raise fail(console, f"{run_dir}: no run store here")
    store = RunStore(run_dir)
    path = write_report(store, analyze_store(store, seed=seed, draws=bootstrap),
                        out or run_dir / "report.html")
    console.print(f"report: {q(path)}")

