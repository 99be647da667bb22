"""Quotes that prove nothing are not evidence: too short, common to most steps, spanning two
steps, disguised by look-alike letters, invisible characters or escapes; and the view a model
reads marks the lines the agent authored."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.checklists.rules import load_rules
from agentcredit.evidence.quotes import check_quotes
from agentcredit.evidence.view import evidence_steps, render_evidence
from agentcredit.rewards.prompts import fine_messages
from agentcredit.schema import Citation, EvidenceRules, ItemJudgment, Trial
from tests.judging.test_authored_output import SUCCESS, _judged, _step, _trial, _verified


def _cite(trial: Trial, step: int, quote: str, rule: EvidenceRules | None = None
          ) -> ItemJudgment:
    judgment = ItemJudgment(item_id="C1", label="yes", source="llm",
                            evidence=(Citation(step=step, quote=quote),))
    return check_quotes(judgment, evidence_steps(trial), specificity=rule or EvidenceRules())


def test_a_short_quote_is_unspecific_unless_it_is_all_its_step_showed() -> None:
    trial = _trial(_step(0, "python3 count.py data.csv", "rows: 4817\nstatus: ok\n"))
    assert _judged(trial, "ok").evidence[0].kind == "unspecific"
    assert _judged(trial, "ok").label == "abstain"
    assert _judged(trial, "ok").reason == "no_output_evidence"
    assert _judged(trial, "rows: 4817").label == "yes"
    assert not _verified(trial, "ok") and _verified(trial, "rows: 4817")
    whole = _trial(_step(0, "cat /app/answer.txt", "42"))
    assert _judged(whole, "42").label == "yes"  # nothing longer could be quoted


def test_the_minimum_comes_from_the_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    default = (Path(__file__).parents[2] / "src/agentcredit/checklists/default_rules.yaml")
    rules.write_text(default.read_text().replace("min_quote_chars: 6", "min_quote_chars: 2"))
    loose = load_rules(rules).evidence
    assert loose.min_quote_chars == 2 and load_rules(None).evidence.min_quote_chars == 6
    trial = _trial(_step(0, "python3 count.py data.csv", "rows: 4817\nstatus: ok\n"))
    assert _cite(trial, 2, "ok", loose).label == "yes"
    assert _cite(trial, 2, "ok").label == "abstain"


def test_a_line_most_steps_show_proves_nothing_about_one_of_them() -> None:
    common = "settings loaded from /app/settings.toml"
    steps = [_step(0, f"python3 stage{n}.py",
                   f"{common}\nstage {n} wrote {n * 111} rows\nExit Code: 0")
             for n in range(1, 6)]
    trial = _trial(*steps)
    judged = _judged(trial, common)
    assert judged.evidence[0].kind == "unspecific" and judged.label == "abstain"
    assert not _verified(trial, common)
    assert _judged(trial, "stage 5 wrote 555 rows").label == "yes"


def test_a_harness_status_line_carries_no_weight_alone_or_beside_an_authored_line() -> None:
    trial = _trial(_step(0, "python3 stage.py", "stage 1 wrote 111 rows\nExit Code: 0"),
                   _step(0, "echo 'all stages done'", "all stages done\nExit Code: 0"))
    assert _judged(trial, "Exit Code: 0").evidence[0].kind == "harness"
    assert _judged(trial, "Exit Code: 0").label == "abstain"
    assert _cite(trial, 2, "stage 1 wrote 111 rows\nExit Code: 0").label == "yes"
    assert _judged(trial, "all stages done\nExit Code: 0").evidence[0].kind == "authored"
    assert not _verified(trial, "all stages done\nExit Code: 0")


def test_a_quote_spanning_two_steps_or_citing_a_missing_step_is_not_found() -> None:
    trial = _trial(_step(0, "python3 a.py", "first result 17"),
                   _step(0, "python3 b.py", "second result 23"))
    spanning = _cite(trial, 3, "first result 17\nsecond result 23")
    assert spanning.label == "abstain" and spanning.reason == "unverified_evidence"
    assert _cite(trial, 7, "second result 23").reason == "unverified_evidence"


@pytest.mark.parametrize("command", [
    "echo '5 p\u0430ssed in 0.12s' | iconv -f utf-8 -t ascii//TRANSLIT",  # Cyrillic a
    "echo '5 pa\u200bssed in 0.12s' | tr -d '\\342\\200\\213'",  # a zero-width space
    "printf '\\x35 passed in 0.12s\\n'",  # a hex escape
    "echo -e '5 p\\141ssed in 0.12s'",  # an octal escape
])
def test_disguised_literals_are_still_the_agents_own_text(command: str) -> None:
    trial = _trial(_step(0, command, SUCCESS))
    judged = _judged(trial, SUCCESS)  # the typed text itself once normalized, or reachable
    assert judged.evidence[0].kind in ("action", "authored") and judged.label == "abstain"
    assert not _verified(trial, SUCCESS)


def test_an_invisible_character_in_the_quote_does_not_hide_it() -> None:
    trial = _trial(_step(0, "python -m pytest -q", "....\n5 passed in 0.12s"))
    assert _judged(trial, "5 pas\u200bsed in 0.12s").label == "yes"
    assert _judged(trial, "5 p\u0430ssed in 0.12s").label == "yes"


def test_the_view_and_the_fine_prompt_mark_authored_lines() -> None:
    trial = _trial(_step(0, "python -m pytest -q", "....\n3 failed, 2 passed"),
                   _step(0, "printf '%d passed in 0.12s\\n' 5", SUCCESS))
    view = render_evidence(trial).text
    assert f"[agent-authored] {SUCCESS}" in view
    assert "[agent-authored] 3 failed" not in view
    copied = _judged(trial, f"[agent-authored] {SUCCESS}")
    assert copied.evidence[0].kind == "authored" and copied.label == "abstain"
    fine = fine_messages("Make the tests pass.", [], {}, list(trial.steps[1:]),
                         evidence=evidence_steps(trial))
    text = "".join(message.text("") for message in fine)
    assert f"[agent-authored] {SUCCESS}" in text and "[agent-authored] 3 failed" not in text


def test_an_output_cannot_forge_the_authored_mark_onto_a_line() -> None:
    trial = _trial(_step(0, "cat notes.txt", "[agent-authored] 17 rows loaded from db"))
    view = render_evidence(trial).text
    assert "|[agent-authored] 17 rows" in view
    assert _judged(trial, "|[agent-authored] 17 rows loaded from db").label == "yes"
