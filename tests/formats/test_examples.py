"""The shipped example benchmark reads completely and correctly."""

from __future__ import annotations

from agentcredit.formats import join_warnings, load
from tests.conftest import EXAMPLES


def test_example_tasks_have_class_qualified_checks() -> None:
    result = load([EXAMPLES / "tasks"])
    assert result.errors == []
    tasks = {t.id: t for t in result.tasks}
    assert set(tasks) == {"csv-sales-summary", "log-error-filter", "json-config-migrate"}
    assert tasks["csv-sales-summary"].checks == (
        "test_outputs.py::test_summary_file_exists",
        "test_outputs.py::TestSummaryContent::test_totals_per_region",
        "test_outputs.py::TestSummaryContent::test_regions_sorted",
        "test_outputs.py::test_sales_unchanged",
    )
    assert tasks["json-config-migrate"].metadata.difficulty == "medium"
    assert tasks["csv-sales-summary"].metadata.category == "data-processing"


def test_oracle_solution_is_never_read_into_a_task() -> None:
    for task in load([EXAMPLES / "tasks"]).tasks:
        assert all(not path.startswith("solution") for path in task.verifier_files)
        assert all("solution" not in text for text in task.verifier_files.values())


def test_example_trials_cover_every_outcome_kind() -> None:
    result = load([EXAMPLES / "jobs"])
    assert result.errors == []
    trials = {t.id: t for t in result.trials}
    assert len(trials) == 8
    passing = trials["csv-sales-summary__Qm4tR2a"]
    assert (passing.outcome, passing.reward, passing.condition) == ("pass", 1.0, "no-skills")
    some = trials["json-config-migrate__Rw8jN4s"]
    assert some.outcome == "fail"
    assert sorted(some.checks.values()).count("passed") == 3
    none_passed = trials["log-error-filter__Bf7kW1e"]
    assert set(none_passed.checks.values()) == {"failed"}
    harness = trials["csv-sales-summary__Ue1gT6b"]
    assert harness.outcome == "none"
    assert harness.outcome_reason is not None
    assert harness.outcome_reason.startswith("harness error: EnvironmentStartTimeoutError")
    assert harness.condition == "skills"


def test_example_trials_join_their_tasks_without_warnings() -> None:
    result = load([EXAMPLES / "tasks", EXAMPLES / "jobs"])
    assert join_warnings(result.tasks, result.trials) == []


def test_steps_keep_tool_calls_observations_and_offsets() -> None:
    trial = next(t for t in load([EXAMPLES / "jobs"]).trials if t.id.endswith("Hs2nD8q"))
    first, second = trial.steps[0], trial.steps[1]
    assert first.source == "user" and first.origin.pointer == "/steps/0"
    assert second.tool_calls[0].name == "run_shell_command"
    assert second.observations[0].call_id == second.tool_calls[0].id
    assert "ERROR db timeout" in second.observations[0].text
    raw = (EXAMPLES / "jobs").glob("*/log-error-filter__Hs2nD8q/agent/trajectory.json")
    data = next(raw).read_bytes()
    assert second.origin.byte_start is not None
    assert data[second.origin.byte_start:].startswith(b'"step_id": 2')
