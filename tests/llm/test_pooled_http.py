"""The aiohttp pool under the openai SDK: proxies from the environment, and no session
left open (aiohttp reports those on stderr, in the middle of a trainer's log)."""

from __future__ import annotations

import asyncio
import gc
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agentcredit.llm import (
    ModelClient,
    ModelFailure,
    ModelResponse,
    RetryPolicy,
    make_provider,
    user,
)
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.providers.pooled_http import env_proxy
from tests.llm.fake_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]


def test_env_proxy_with_credentials_and_bypass(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("https", "api.example.com") is None
    monkeypatch.setenv("https_proxy", "http://ann:p%40ss@proxy.local:3128")
    monkeypatch.setenv("no_proxy", "internal.example.com")
    assert env_proxy("https", "api.example.com") == (
        "http://proxy.local:3128", {"Proxy-Authorization": "Basic YW5uOnBAc3M="})  # ann:p@ss
    assert env_proxy("https", "internal.example.com") is None
    assert env_proxy("http", "api.example.com") is None  # only https has a proxy


def test_a_tunnel_through_the_proxy_carries_its_credentials(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An https model behind a ``user:password@`` proxy: the CONNECT asks with Basic auth."""
    listener = socket.create_server(("127.0.0.1", 0))
    heard: list[bytes] = []

    def proxy() -> None:  # refuses every tunnel once it has read what was asked
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener closed: the test is over
            with conn:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                    data += chunk
                heard.append(data)
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=proxy, daemon=True).start()
    for name in ("https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("https_proxy", f"http://ann:p%40ss@127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setenv("AGENTCREDIT_HTTP", "aiohttp")
    model = ModelClient(make_provider("openai/m", base_url="https://model.invalid/v1",
                                      api_key="sk-x"),
                        retry=RetryPolicy(max_attempts=1), endpoint=EndpointSettings(timeout=5.0))
    try:
        failure = model.generate_sync([user("hi")])
    finally:
        listener.close()
    assert isinstance(failure, ModelFailure) and failure.kind == "connection"
    assert "403" in failure.message  # the proxy's refusal is what the user reads
    assert heard, "nothing reached the proxy"
    for asked in (data.decode().lower() for data in heard):  # the call and any discovery
        assert asked.startswith("connect model.invalid:443")
        assert "proxy-authorization: basic yw5uonbac3m=" in asked  # ann:p@ss


def test_a_client_dropped_after_its_loop_ended_reports_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    with FakeLLMServer() as server:
        client = ModelClient(make_provider("openai/m", base_url=f"{server.url}/v1",
                                           api_key="sk-x"))

        async def ask(model: ModelClient) -> object:
            return await model.generate([user("hi")])

        assert isinstance(asyncio.run(ask(client)), ModelResponse)
        assert isinstance(asyncio.run(ask(client)), ModelResponse)  # a new loop, same client
        del client
        gc.collect()
    assert not [r for r in caplog.records if "Unclosed" in r.getMessage()]


def test_hooks_end_the_process_and_a_forked_child_without_unclosed_sessions(
        tmp_path: Path) -> None:
    script = tmp_path / "hook.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.llm.fake_server import FakeLLMServer
        from tests.rewards import scripted_verifier
        from tests.rewards.test_acting_hooks import TOOL_COMPLETION
        from tests.skills.helpers import make_skill
        from agentcredit.llm import ModelClient, make_provider
        from agentcredit.rewards.hooks import SkillRubricReward
        from agentcredit.schema import Lineage
        from agentcredit.skills.bank import make_bank

        def answer(body):
            schema = body["response_format"]["json_schema"]["schema"]
            return scripted_verifier.answer(body["messages"], schema)

        server = FakeLLMServer(responder=answer).__enter__()

        KEPT = []

        def main(keep=False):  # the reward and its client are dropped when main returns
            skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
            bank = make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                             rules_version="r", prompt_version="p")
            client = ModelClient(make_provider("openai/m", base_url=server.url + "/v1",
                                               api_key="sk-x"))
            reward = SkillRubricReward(bank=bank, verifier=client, process_weight=0.5)
            if keep:
                KEPT.append(reward)
            return reward([[{{"role": "user", "content": "Sum."}}]] * 4,
                          [TOOL_COMPLETION] * 4, ground_truth=["42"] * 4,
                          skill_id=["sums"] * 4)

        print(main())
        import gc, time
        gc.collect()
        time.sleep(0.3)
        main(keep=True)  # a reward whose session stays open when the process forks
        import os
        child = os.fork()
        if child == 0:  # a forked trainer worker: scores, then exits
            print("child", main(), flush=True)
            sys.exit(0)
        _, status = os.waitpid(child, 0)
        print(f"child exited with {{os.waitstatus_to_exitcode(status)}}")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "[1.5, 1.5, 1.5, 1.5]" and "child [1.5, 1.5, 1.5, 1.5]" in lines
    # The child exits cleanly (a wait on its parent's loop at exit would hang until the
    # subprocess timeout) and reports no unclosed session; no wall-clock bound, so a busy
    # machine cannot fail it.
    assert lines[-1] == "child exited with 0", lines[-1]
    assert "Unclosed" not in done.stderr, done.stderr


def test_an_oversized_answer_is_refused_while_it_arrives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from agentcredit.llm import ModelFailure, RetryPolicy
    from agentcredit.llm.providers import pooled_http

    monkeypatch.setattr(pooled_http, "MAX_ANSWER_BYTES", 10_000)

    class Endless(BaseHTTPRequestHandler):  # no Content-Length: the body runs to the close
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("connection", "close")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b" " * 1000)
            except OSError:
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        once = RetryPolicy(max_attempts=1)
        streamed = ModelClient(make_provider("openai/m", base_url=f"http://{host}:{port}/v1",
                                             api_key="sk-x"), retry=once).generate_sync(
            [user("hi")])
    finally:
        server.shutdown()
        server.server_close()
    assert isinstance(streamed, ModelFailure) and streamed.kind == "malformed_response"
    assert "over the 9.8 KiB limit" in streamed.message
    with FakeLLMServer(responder=lambda body: "x" * 20_000) as fake:  # Content-Length declared
        declared = ModelClient(make_provider("openai/m", base_url=f"{fake.url}/v1",
                                             api_key="sk-x"), retry=once).generate_sync(
            [user("hi")])
    assert isinstance(declared, ModelFailure) and declared.kind == "malformed_response"
    assert declared.message.startswith("answer refused: ")
