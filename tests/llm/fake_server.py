"""A loopback server speaking the OpenAI and Anthropic APIs, with fault injection.

Tests and benchmarks drive the real SDKs against it over real HTTP. ``faults`` decides,
per request, whether to misbehave: ``"429"`` (with Retry-After), ``"500"``, ``"slow"``,
``"drop"`` (close the connection without answering), ``"malformed"`` (invalid JSON),
``"schema"`` (valid JSON content that violates the requested schema) or
``"reject_format"`` (400 for ``response_format`` json_schema, as some servers do) or
``"gzip"`` (a correct answer sent gzip-compressed, as servers behind proxies often do).
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import random
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

Responder = Callable[[dict[str, Any]], str]
FaultPlan = Callable[[int, dict[str, Any]], "str | None"]


def default_responder(body: dict[str, Any]) -> str:
    """Echo the last user text; for schema requests, a JSON object with that text."""
    messages = body.get("messages") or []
    last = messages[-1]["content"] if messages else ""
    if isinstance(last, list):
        last = " ".join(p.get("text", "") for p in last if isinstance(p, dict))
    wants_json = "response_format" in body or "tools" in body
    return json.dumps({"answer": str(last)[:200]}) if wants_json else f"echo: {last}"


class JSONHandler(BaseHTTPRequestHandler):
    """What both loopback fakes answer with: HTTP/1.1, no log lines, JSON or raw bodies."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        self._raw(status, json.dumps(payload).encode(), headers)

    def _raw(self, status: int, data: bytes, headers: dict[str, str] | None = None,
             kind: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops bursts of new connections


class Loopback:
    """A threaded HTTP server on 127.0.0.1 for a fake: ``with`` starts and stops it,
    ``url`` is its base URL. Subclasses give ``_handler()`` and call ``_listen``."""

    def _listen(self, port: int = 0) -> None:
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeLLMServer(Loopback):
    """Start with ``with FakeLLMServer(...) as server:``; ``server.url`` is the base URL."""

    def __init__(self, responder: Responder = default_responder,
                 faults: FaultPlan | None = None, latency: float = 0.0,
                 retry_after: float = 0.01, slow_seconds: float = 3.0, port: int = 0,
                 cut_at_max_tokens: bool = False) -> None:
        self.responder = responder
        self.cut_at_max_tokens = cut_at_max_tokens
        self.faults = faults or (lambda i, body: None)
        self.latency = latency
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._listen(port)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JSONHandler):
            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without this, Nagle's algorithm
                # and the client's delayed ACK add ~40 ms to every answer.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    index = len(server.requests)
                    server.requests.append(body)
                    server.paths.append(self.path)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                fault = server.faults(index, body)
                if server.latency:
                    time.sleep(server.latency)
                if self.path.endswith("/embeddings"):
                    return self._send(200, embeddings_answer(body))
                anthropic = self.path.endswith("/messages")
                if fault == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if fault == "429":
                    return self._send(429, {"error": {"message": "rate limited",
                                                      "type": "rate_limit_error"}},
                                      {"retry-after": str(server.retry_after)})
                if fault == "500":
                    return self._send(500, {"error": {"message": "boom", "type": "server"}})
                if fault == "reject_format" and body.get("response_format", {}).get(
                        "type") == "json_schema":
                    return self._send(400, {"error": {
                        "message": "response_format json_schema is not supported",
                        "type": "invalid_request_error"}})
                if fault == "slow":
                    time.sleep(server.slow_seconds)
                if fault == "malformed":
                    return self._raw(200, b'{"id": "x", "choices": [')
                text = '{"unexpected": true}' if fault == "schema" else server.responder(body)
                payload = anthropic_message(body, text) if anthropic else \
                    chat_completion(body, text, cut=server.cut_at_max_tokens)
                if fault == "gzip":
                    return self._raw(200, gzip.compress(json.dumps(payload).encode()),
                                     {"content-encoding": "gzip"})
                self._send(200, payload, {"x-request-id": f"req-{index}",
                                          "request-id": f"req-{index}"})

        return Handler


def _serve_in_child(latency: float, responder: Responder,
                    queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    # A short GIL switch interval keeps the server's handler threads from queueing behind
    # one another.
    sys.setswitchinterval(1e-4)
    with FakeLLMServer(responder=responder, latency=latency) as server:
        queue.put(server.url)
        time.sleep(3600)


@contextmanager
def server_process(*, latency: float = 0.0,
                   responder: Responder = default_responder) -> Iterator[str]:
    """A FakeLLMServer in a process (and GIL) of its own, as a real endpoint would be, for
    the benchmarks; yields its URL. ``responder`` must be a module-level function."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_serve_in_child, args=(latency, responder, queue), daemon=True)
    proc.start()
    try:
        yield queue.get(timeout=30)
    finally:
        proc.terminate()


def fake_vector(text: str, dim: int = 16) -> list[float]:
    """A deterministic bag-of-words vector: each word adds 1 to one of ``dim`` buckets."""
    import zlib

    vector = [0.0] * dim
    for word in text.lower().split():
        vector[zlib.crc32(word.encode()) % dim] += 1.0
    return vector


def embeddings_answer(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI embeddings answer for ``body["input"]`` (data in reverse order on purpose)."""
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else texts
    data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
            for i, t in enumerate(texts)]
    return {"object": "list", "data": data[::-1], "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0}}


def chat_completion(body: dict[str, Any], text: str, *, cut: bool = False) -> dict[str, Any]:
    """An OpenAI chat.completion answering ``text`` (``cut``: cut off at the request's
    ``max_tokens``, four characters a token, as a server does)."""
    prompt = len(json.dumps(body.get("messages", ""))) // 4
    limit = body.get("max_tokens")
    finish = "stop"
    if cut and isinstance(limit, int) and len(text) > 4 * limit:
        text, finish = text[:4 * limit], "length"
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4,
                      "total_tokens": prompt + len(text) // 4,
                      "prompt_tokens_details": {"cached_tokens": prompt // 2}}}


def anthropic_message(body: dict[str, Any], text: str) -> dict[str, Any]:
    """An Anthropic message answering ``text`` (a forced tool call when tools were given)."""
    if body.get("tools"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = {"raw": text}
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_1",
                                          "name": body["tools"][0]["name"], "input": value}]
    else:
        content = [{"type": "text", "text": text}]
    prompt = len(json.dumps(body.get("messages", ""))) // 4
    return {"id": "msg_fake", "type": "message", "role": "assistant",
            "model": body.get("model", "fake"), "content": content,
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": len(text) // 4,
                      "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}


def write_batch_results(requests: Path, results: Path, responder: Responder = default_responder,
                        *, error_ids: set[str] | None = None, drop_ids: set[str] | None = None,
                        seed: int = 0) -> None:
    """The fake server's batch mode: answer a Batch requests file, in shuffled order."""
    lines = [json.loads(line) for line in requests.read_text().splitlines() if line.strip()]
    random.Random(seed).shuffle(lines)
    out: list[str] = []
    for i, req in enumerate(lines):
        cid = req["custom_id"]
        if drop_ids and cid in drop_ids:
            continue
        if error_ids and cid in error_ids:
            out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": cid, "response": None,
                                   "error": {"code": "server_error", "message": "failed"}}))
            continue
        completion = chat_completion(req["body"], responder(req["body"]))
        out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": cid,
                               "response": {"status_code": 200, "request_id": f"r{i}",
                                            "body": completion}, "error": None}))
    results.write_text("\n".join(out) + "\n")


def write_anthropic_batch_results(requests: Path, results: Path, responder: Responder,
                                  *, errored: set[str] | None = None, seed: int = 0) -> None:
    """Answer an Anthropic Message Batches requests file (``{"custom_id", "params"}``
    lines) as its results file would, in shuffled order."""
    lines = [json.loads(line) for line in requests.read_text().splitlines() if line.strip()]
    random.Random(seed).shuffle(lines)
    out = []
    for req in lines:
        cid = req["custom_id"]
        if errored and cid in errored:
            out.append(json.dumps({"custom_id": cid, "result": {"type": "errored", "error": {
                "type": "error", "error": {"type": "overloaded_error",
                                           "message": "overloaded"}}}}))
            continue
        params = req["params"]
        message = anthropic_message(params, responder(params))
        out.append(json.dumps({"custom_id": cid, "result": {"type": "succeeded",
                                                            "message": message}}))
    results.write_text("\n".join(out) + "\n")
