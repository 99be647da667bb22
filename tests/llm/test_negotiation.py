"""Loopback servers that behave like real ones: llama-cpp-python's refusal of json_schema,
a server that takes no schema field at all, a small context window, a one-slot server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentcredit.llm import ModelClient, ResponseCache, user
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.limits import RetryPolicy
from agentcredit.llm.providers.openai_compat import OpenAICompatProvider

Behaviour = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


class Answer(BaseModel):
    progress: float
    rationale: str


GOOD = json.dumps({"progress": 0.5, "rationale": "half done"})


def completion(text: str, finish: str = "stop") -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text},
         "finish_reason": finish}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}}


class Recorder:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()


@contextmanager
def serving(behaviour: Behaviour, *, props: dict[str, Any] | None = None,
            seconds: float = 0.0, slots: int | None = None,
            openapi: dict[str, Any] | None = None) -> Iterator[tuple[str, Recorder]]:
    record = Recorder()
    gate = threading.Semaphore(slots) if slots else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            if self.path == "/props" and props is not None:
                return self._send(200, props)
            if self.path == "/openapi.json" and openapi is not None:
                return self._send(200, openapi)
            self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            with record.lock:
                record.bodies.append(body)
                record.in_flight += 1
                record.peak = max(record.peak, record.in_flight)
            try:
                if gate is not None:
                    gate.acquire()
                try:
                    time.sleep(seconds)
                    status, payload = behaviour(body)
                finally:
                    if gate is not None:
                        gate.release()
            finally:
                with record.lock:
                    record.in_flight -= 1
            record.statuses.append(status)
            self._send(status, payload)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (a timeout)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", record
    finally:
        server.shutdown()
        server.server_close()


def llama_cpp_python(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Refuses json_schema as llama-cpp-python 0.3.36 does (a 500 whose body is a pydantic
    validation error) and takes json_object with a schema."""
    kind = (body.get("response_format") or {}).get("type")
    if kind not in (None, "text", "json_object"):
        return 500, {"error": {"message": "1 validation error:\n  {'type': 'literal_error', "
                               "'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
                               "should be 'text' or 'json_object'\"}", "type":
                               "internal_server_error"}}
    return 200, completion(GOOD)


def client(url: str, tmp_path: Path, **options: Any) -> ModelClient:
    notes: list[str] = []
    keys = ("timeout", "max_tokens", "structured", "context_tokens", "concurrency")
    endpoint = EndpointSettings(**{k: options.pop(k) for k in keys if k in options})
    made = ModelClient(OpenAICompatProvider("m", base_url=url, api_key="k"),
                       cache=ResponseCache(tmp_path / "cache.sqlite"), notify=notes.append,
                       endpoint=endpoint, **options)
    made.notes = notes  # type: ignore[attr-defined]
    return made


def ask(made: ModelClient, text: str = "judge this", n: int = 1) -> list[Any]:
    async def run() -> list[Any]:
        try:
            return list(await asyncio.gather(*(
                made.generate([user(f"{text} {i}")], schema=Answer) for i in range(n))))
        finally:
            await made.aclose()

    return asyncio.run(run())


def test_llama_cpp_python_refusal_steps_down_once_and_is_remembered(tmp_path: Path) -> None:
    with serving(llama_cpp_python) as (url, record):
        first = client(url, tmp_path)
        results = ask(first, n=3)
        assert all(r.parsed == {"progress": 0.5, "rationale": "half done"} for r in results)
        refused = [b for b, s in zip(record.bodies, record.statuses, strict=True) if s != 200]
        # each refusal is of the json_schema form; nothing identical is sent twice
        assert refused and all(b["response_format"]["type"] == "json_schema" for b in refused)
        assert len(refused) <= 3
        sent = [json.dumps(b, sort_keys=True) for b in record.bodies]
        assert len(sent) == len(set(sent))
        ok = [b for b, s in zip(record.bodies, record.statuses, strict=True) if s == 200]
        assert all(b["response_format"] == {"type": "json_object", "schema":
                                            Answer.model_json_schema()} for b in ok)
        assert any("using json_object" in n for n in first.notes)  # type: ignore[attr-defined]
        count = len(record.bodies)
        second = client(url, tmp_path)  # same cache: the mode is known, nothing refused
        ask(second, "another question")
        assert record.statuses[count:] == [200]


# The request schema llama-cpp-python 0.3.36 publishes at /openapi.json (the parts read).
LLAMA_CPP_PYTHON_OPENAPI = {"info": {"title": "llama.cpp Python API"}, "components": {
    "schemas": {
        "ChatCompletionRequestResponseFormat": {"properties": {
            "type": {"type": "string", "enum": ["text", "json_object"]},
            "schema": {"anyOf": [{"type": "object"}, {"type": "null"}]}},
            "required": ["type"], "type": "object"},
        "CreateChatCompletionRequest": {"properties": {
            "messages": {"type": "array"}, "response_format": {"anyOf": [
                {"$ref": "#/components/schemas/ChatCompletionRequestResponseFormat"},
                {"type": "null"}]}}, "type": "object"}}}}


def test_a_server_publishing_its_request_schema_gets_its_form_without_a_refusal(
        tmp_path: Path) -> None:
    with serving(llama_cpp_python, openapi=LLAMA_CPP_PYTHON_OPENAPI) as (url, record):
        made = client(url, tmp_path)
        results = ask(made, n=4)
        assert all(r.parsed is not None for r in results)
        assert record.statuses == [200] * 4  # the form came from /openapi.json
        assert made.info.structured == "json_object"
        assert all(b["response_format"]["type"] == "json_object" for b in record.bodies)


def test_a_server_that_takes_no_schema_field_gets_the_schema_in_the_prompt(
        tmp_path: Path) -> None:
    def strict(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        for name in ("response_format", "guided_json", "structured_outputs", "format"):
            if name in body:
                return 400, {"error": {"message": f"Unrecognized request argument supplied: "
                                       f"{name}"}}
        return 200, completion(GOOD)

    with serving(strict) as (url, record):
        made = client(url, tmp_path)
        [result] = ask(made)
        assert result.parsed is not None and made.info.structured == "prompt"
        assert "match this JSON schema" in record.bodies[-1]["messages"][-1]["content"]
        assert record.statuses.count(400) == 4  # one refusal per form, then accepted


def test_a_server_refusing_json_object_when_forced_is_a_clear_failure(tmp_path: Path) -> None:
    def no_json_object(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if (body.get("response_format") or {}).get("type") == "json_object":
            return 400, {"error": {"message": "response_format json_object is not supported"}}
        return 200, completion(GOOD)

    with serving(no_json_object) as (url, record):
        [failure] = ask(client(url, tmp_path, structured="json_object"))
        assert failure.kind == "bad_request" and "--structured json_object" in failure.message
        assert len(record.bodies) == 1
        [auto] = ask(client(url, tmp_path / "auto"))
        assert auto.parsed is not None  # json_schema is taken: auto never tries json_object


def small_window(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A 2,048-token server: refuses a prompt plus answer budget over its window."""
    prompt = sum(len(m["content"]) for m in body["messages"]) // 4
    if prompt + body.get("max_tokens", 0) > 2048:
        return 400, {"error": {"message": f"This model's maximum context length is 2048 "
                               f"tokens. However, you requested {prompt + body['max_tokens']}"
                               " tokens.", "code": "context_length_exceeded"}}
    return 200, completion(GOOD)


def test_the_window_is_learned_from_the_error_and_a_prompt_over_it_is_never_sent(
        tmp_path: Path) -> None:
    with serving(small_window) as (url, record):
        made = client(url, tmp_path)
        [result] = ask(made)  # max_tokens 4096 > 2048: refused, window learned, resent
        assert result.parsed is not None and made.window == 2048
        assert record.bodies[-1]["max_tokens"] < 2048
        count = len(record.bodies)
        [too_long] = ask(made, "word " * 3000)
        assert too_long.kind == "too_long" and too_long.window == 2048
        assert len(record.bodies) == count  # never sent


def test_the_window_and_slots_from_llama_cpp_props(tmp_path: Path) -> None:
    props = {"default_generation_settings": {"n_ctx": 1024}, "total_slots": 1}
    with serving(lambda b: (200, completion(GOOD)), props=props, seconds=0.1) as (url, record):
        made = client(url, tmp_path, concurrency=None)
        results = ask(made, n=6)
        assert all(r.parsed is not None for r in results)
        assert made.window == 1024 and made.info.slots == 1
        assert record.peak == 1  # a one-slot server never sees two requests at once
        assert all(b["max_tokens"] < 1024 for b in record.bodies)


def test_timeouts_never_pile_up_on_a_one_slot_server(tmp_path: Path) -> None:
    # A one-slot server (as llama.cpp's /props says) takes 0.6 s for any request; the
    # client gives up after 0.4 s. A timed-out request holds its slot while the server
    # finishes it, so the server never has two requests in flight, and each question is
    # tried at most twice.
    props = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}
    with serving(lambda b: (200, completion(GOOD)), props=props, seconds=0.6,
                 slots=1) as (url, record):
        made = client(url, tmp_path, concurrency=None, timeout=0.4)
        made.waits = False  # as a remote server: given up at the timeout
        results = ask(made, n=3)
        assert all(r.kind == "timeout" for r in results)
        assert record.peak == 1
        assert len(record.bodies) <= 6
        # A local server's request is waited for (here up to 10 x 0.4 s): each question
        # is sent once and answered, one at a time.
        made = client(url, tmp_path, concurrency=None, timeout=0.4,
                      retry=RetryPolicy(local_patience=10))
        asked = len(record.bodies)
        assert all(r.parsed is not None for r in ask(made, "again", n=3))
        assert record.peak == 1 and len(record.bodies) - asked == 3
        assert (made.ledger.calls, made.ledger.answers, made.ledger.abandoned) == (3, 3, 0)


def test_a_definitive_failure_is_replayed_only_at_the_same_endpoint(tmp_path: Path) -> None:
    refuse = {"on": True}

    def behaviour(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if refuse["on"]:
            return 400, {"error": {"message": "messages: invalid content"}}
        return 200, completion(GOOD)

    with serving(behaviour) as (url, record):
        [failed] = ask(client(url, tmp_path))
        assert failed.kind == "bad_request" and len(record.bodies) == 1
        [replayed] = ask(client(url, tmp_path))
        assert replayed.kind == "bad_request" and "earlier run" in replayed.message
        assert len(record.bodies) == 1
        refuse["on"] = False  # the server was fixed and says so: its window changed
        [fresh] = ask(client(url, tmp_path, context_tokens=8192))
        assert fresh.parsed is not None and len(record.bodies) == 2
