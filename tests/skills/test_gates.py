"""Skill gates: each code fails on its own defect and passes on the repaired skill."""

from __future__ import annotations

from agentcredit.formats.oracle import read_oracle
from agentcredit.schema import Lineage
from agentcredit.skills import leaks as gates_leaks
from agentcredit.skills import tool_names
from agentcredit.skills.gates import GateContext, run_skill_gates
from tests.skills.helpers import criterion, example_records, make_skill


def codes(skill: object, context: GateContext | None = None) -> list[str]:
    return [f.code for f in run_skill_gates(skill, context or GateContext())]  # type: ignore[arg-type]


def test_a_well_formed_skill_passes_every_gate() -> None:
    assert codes(make_skill(), GateContext(trial_ids=frozenset({"t1"}))) == []


def test_count_gate_bounds_stages_criteria_and_weights() -> None:
    assert codes(make_skill(stages=2)) == ["S-COUNT"]
    assert codes(make_skill(stages=6)) == ["S-COUNT"]
    assert codes(make_skill(criteria=6)) == ["S-COUNT"]
    assert codes(make_skill(criteria=2)) == ["S-COUNT"]
    assert codes(make_skill(stages=5, criteria=5)) == []
    bad_weight = make_skill(rubric=(criterion(1), criterion(2), criterion(3, weight=0.0)))
    assert [(f.code, f.item_id) for f in run_skill_gates(bad_weight, GateContext())] == \
        [("S-COUNT", "R3")]
    nan = make_skill(rubric=(criterion(1), criterion(2), criterion(3, weight=float("nan"))))
    assert codes(nan) == ["S-COUNT"]
    # A verbatim SKILL.md body has no stages to count; a missing rubric has nothing to count.
    assert codes(make_skill(stages=0, body="Do it well.\n", rubric=None)) == []


def test_leak_gate_uses_oracle_and_verifier_literals_the_instruction_does_not_state() -> None:
    tasks, _ = example_records()
    task = next(t for t in tasks if t.id == "json-config-migrate")
    oracle, problems = read_oracle(task)
    assert problems == [] and oracle is not None and "solution/solve.sh" in oracle.files
    leaks = gates_leaks.leak_literals(task, oracle)
    assert leaks == {"1000": "oracle solution/solve.sh"}
    context = GateContext(leaks=leaks)
    leaky = make_skill(rubric=(criterion(1), criterion(2),
                               criterion(3, statement="Timeouts were multiplied by 1000.")))
    failures = run_skill_gates(leaky, context)
    assert [f.code for f in failures] == ["S-LEAK"] and "'1000'" in failures[0].message
    assert codes(make_skill(applicability="Config migration; scale by 1000 first."),
                 context) == ["S-LEAK"]
    # 10000 or 1000.5 are other numbers, not the literal.
    assert codes(make_skill(applicability="Timeouts up to 10000 or 1000.5 ms."), context) == []
    # A literal that the instruction states is not an answer.
    csv_task = next(t for t in tasks if t.id == "csv-sales-summary")
    assert "/app/summary.json" not in gates_leaks.leak_literals(csv_task, read_oracle(csv_task)[0])


def test_literals_keep_values_and_drop_keys_prose_and_small_numbers() -> None:
    source = ('EXPECTED = {"total": 1234.5, "name": "Highland Park"}\n'
              'assert out == "RPS5", "the gene name is wrong here"\nfor i in range(10): x = 0.0')
    assert gates_leaks.literals(source) == {"1234.5", "Highland Park", "RPS5"}


def test_tool_gate_names_only_tools_seen_in_trials() -> None:
    _, trials = example_records()
    tools = tool_names.seen_tools(trials)
    assert {"python3", "bash", "chmod", "run_shell_command", "cat"} <= set(tools)
    context = GateContext(tools=tools)
    named = make_skill(rubric=(criterion(1), criterion(2),
                               criterion(3, evidence="The python3 output shows the totals.")))
    failures = run_skill_gates(named, context)
    assert [(f.code, f.item_id) for f in failures] == [("S-TOOL", "R3")]
    # The message names the token, where it stands and where the tool came from.
    assert "'python3' (as a word; a command in trial" in failures[0].message
    assert codes(make_skill(), context) == []
    # "cat" is an everyday word: only a tool-reference position makes it a tool.
    cat = make_skill(rubric=(criterion(1), criterion(2),
                             criterion(3, evidence="The cat of the report shows totals.")))
    assert codes(cat, context) == []
    ran = make_skill(rubric=(criterion(1), criterion(2),
                             criterion(3, evidence="The agent ran cat and the output shows it.")))
    assert codes(ran, context) == ["S-TOOL"]


def commands_in(shell: str) -> set[str]:
    return {name for name, kind in tool_names.shell_tools(shell) if kind == "command"}


def test_commands_in_shell_text_and_code_spans() -> None:
    assert commands_in("FOO=1 /usr/bin/jq . x | sort -u && awk '{print}' f") == \
        {"jq", "sort", "awk"}
    assert set(tool_names.guidance_tools("Use `jq .a file` then\n```bash\ngrep -c x y\n```\n")) == \
        {"jq", "grep"}


def test_shell_keywords_are_not_commands_and_commands_inside_them_are() -> None:
    shell = ("function f { ls; }\nfor x in a b; do\n  wc -l \"$x\"\ndone\n"
             "case \"$1\" in\n  a) grep -c x y ;;\nesac\n"
             "while read -r line; do echo \"$line\"; done < in.txt\n"
             "echo \"$(lsb_release -sc)\" | tee out  # a comment naming rm\n"
             "cat > a.py <<'EOF'\nrows = 1\nfor r in rows: pass\nEOF\n")
    assert commands_in(shell) == {"ls", "wc", "grep", "read", "echo", "lsb_release",
                                             "tee", "cat"}


def test_evidence_gate_wants_observable_evidence_and_failure() -> None:
    assert codes(make_skill(rubric=(criterion(1), criterion(2),
                                    criterion(3, evidence="")))) == ["S-EVIDENCE"]
    vague = criterion(3, evidence="The agent understood the problem deeply.")
    assert codes(make_skill(rubric=(criterion(1), criterion(2), vague))) == ["S-EVIDENCE"]
    copy = criterion(3, statement="An output shows the value.",
                     evidence="An output shows the value.")
    assert codes(make_skill(rubric=(criterion(1), criterion(2), copy))) == ["S-EVIDENCE"]
    assert codes(make_skill(rubric=(criterion(1), criterion(2),
                                    criterion(3, failure="no")))) == ["S-EVIDENCE"]


def test_lineage_gate_traces_skills_to_input_trials_or_files() -> None:
    known = GateContext(trial_ids=frozenset({"t1", "t2"}))
    assert codes(make_skill(trial_ids=()), known) == ["S-LINEAGE"]
    assert codes(make_skill(trial_ids=("t9",)), known) == ["S-LINEAGE"]
    assert codes(make_skill(lineage=Lineage(stage="dual-view", trial_ids=("t1",))),
                 known) == ["S-LINEAGE"]  # no source task
    imported = make_skill(lineage=Lineage(stage="import", sources=("x/SKILL.md",)))
    assert codes(imported, known) == []
    assert codes(make_skill(lineage=Lineage(stage="import")), known) == ["S-LINEAGE"]


def test_shape_gate() -> None:
    assert codes(make_skill(applicability=" ")) == ["S-SHAPE"]
    twice = make_skill(rubric=(criterion(1), criterion(1), criterion(3)))
    assert codes(twice) == ["S-SHAPE"]


def test_python_the_agents_ran_through_the_shell_counts_as_tools_seen() -> None:
    from agentcredit.schema import Origin, Step, ToolCall, Trial

    heredoc = ("cat > /app/solve.py <<'EOF'\nimport pandas as pd\nfrom openpyxl import "
               "load_workbook\nEOF\npython3 /app/solve.py")
    one_liner = 'python3 -c "import statsmodels.api as sm; print(sm.OLS)"'
    steps = tuple(Step(index=i, source="agent", tool_calls=(ToolCall(
        id=f"c{i}", name="bash", arguments={"command": command}),), origin=Origin(path="x"))
        for i, command in enumerate((heredoc, one_liner, 'echo "import scipy"')))
    trial = Trial(id="t", steps=steps, outcome="pass", format="atif", source_path="x")
    tools = tool_names.seen_tools([trial])
    assert {"pandas", "openpyxl", "load_workbook", "statsmodels"} <= set(tools)
    assert "scipy" not in tools  # echoed text, not Python that ran
    assert str(tools["pandas"]) == "a module imported in trial t (step 1)"
    context = GateContext(tools=tools)
    uses = make_skill(rubric=(criterion(1), criterion(2), criterion(
        3, evidence="The totals computed with pandas appear in summary.json.")))
    assert codes(uses, context) == ["S-TOOL"]


def test_an_api_the_guidance_documents_counts_as_its_tools() -> None:
    # The shape of real API-reference skills (pddl-skills): signatures in headings' inline
    # code, examples calling the functions by name, dotted module paths in prose.
    guidance = ("## 1. Load\n### `load-problem(domain_path, problem_path)`\n"
                "Returns a `unified_planning.model.Problem` instance.\n"
                "```python\nproblem = load_problem('d.pddl', 'p.pddl')\n"
                "print(len(problem.goals))\nraise ValueError('x')\n```\n"
                "Write the plan to `out/plan.txt` and check `report.summary.json`.\n")
    tools = tool_names.guidance_tools(guidance)
    assert {"load-problem", "load_problem", "unified_planning.model.problem"} <= set(tools)
    assert not {"print", "len", "valueerror", "report.summary.json"} & set(tools)
    assert str(tools["load-problem"]) == "a function documented in the guidance's API reference"
    context = GateContext(tools=tools, require_trials=False)
    names = make_skill(rubric=(criterion(1), criterion(2), criterion(
        3, evidence="The plan printed after calling load_problem shows every goal reached.")))
    assert codes(names, context) == ["S-TOOL"]
    assert codes(make_skill(), context) == []
    # The same name as an output's field is not the function.
    field_only = make_skill(rubric=(criterion(1), criterion(2), criterion(
        3, evidence="The `load_problem` entry of status.json shows true.")))
    assert codes(field_only, context) == []


def test_english_words_that_are_also_tool_names_pass_in_their_plain_sense() -> None:
    # Issue 41: "scholarly" refused because the guidance installs the scholarly package,
    # "skill" refused because a trial called Claude Code's Skill tool.
    context = GateContext(tools={
        "scholarly": tool_names.ToolOrigin("package", "installed in the guidance"),
        "skill": tool_names.ToolOrigin("call", "a tool call in trial t1")},
        require_trials=False)
    plain = make_skill(rubric=(criterion(1), criterion(
        2, statement="Every claim is backed by scholarly sources found through scholarly "
                     "databases."), criterion(
        3, statement="The report is written with skill and care for the reader.")))
    assert codes(plain, context) == []
    for statement in ("Citations were fetched with scholarly.", "It uses the Skill tool.",
                      "The guide was loaded with `Skill`."):
        tooled = make_skill(rubric=(criterion(1), criterion(2), criterion(
            3, statement=statement)))
        assert codes(tooled, context) == ["S-TOOL"], statement


def test_declared_and_marked_states_of_a_file_are_observable() -> None:
    # Issue 41: called "a state of mind or intent, not an output".
    done = make_skill(rubric=(criterion(1), criterion(2), criterion(
        3, failure="The task is declared done while phases are still pending or unmarked.")))
    assert codes(done, GateContext(require_trials=False)) == []
    believed = make_skill(rubric=(criterion(1), criterion(2), criterion(
        3, failure="The agent feels sure it marked everything.")))
    assert codes(believed, GateContext(require_trials=False)) == ["S-EVIDENCE"]
