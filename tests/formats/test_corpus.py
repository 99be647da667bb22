"""The readers against the real public benchmark material in ../shared/corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agentcredit.formats import join_warnings, load


def test_skillsbench_and_tb2_tasks_read_with_checks(corpus: Path) -> None:
    result = load([corpus / "skillsbench" / "tasks", corpus / "terminal-bench-2" / "tasks"])
    assert result.errors == []
    by_dir = Counter(Path(t.source_path).parent.parent.name for t in result.tasks)
    assert by_dir == {"skillsbench": 87, "terminal-bench-2": 89}
    without = sorted(t.id for t in result.tasks if not t.checks)
    # These two verifiers are scripts that write reward.txt themselves: no pytest checks.
    assert without == ["crystallographic-wyckoff-position-analysis", "python-scala-translation"]
    pivot = next(t for t in result.tasks if t.id == "sales-pivot-analysis")
    assert "test_outputs.py::TestPivotTableConfiguration::test_pivot_row_is_state" in pivot.checks


def test_skillsbench_sample_trials(corpus: Path) -> None:
    result = load([corpus / "skillsbench" / "trials-sample"])
    trials = {t.id: t for t in result.trials}
    power = trials["powerlifting-coef-calc__NYGDBnx"]
    assert Counter(power.checks.values()) == {"passed": 11}
    assert power.outcome == "pass" and len(power.steps) == 11
    pivot = trials["sales-pivot-analysis__KvDpiKB"]
    assert Counter(pivot.checks.values()) == {"passed": 6, "failed": 3, "skipped": 1}
    assert pivot.outcome == "fail"


def test_skillsbench_more_trials_with_conditions(corpus: Path) -> None:
    result = load([corpus / "skillsbench" / "trials-more"])
    assert result.errors == []
    assert len(result.trials) == 20
    conditions = Counter(t.condition for t in result.trials)
    assert conditions == {"no-skills": 10, "skills": 10}
    claude = next(t for t in result.trials if t.format == "harbor+claude-code")
    assert claude.task_id == "econ-detrending-correlation" and claude.steps
    assert Counter(claude.checks.values()) == {"passed": 3, "failed": 1}
    manifest = (corpus / "skillsbench" / "trials-more" / "manifest.tsv").read_text().splitlines()
    for row in manifest[1:]:
        cols = row.split("\t")
        trial = next(t for t in result.trials if t.id == cols[2])
        assert trial.reward == float(cols[3])
        passed = sum(1 for s in trial.checks.values() if s == "passed")
        assert (passed, len(trial.checks)) == (int(cols[4]), int(cols[5])), cols[2]


def test_tb1_trials_match_their_results_json(corpus: Path) -> None:
    import json

    root = corpus / "terminal-bench-1" / "trials-sample"
    result = load([root])
    assert result.errors == []
    assert len(result.trials) == 6
    for trial in result.trials:
        raw = json.loads((Path(trial.source_path) / "results.json").read_text())
        assert trial.checks == raw["parser_results"]
        assert trial.outcome == ("pass" if raw["is_resolved"] else "fail")
        assert trial.steps
        text = "\n".join(s.message + "".join(o.text for o in s.observations) for s in trial.steps)
        assert "\x1b" not in text and "\r" not in text
    hello = next(t for t in result.trials if t.task_id == "hello-world")
    assert any(c.arguments.get("command") == "cat hello.txt"
               for s in hello.steps for c in s.tool_calls)


def test_tb1_outcomes_and_swebench_instances(corpus: Path) -> None:
    outcomes = load([corpus / "terminal-bench-1" / "trial_outcomes.jsonl"])
    assert outcomes.errors == [] and len(outcomes.trials) == 5143
    assert Counter(t.outcome for t in outcomes.trials)["none"] == 322
    swe = load([corpus / "swebench-verified" / "instances.jsonl"])
    assert swe.errors == [] and len(swe.tasks) == 500
    assert all(t.fail_to_pass for t in swe.tasks)


def test_whole_corpus_reads_without_crashing(corpus: Path) -> None:
    result = load([corpus])
    assert result.errors == []
    warnings = join_warnings(result.tasks, result.trials)
    # Harbor trials join their SkillsBench tasks and match their instructions.
    assert not [w for w in warnings if "differs" in w.reason and "skillsbench" in w.path]
