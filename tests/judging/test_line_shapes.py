"""One example per shape of what the line rules and the Python flow decide, moved from the
doctests of helpers that only the examples used (the rules themselves are the library's)."""

from __future__ import annotations

import pytest

from agentcredit.evidence.authored import literal_index
from agentcredit.evidence.pyflow import python_flow
from agentcredit.skills.tool_names import shell_tools

SCRIPT = 'cat > /tmp/report.sh << EOF\necho "5 passed in 0.12s"\nEOF'
COUNTER = 'if node["type"] == "choice" or kind == "line":\n' + "    n += 1\n" * 40


@pytest.mark.parametrize(("line", "literals", "authored"), [
    ("5 passed in 0.12s", ["printf '%d passed in 0.12s\\n' 5"], True),
    ("5 passed", ["python3 -c \"print(f'{5} passed')\""], True),
    ("5 passed in 0.12s", [SCRIPT, "bash /tmp/report.sh"], True),
    ('{"status": "ok"}', ['{"status": "ok"}', "/app/out.json"], True),
    ("5 passed", ['N=5; echo "$N passed"'], True),
    ("All 12 tests passed: OK", ["printf 'All %d tests passed: %s' 12 OK"], True),
    ("5 passed", ["printf '\\x35 p\\141ssed'"], True),  # escapes decoded
    # what the environment computed is not the agent's
    ("5 passed in 0.12s", ["python -m pytest -q tests"], False),
    ("Total: 4817", ["python3 -c \"print(f'Total: {sum(v)}')\""], False),
    ("12 a", ["wc -l a"], False),
    ('"type": "line"', [COUNTER], False),  # a JSON line the agent's program read
])
def test_a_line_is_authored_only_when_the_agents_literals_reach_it(
        line: str, literals: list[str], authored: bool) -> None:
    assert literal_index(tuple(literals)).authored(line, len(literals)) is authored


@pytest.mark.parametrize(("code", "taints"), [
    ("rows = [1, 2, 3]\nprint(len(rows), 'passed')", {"pure"}),
    ("import csv\nrows = list(csv.reader(open('d.csv')))\nprint(len(rows))", {"real"}),
    ("print('5 passed')", {"literal"}),
    ("print(f'{n} passed')", {"real"}),
    ("import codecs\nprint(codecs.decode('5 cnffrq', 'rot13'))", {"pure"}),
])
def test_what_a_python_program_prints(code: str, taints: set[str]) -> None:
    found = python_flow(code)
    assert found is not None and found[0] == taints


@pytest.mark.parametrize(("shell", "commands"), [
    ("cd /app && grep -c ERROR log | wc -l; sudo python3 x.py", ["cd", "grep", "python3", "wc"]),
    ("cat > a.py <<'EOF'\nwith open(f) as g:\n    pass\nEOF\nls", ["cat", "ls"]),
    ('python3 -c "\nimport json\nrows = 1\n" && jq . f', ["jq", "python3"]),
])
def test_the_commands_a_shell_text_runs(shell: str, commands: list[str]) -> None:
    assert sorted({name for name, kind in shell_tools(shell) if kind == "command"}) == commands
