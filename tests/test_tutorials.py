"""Issue 68: the three tutorials run as written, from their pages' own blocks.

Each page's fenced blocks are taken in order and run in a fresh directory holding the
shipped examples: every ``agentcredit`` line of a shell block, and every Python block. The
own-server page runs against the real llama.cpp server (``llama_server``, SmolLM2-135M);
on the other pages a model served by you or a provider is swapped for a scripted one that
answers every schema, and ``--base-url`` is dropped.
The training page's verl settings are loaded the way verl loads them, and its OpenRLHF
address is posted to a live ``agentcredit serve``.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import re
import runpy
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import register_script
from tests.conftest import ROOT
from tests.rewards import scripted_verifier
from tests.serve.conftest import running, serve_with
from tests.test_docs_examples import FENCE, _any_model, command_lines

TUTORIALS = ROOT / "docs" / "tutorials"
runner = CliRunner()


def page_blocks(name: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block of a tutorial, in order."""
    text = (TUTORIALS / name).read_text(encoding="utf-8")
    return [(m[2], "\n".join(line.removeprefix(m[1]) for line in m[3].splitlines()))
            for m in FENCE.finditer(text)]


def scripted(line: str) -> list[str]:
    """The line's arguments with the scripted model in place of the served one."""
    line = re.sub(r"--model \S+", "--model scripted/tutorial-model", line)
    line = re.sub(r"--base-url \S+", "", line)
    return shlex.split(line)[1:]


@contextlib.contextmanager
def workdir(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def run_page(name: str, tmp_path: Path, *, python: bool = True,
             args: Callable[[str], list[str]] = scripted,
             exits: Callable[[str], tuple[int, ...]] = lambda line: (0,)) -> list[str]:
    """Run the page's agentcredit lines (as ``args`` makes them; each must exit as ``exits``
    allows) and Python blocks in order; what each printed."""
    register_script("tutorial-model", _any_model)
    printed = []
    with workdir(tmp_path):
        for lang, code in page_blocks(name):
            if lang == "bash":
                for line in command_lines(code):
                    if line.startswith("agentcredit serve"):
                        continue  # a server runs until stopped: see the OpenRLHF test
                    result = runner.invoke(app, args(line), env={"COLUMNS": "200"})
                    assert result.exit_code in exits(line), f"{name}: {line}\n{result.output}"
                    printed.append(result.output)
            elif lang == "python" and python:
                with contextlib.redirect_stdout(_Tee()) as out:
                    runpy.run_path(_write(tmp_path, code), run_name="__main__")
                printed.append(out.text)
    return printed


class _Tee:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def _write(tmp_path: Path, code: str) -> str:
    path = tmp_path / f"block-{abs(hash(code))}.py"
    path.write_text(code)
    return str(path)


@pytest.mark.realserver
def test_own_server_tutorial_runs_against_llama_cpp(llama_server: tuple[str, Path],
                                                    tmp_path: Path) -> None:
    """The page's lines against the real one-slot llama.cpp server, with its defaults:
    what the page says SmolLM2-135M does (at the gates, as a judge) is what happens."""
    url, _ = llama_server

    def served(line: str) -> list[str]:
        line = line.replace("--model openai/mymodel", "--model openai/smollm2")
        return shlex.split(line.replace("http://127.0.0.1:8000/v1", url))[1:]

    printed = run_page("own-server.md", tmp_path, args=served,
                       exits=lambda line: (2,) if line.startswith("agentcredit run ") else
                       (0,))
    page = " ".join((TUTORIALS / "own-server.md").read_text().split())
    # what the page says of SmolLM2-135M: its checklist never reaches the gates ...
    assert "its checklists never reached the gates" in page
    assert "`checklists: 0 built, 0 kept, 1 rejected`" in page
    assert "checklists: 0 built, 0 kept, 1 rejected" in printed[0], printed[0]
    rejection = json.loads((tmp_path / "runs" / "mine" / "checklists" / "rejections" /
                            "log-error-filter.json").read_text())
    assert rejection["reason"].startswith("model call failed"), rejection
    sent = re.search(r"model requests sent \(retries among them\)\D*(\d+)",
                     " ".join(printed[0].split()))
    assert sent is not None and int(sent.group(1)) >= 1, printed[0]
    # ... and as a judge it decides no item: the outcome alone scores each trial
    assert "SmolLM2-135M decided no item" in page
    with (tmp_path / "runs" / "small" / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 and {r["judge_model"] for r in rows} == {"openai/smollm2"}
    assert {r["synthesizer"] for r in rows} == {"derived"}
    assert {r["judge"] for r in rows} == {"outcome"}, rows
    assert any("AUC" in text for text in printed), printed


def test_validity_tutorial_runs_and_reads_the_thresholds(tmp_path: Path) -> None:
    printed = run_page("validity.md", tmp_path)
    sheet = (tmp_path / "runs" / "validity" / "to-label.csv").read_text().splitlines()
    assert sheet[0] == "trial_id,item_id,label" and len(sheet) > 10
    assert all(line.endswith(",") for line in sheet[1:])  # the label is left to the person
    verdicts = "".join(printed)
    assert "test split: 22 items, kappa 0.72, alpha 0.72" in verdicts, verdicts
    assert "PASS Cohen's kappa" in verdicts
    assert (tmp_path / "runs" / "validity" / "validity-report.html").stat().st_size > 10_000


@pytest.mark.rl
def test_training_tutorial_grpo_script_runs_one_step(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    register_script("tutorial-verifier", scripted_verifier.answer)
    monkeypatch.setenv("VERIFIER_MODEL", "scripted/tutorial-verifier")
    printed = run_page("training.md", tmp_path)
    assert "outcome 1.0 satisfaction 1.0" in printed[-1] or \
        "outcome 0.0 satisfaction 1.0" in printed[-1], printed[-1]
    assert re.search(r"^loss \S+", printed[-1], re.M), printed[-1]


def _verl_settings() -> tuple[dict[str, Any], dict[str, str]]:
    blocks = page_blocks("training.md")
    config = yaml.safe_load(next(code for lang, code in blocks if lang == "yaml"))
    exports = dict(pair.split("=", 1) for lang, code in blocks if lang == "bash"
                   for line in code.splitlines() if line.startswith("export ")
                   for pair in shlex.split(line)[1:])
    return config, exports


def test_training_tutorial_verl_settings_load_and_score(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config, exports = _verl_settings()
    assert config["reward_model"]["reward_manager"] == "batch"
    run_page("training.md", tmp_path, python=False)  # the bank, as the page builds it
    register_script("tutorial-verifier", scripted_verifier.answer)
    for key, value in exports.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AGENTCREDIT_BANK", str(tmp_path / "runs" / "bank"))
    monkeypatch.setenv("AGENTCREDIT_VERIFIER_MODEL", "scripted/tutorial-verifier")
    monkeypatch.setenv("AGENTCREDIT_CACHE", str(tmp_path / "cache.sqlite"))
    # verl's loader: the file named by .path (here the installed one), the function by .name
    path = ROOT / "src" / "agentcredit" / "rewards" / "hooks.py"
    assert Path(config["custom_reward_function"]["path"]).name == path.name
    spec = importlib.util.spec_from_file_location("custom_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "custom_module", module)  # as verl registers it
    spec.loader.exec_module(module)
    function = getattr(module, config["custom_reward_function"]["name"])
    trajectory = json.dumps([{"role": "assistant", "content": "cat sales.csv"}])
    results = function(["toy"] * 2, [trajectory, "I give up."], ["", ""], [
        {"prompt": "Sum the sales.", "skill_id": "tabular-aggregation", "outcome": 1.0},
        {"prompt": "Sum the sales.", "skill_id": "tabular-aggregation", "outcome": 0.0}])
    assert [r["outcome"] for r in results] == [1.0, 0.0]
    assert all(isinstance(r["score"], float) for r in results)


def test_training_tutorial_openrlhf_address_reaches_the_service(tmp_path: Path) -> None:
    blocks = page_blocks("training.md")
    line = next(code for lang, code in blocks if "--remote_rm_url" in code)
    address = re.search(r"--remote_rm_url (\S+)", line)
    assert address is not None
    path = httpx.URL(address[1]).path
    with running(serve_with(tmp_path, "tutorial-rm", scripted_verifier.answer)) as url:
        answer = httpx.post(url + path, json={"query": ["Sum. <answer>3</answer>"],
                                              "prompts": ["Sum. "], "labels": ["3"]}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert answer.json()["rewards"] == [1.0]
