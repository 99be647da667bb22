"""Issue 60: every fenced example of the README and the documentation site still works.

Each shell block's ``agentcredit`` command lines are read as the shell would join them; every
option a line names must exist on the command it names (a renamed or dropped option fails
here, see the mutation test). The lines that need no server or network (no ``--base-url``,
no ``serve``, no placeholder, inputs that exist) are run against the shipped examples in a
temporary directory, a paid model swapped for a scripted one that answers every schema. Python
blocks that need no model are run the same way. The site itself is built with warnings as
errors (``mkdocs build --strict``).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```", re.S | re.M)
SHELL = {"bash", "sh", "shell", "console"}
runner = CliRunner()


def blocks(kinds: set[str]) -> list[tuple[str, str]]:
    """(page:line, code) of every fenced block of the given languages."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            indent, lang, code = match.groups()
            if lang in kinds:
                code = "\n".join(line.removeprefix(indent) for line in code.splitlines())
                where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
                out.append((where, code))
    return out


def command_lines(code: str) -> list[str]:
    """The ``agentcredit`` command lines of a shell block (continuations joined, comments
    and ``&&`` chains split)."""
    joined = re.sub(r"\\\n\s*", " ", code)
    lines = []
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        for part in line.split("&&"):
            part = part.strip()
            if part.startswith("agentcredit "):
                lines.append(part)
    return lines


def problems(line: str) -> list[str]:
    """Options a command line names that its command does not have (also in a usage
    synopsis such as ``[--compare RUN2]``)."""
    words = shlex.split(line.replace("[", " ").replace("]", " ").replace("|", " "))[1:]
    command: Any = typer.main.get_command(app)
    path = ["agentcredit"]
    while getattr(command, "commands", None) and words and not words[0].startswith("-"):
        if words[0] not in command.commands:
            return [f"{' '.join(path)} has no command {words[0]!r}"]
        command = command.commands[words[0]]
        path.append(words.pop(0))
    known = {o for p in command.params for o in [*getattr(p, "opts", []),
                                                   *getattr(p, "secondary_opts", [])]}
    known |= {"--help"}
    return [f"{' '.join(path)} has no option {w.split('=', 1)[0]!r}" for w in words
            if w.startswith("--") and w.split("=", 1)[0] not in known]


@pytest.mark.parametrize(("where", "code"), blocks(SHELL))
def test_every_command_line_names_real_options(where: str, code: str) -> None:
    found = [f"{where}: {p}" for line in command_lines(code) for p in problems(line)]
    assert found == []


def test_a_renamed_option_is_caught() -> None:
    """The mutation: the README's first command with one option renamed."""
    line = "agentcredit run examples/tasks examples/jobs --out runs/example --holistic"
    assert problems(line) == []
    assert problems(line.replace("--holistic", "--holistik")) == [
        "agentcredit run has no option '--holistik'"]
    assert problems("agentcredit skills retreive BANK TASKS") == [
        "agentcredit skills has no command 'retreive'"]


def _any_model(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """A scripted stand-in for whatever model a documented command names: the judge's,
    the turn verifier's or the skill writer's answers, by the schema asked."""
    from tests.judging import scripted_judge
    from tests.rewards import scripted_verifier
    from tests.skills import scripted_skills

    title = (schema or {}).get("title")
    if title in ("CoarseAnswer", "FineGroupAnswer"):
        return scripted_verifier.answer(messages, schema)
    if title in ("DraftChecklist", "ItemsAnswer", "HolisticAnswer"):
        return scripted_judge.answer(messages, schema)
    return scripted_skills.answer(messages, schema)


def _scripted(line: str) -> str:
    """The line with a paid model swapped for the scripted stand-in."""
    return re.sub(r"--model (openai|anthropic)/\S+", "--model scripted/docs-model", line)


def _runnable(line: str, cwd: Path) -> bool:
    """A line that needs no server or network (a paid model is swapped for a script), names
    no placeholder (``TASKS``, ``RUN``) and whose inputs exist (the examples, or what an
    earlier line wrote)."""
    words = shlex.split(line)
    if "[" in line or any(w in words for w in ("serve", "--base-url", "--batch", "--perturb")):
        return False
    if any(re.fullmatch(r"[A-Z][A-Z0-9_]*", w) for w in words):
        return False
    inputs = [w for n, w in enumerate(words[1:], 1) if "/" in w and not w.startswith("-")
              and words[n - 1] not in ("--out", "--json", "--model")]
    return all((cwd / w).exists() for w in inputs)


def test_the_examples_that_need_no_model_run(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    from agentcredit.llm import register_script

    register_script("docs-model", _any_model)
    ran = []
    for where, line in [(w, _scripted(x)) for w, code in blocks(SHELL)
                        for x in command_lines(code)]:
        if not _runnable(line, tmp_path):
            continue
        result = runner.invoke(app, shlex.split(line)[1:], env={"COLUMNS": "200"})
        assert result.exit_code == 0, f"{where}: {line}\n{result.output}"
        ran.append(line)
    assert any(line.startswith("agentcredit run examples/tasks") for line in ran), ran
    assert any("--labels examples/labels.csv" in line for line in ran), ran
    assert any(line.startswith("agentcredit skills import examples/skills --out runs/bank "
                               "--model scripted/") for line in ran), ran


def test_the_python_examples_that_need_no_model_run(tmp_path: Path) -> None:
    ran = 0
    for where, code in blocks({"python"}):
        if where.startswith("docs/tutorials/"):
            continue  # run in order, after the page's commands: tests/test_tutorials.py
        live = "\n".join(line.split(" #", 1)[0] for line in code.splitlines()
                         if not line.lstrip().startswith("#"))
        if re.search(r"\b(openai|anthropic)/", live) or "GRPOTrainer(" in live:
            continue  # a paid model or a trainer: see tests/rewards/test_readme_trl_recipe.py
        (tmp_path / "examples").unlink(missing_ok=True)
        (tmp_path / "examples").symlink_to(ROOT / "examples")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{where}:\n{code}\n{done.stderr[-2000:]}"
        ran += 1
    assert ran >= 1


@pytest.mark.parametrize("edit_url", ["", "https://git.example.org/fork/agentcredit/edit/main/docs/"])
def test_the_site_builds_without_warnings(tmp_path: Path, edit_url: str) -> None:
    """Built as shipped (no repository named, no edit links) and as a fork that publishes
    its source builds it (mkdocs.yml's ``DOCS_EDIT_URL``: each page links to its source)."""
    if shutil.which("mkdocs") is None and not _has("mkdocs"):
        pytest.skip("the [docs] extra is not installed")
    env = {k: v for k, v in __import__("os").environ.items() if k != "DOCS_EDIT_URL"}
    env |= {"NO_MKDOCS_2_WARNING": "1", **({"DOCS_EDIT_URL": edit_url} if edit_url else {})}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "--judges" in cli and "agentcredit skills reward" in cli  # written from the app
    page = (tmp_path / "site" / "getting-started" / "index.html").read_text()
    edit = re.search(r'<a href="([^"]*)"[^>]*rel="edit"', page)
    assert (edit.group(1) if edit else "") == (edit_url and edit_url + "getting-started.md")


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_ci_runs_the_readme_test_command_as_written() -> None:
    """The install line a user copies is the one CI runs (torch's CPU index included)."""
    wanted = [line for where, code in blocks(SHELL) for line in code.splitlines()
              if where.startswith(("README.md", "docs/getting-started.md"))
              and line.rstrip().endswith("python -m pytest")]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert len(wanted) == 2 and len(set(wanted)) == 1, wanted
    assert "--index-url https://download.pytorch.org/whl/cpu" in wanted[0]
    assert wanted[0] in ci
