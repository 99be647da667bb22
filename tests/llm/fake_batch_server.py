"""A loopback fake of OpenAI's Files + Batches API and Anthropic's Message Batches API.

The real SDKs talk to it over real HTTP. A batch stays in progress for ``polls`` retrievals,
then ends with every request answered by ``responder`` unless ``plan(batch_number, key)``
says otherwise for that request: ``"refuse"`` (a 400 / invalid_request_error), ``"expire"``
(no answer: OpenAI's ``batch_expired`` error line, Anthropic's ``expired`` result) or
``"drop"`` (absent from the results). Files or batches over ``max_requests`` or ``max_bytes``
are refused as the providers refuse them. Everything it received is kept for the tests.
OpenAI batches keep their ``metadata`` and are listed (``GET /v1/batches``, newest first).
A fault hook: ``kill_after_create`` (a process id) is killed with SIGKILL as soon as a batch
is created, before the answer is sent: the client dies exactly between the provider's
creation and its own ledger write.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.llm.fake_server import (
    JSONHandler,
    Loopback,
    Responder,
    anthropic_message,
    chat_completion,
)

Plan = Callable[[int, str], "str | None"]


class FakeBatchServer(Loopback):
    """``with FakeBatchServer(responder) as server:``; ``server.url`` is the base URL."""

    def __init__(self, responder: Responder, *, plan: Plan | None = None, polls: int = 1,
                 max_requests: int = 50_000, max_bytes: int = 200 * 1024 * 1024) -> None:
        self.responder, self.plan, self.polls = responder, plan or (lambda n, k: None), polls
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.requests_seen: list[str] = []  # every custom_id sent in any batch
        self.uploads: list[int] = []  # bytes of each uploaded file or Anthropic batch body
        self.chat_calls = 0  # live (non-batch) calls: there must be none
        self.kill_after_create: int | None = None
        self._listen()

    # -- what a batch does --------------------------------------------------------------

    def _new_batch(self, provider: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
        with self._lock:
            number = len(self.batches) + 1
            batch_id = f"{'msgbatch' if provider == 'anthropic' else 'batch'}_{number:05d}"
            self.requests_seen += [line["custom_id"] for line in lines]
            self.batches[batch_id] = {"number": number, "provider": provider, "lines": lines,
                                      "polls": 0, "ended": False,
                                      "created_at": int(time.time())}
        return self.batches[batch_id]

    def _results(self, batch: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for line in batch["lines"]:
            key, fate = line["custom_id"], self.plan(batch["number"], line["custom_id"])
            if fate == "drop":
                continue
            if batch["provider"] == "anthropic":
                out.append({"custom_id": key, "result": _anthropic_result(
                    fate, line["params"], self.responder)})
            else:
                out.append(_openai_result(fate, key, line["body"], self.responder))
        return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path.endswith("/files"):
                    return self._upload(data)
                if self.path.endswith("/batches") and "/messages/" not in self.path:
                    return self._openai_create(json.loads(data))
                if self.path.endswith("/messages/batches"):
                    return self._anthropic_create(data)
                server.chat_calls += 1
                self._send(500, {"error": {"message": "live calls are not served here"}})

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if "/files/" in path and path.endswith("/content"):
                    file_id = path.split("/files/")[1].split("/")[0]
                    return self._raw(200, server.files[file_id], kind="application/jsonl")
                if path.endswith("/results"):
                    batch_id = path.split("/batches/")[1].split("/")[0]
                    body = "".join(json.dumps(r) + "\n"
                                   for r in server._results(server.batches[batch_id]))
                    return self._raw(200, body.encode(), kind="application/binary")
                if path.endswith("/v1/batches"):
                    views = [server._view(b) for b in reversed(list(server.batches))
                             if server.batches[b]["provider"] == "openai"]
                    return self._send(200, {"object": "list", "data": views,
                                            "has_more": False})
                batch_id = path.rsplit("/", 1)[1]
                if batch_id not in server.batches:
                    return self._send(404, {"error": {"message": f"no route {path}"}})
                batch = server.batches[batch_id]
                batch["polls"] += 1
                if batch["polls"] > server.polls and not batch["ended"]:
                    server._end(batch_id)
                self._send(200, server._view(batch_id))

            def _upload(self, data: bytes) -> None:
                parser = email.parser.BytesParser(policy=email.policy.HTTP)
                message = parser.parsebytes(
                    b"Content-Type: " + self.headers["content-type"].encode() + b"\r\n\r\n"
                    + data)
                content = next(part.get_payload(decode=True) for part in message.iter_parts()
                               if part.get_param("name", header="content-disposition") == "file")
                server.uploads.append(len(content))
                if len(content) > server.max_bytes:
                    return self._send(400, {"error": {"message": "file too large"}})
                with server._lock:
                    file_id = f"file-{len(server.files) + 1:05d}"
                    server.files[file_id] = content
                self._send(200, {"id": file_id, "object": "file", "bytes": len(content),
                                 "created_at": 0, "filename": "batch.jsonl",
                                 "purpose": "batch", "status": "processed"})

            def _openai_create(self, body: dict[str, Any]) -> None:
                content = server.files[body["input_file_id"]].decode()
                lines = [json.loads(x) for x in content.splitlines() if x.strip()]
                if len(lines) > server.max_requests:
                    return self._send(400, {"error": {"message": "too many requests"}})
                batch = server._new_batch("openai", lines)
                batch["input_file_id"] = body["input_file_id"]
                batch["metadata"] = body.get("metadata")
                server._fault()
                self._send(200, server._view(f"batch_{batch['number']:05d}"))

            def _anthropic_create(self, data: bytes) -> None:
                server.uploads.append(len(data))
                lines = json.loads(data)["requests"]
                if len(lines) > server.max_requests or len(data) > server.max_bytes:
                    return self._send(413, {"type": "error", "error": {
                        "type": "request_too_large", "message": "batch too large"}})
                batch = server._new_batch("anthropic", lines)
                server._fault()
                self._send(200, server._view(f"msgbatch_{batch['number']:05d}"))

        return Handler

    def _fault(self) -> None:
        if self.kill_after_create is not None:
            import os
            import signal

            os.kill(self.kill_after_create, signal.SIGKILL)
            self.kill_after_create = None

    def _end(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        batch["ended"] = True
        if batch["provider"] == "openai":
            results = self._results(batch)
            ok = [r for r in results if r.get("response", {}) and
                  (r["response"] or {}).get("status_code") == 200]
            bad = [r for r in results if r not in ok]
            for name, rows in (("output", ok), ("error", bad)):
                if rows:
                    file_id = f"file-{len(self.files) + 1:05d}"
                    self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                    batch[f"{name}_file_id"] = file_id
            batch["counts"] = {"total": len(batch["lines"]), "completed": len(ok),
                               "failed": len(bad)}

    def _view(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        total = len(batch["lines"])
        if batch["provider"] == "anthropic":
            ended = batch["ended"]
            return {"id": batch_id, "type": "message_batch",
                    "processing_status": "ended" if ended else "in_progress",
                    "request_counts": {"processing": 0 if ended else total,
                                       "succeeded": total if ended else 0, "errored": 0,
                                       "canceled": 0, "expired": 0},
                    "created_at": "2026-12-01T00:00:00Z", "expires_at": "2026-12-02T00:00:00Z",
                    "ended_at": "2026-12-01T01:00:00Z" if ended else None,
                    "archived_at": None, "cancel_initiated_at": None,
                    "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results"
                    if ended else None}
        return {"id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                "input_file_id": batch.get("input_file_id", ""), "completion_window": "24h",
                "created_at": batch["created_at"],
                "status": "completed" if batch["ended"] else "in_progress",
                "metadata": batch.get("metadata"),
                "output_file_id": batch.get("output_file_id"),
                "error_file_id": batch.get("error_file_id"),
                "request_counts": batch.get("counts", {"total": total, "completed": 0,
                                                       "failed": 0})}


def _openai_result(fate: str | None, key: str, body: dict[str, Any],
                   responder: Responder) -> dict[str, Any]:
    if fate == "refuse":
        return {"id": f"r-{key[:8]}", "custom_id": key, "error": None, "response": {
            "status_code": 400, "request_id": "x", "body": {"error": {
                "message": "content filter: the prompt was refused", "type": "invalid_request"}}}}
    if fate == "expire":
        return {"id": f"r-{key[:8]}", "custom_id": key, "response": None,
                "error": {"code": "batch_expired", "message": "This request could not be "
                          "executed before the completion window expired."}}
    return {"id": f"r-{key[:8]}", "custom_id": key, "error": None, "response": {
        "status_code": 200, "request_id": f"req-{key[:8]}",
        "body": chat_completion(body, responder(body))}}


def _anthropic_result(fate: str | None, params: dict[str, Any],
                      responder: Responder) -> dict[str, Any]:
    if fate == "refuse":
        return {"type": "errored", "error": {"type": "error", "error": {
            "type": "invalid_request_error", "message": "prompt refused by a content filter"}}}
    if fate == "expire":
        return {"type": "expired"}
    return {"type": "succeeded", "message": anthropic_message(params, responder(params))}


def _serve_in_child(responder: Responder, polls: int, queue: Any) -> None:
    import time

    with FakeBatchServer(responder, polls=polls) as server:
        queue.put(server.url)
        time.sleep(24 * 3600)


def batch_server_process(responder: Responder, *, polls: int = 2) -> Any:
    """A FakeBatchServer in a process of its own (``responder`` must be a module-level
    function); returns (process, base URL). Terminate the process when done."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_serve_in_child, args=(responder, polls, queue), daemon=True)
    proc.start()
    return proc, queue.get(timeout=60)
