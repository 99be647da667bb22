"""Studies over runs, the analyze command, and the report in headless Chromium."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from agentcredit.analysis.analyze import analyze_store, analyze_trials, perturb_store
from agentcredit.analysis.perturb import perturb_value
from agentcredit.cli.app import app
from agentcredit.formats import load
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.store import RunStore
from tests.conftest import EXAMPLES, ROOT
from tests.judging import scripted_judge

runner = CliRunner()


@pytest.fixture
def example_run(tmp_path: Path) -> Path:
    assert runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(tmp_path / "run")]).exit_code == 0
    return tmp_path / "run"


def test_analyze_json_has_the_documented_shape(example_run: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["analyze", str(example_run), "--json", str(tmp_path / "a.json"),
                              "--bootstrap", "300"])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["n_trials"] == 7  # the harness-error trial has no outcome
    assert set(data["auc"]) >= {"estimate", "ci_low", "ci_high"}
    assert data["discrimination"]["excluded_no_outcome"] == 1
    assert "no_endpoint" in data["discrimination"]["scorers"]
    pairs = data["skill_pairs"]
    assert pairs["pairs"] == 3  # one no-skills/skills pair per example task


def test_seeded_analysis_repeats_bit_for_bit(example_run: Path) -> None:
    store = RunStore(example_run)
    first = analyze_store(store, seed=7, draws=500)
    second = analyze_store(store, seed=7, draws=500)
    assert json.dumps(first, sort_keys=True, default=str) == \
        json.dumps(second, sort_keys=True, default=str)


def test_human_agreement_from_a_csv(example_run: Path, tmp_path: Path) -> None:
    human = tmp_path / "human.csv"
    human.write_text(
        "trial_id,progress,trial_a,trial_b,preferred\n"
        "csv-sales-summary__Qm4tR2a,1.0,,,\n"
        "csv-sales-summary__Lx9pV3c,0.7,,,\n"
        "log-error-filter__Bf7kW1e,0.0,,,\n"
        "log-error-filter__Zc5mY0t,0.5,,,\n"
        ",,log-error-filter__Zc5mY0t,log-error-filter__Bf7kW1e,a\n"
        ",,csv-sales-summary__Lx9pV3c,csv-sales-summary__Qm4tR2a,b\n")
    result = analyze_store(RunStore(example_run), human=human, draws=200)
    gcpc = result["human"]["scorers"]["partial_credit"]
    assert gcpc["pairs"]["concordant"] == 2 and gcpc["pairs"]["agreement"] == 1.0
    assert gcpc["spearman"]["estimate"] == pytest.approx(1.0)


def test_tb1_outcome_listing_auc(corpus: Path) -> None:
    trials = load([corpus / "terminal-bench-1" / "trial_outcomes.jsonl"]).trials
    result = analyze_trials(trials, draws=500)
    assert result["excluded_no_outcome"] == 322 and result["n_trials"] == 5143 - 322
    assert result["auc"]["ci_low"] is not None
    assert result["auc"]["ci_low"] <= result["auc"]["estimate"] <= result["auc"]["ci_high"]


def test_skillsbench_skill_pairs_without_a_model(corpus: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["run", str(corpus / "skillsbench" / "tasks"),
                              str(corpus / "skillsbench" / "trials-more"), "--out",
                              str(tmp_path)])
    assert out.exit_code == 0, out.output
    pairs = analyze_store(RunStore(tmp_path), draws=200)["skill_pairs"]
    assert pairs["pairs"] == 9
    by_task = {p["task_id"]: p for p in pairs["list"]}
    assert by_task["paper-anonymizer"]["transition"] == "FAIL->PASS"
    pivot = by_task["sales-pivot-analysis"]
    assert pivot["transition"] == "FAIL->FAIL" and pivot["delta"] > 0
    assert (pivot["checks_before"], pivot["checks_after"]) == ("6/10", "7/10")
    assert (pivot["before"], pivot["after"]) == (pytest.approx(0.6), pytest.approx(0.7))


def test_perturbed_evidence_moves_a_careful_judge_to_no(tmp_path: Path) -> None:
    assert perturb_value("took 12 s", np.random.default_rng(0)) != "took 12 s"
    assert perturb_value("all passed", np.random.default_rng(0)) == "all failed"

    def careful(messages: list[dict[str, object]], schema: dict[str, object] | None) -> str:
        text = str(messages)
        answer = json.loads(scripted_judge.answer(messages, schema))  # type: ignore[arg-type]
        if "Output: 2026-03-01 09:00:01 INFO started" not in text and "items" in answer:
            for item in answer["items"]:
                item["label"] = "no"
        return json.dumps(answer)

    register_script("careful", careful)  # type: ignore[arg-type]
    run = tmp_path / "run"
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(run), "--model", "scripted/careful"])
    assert out.exit_code == 0, out.output
    model = ModelClient(make_provider("scripted/careful"))
    result = asyncio.run(perturb_store(RunStore(run), model, n=200))
    assert result["perturbed"] > 0
    moved = [r for r in result["items"] if "09:00:01 INFO" in r["original"]]
    assert moved and all(r["label"] == "no" for r in moved)
    assert 0 < result["share_to_no"] <= result["share_to_no_or_abstain"] <= 1


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def judged_run(tmp_path: Path) -> Path:
    register_script("report-judge", lambda m, s: scripted_judge.answer(m, s))
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(tmp_path / "judged"), "--model",
                              "scripted/report-judge", "--holistic", "--generic"])
    assert out.exit_code == 0, out.output
    return tmp_path / "judged"


def test_generic_checklist_ablation_is_scored(judged_run: Path) -> None:
    result = analyze_store(RunStore(judged_run), draws=200)
    scorers = result["discrimination"]["scorers"]
    assert scorers["generic_checklist"]["n"] == 7
    assert scorers["holistic"]["n"] == 7
    assert "generic_checklist" in result["discrimination"]["paired"]
    judged = RunStore(judged_run).judgments("generic")
    assert len(judged) == 8 and all(len(v) == 5 for v in judged.values())


def test_report_renders_offline_in_headless_chromium(judged_run: Path) -> None:
    example_run = judged_run
    html = (example_run / "report.html").read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']https?:""", html)
    assert "<script src" not in html and "<link" not in html
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs it)")
    out_dir = ROOT / "test-output"
    out_dir.mkdir(exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={example_run / 'chromium-profile'}"]
    url = (example_run / "report.html").resolve().as_uri()
    shot = out_dir / "report.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1280,2400", url],
                   capture_output=True, timeout=120, check=False)
    assert shot.exists() and shot.stat().st_size > 20_000
    dom = subprocess.run([browser, *flags, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120, check=False).stdout
    assert 'data-ready="1"' in dom  # the inline script ran
    for marker in ('id="provenance"', 'id="headline"', 'class="roc-curve"', 'class="hist"',
                   'id="skill-pairs"', 'class="trial"', 'class="cite"', "<mark>",
                   'id="card-judge-only"', 'id="card-kappa"', 'id="agreement"',
                   'class="verifier-label"', 'id="evidence-kinds"'):
        assert marker in dom, marker
    assert dom.index('id="headline"') < dom.index('id="provenance"')
    assert dom.index('id="headline"') < dom.index('id="trials"')
    assert 'id="conflicts"' in dom and 'class="conflict"' in dom
    provenance = dom[dom.index('id="provenance"'):]
    assert "{'" not in provenance and "{&quot;" not in provenance  # tables, not reprs
    assert dom.count("stroke-dasharray") >= 3  # curves told apart by dash patterns
