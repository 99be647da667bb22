"""The OpenAI-compatible provider's hot path: JSON POSTs over one aiohttp connection pool.

At 64 requests in flight the ``openai`` SDK costs about 1.8 ms of CPU per call in the
caller's event loop (its request building, URL parsing and a connection pool that is
scanned on every request and answer), the same order as the model's turnaround on a local
server; the trainer waits on it. This pool costs under 1 ms (``benchmarks/
rewards_throughput.py``). The SDK still says where and how to call: base URL, API key,
organisation and project headers come from an SDK client built the usual way (arguments,
then ``OPENAI_*`` variables); only the bytes travel here. ``AGENTCREDIT_HTTP=httpx`` (or
aiohttp missing) sends everything through the SDK instead.

Proxies come from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``), looked up
once per host (aiohttp's own ``trust_env`` looks them up in a worker thread and reads
``~/.netrc`` on every request); certificates as the SDK finds them: ``SSL_CERT_FILE`` or
``SSL_CERT_DIR``, else certifi's bundle, else the system's.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import concurrent.futures
import json
import os
import ssl
import urllib.parse
import urllib.request
import weakref
from typing import Any

import aiohttp

from agentcredit.errors import ProviderError
from agentcredit.llm.providers.base import one_line

Proxy = tuple[str, dict[str, str] | None] | None


def env_proxy(scheme: str, host: str) -> Proxy:
    """The proxy the environment names for ``scheme://host`` (None: connect directly),
    with the credentials of a ``user:password@`` proxy URL as a Basic
    ``Proxy-Authorization`` header (aiohttp deprecates its ``proxy_auth``; the header goes
    with a tunnel's CONNECT, or with the request itself over plain HTTP)."""
    if urllib.request.proxy_bypass(host):
        return None
    url = urllib.request.getproxies().get(scheme)
    if not url:
        return None
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if parts.username is None:
        return parts.geturl(), None
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    secret = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
    header = "Basic " + base64.b64encode(secret.encode("utf-8")).decode("ascii")
    return parts._replace(netloc=netloc).geturl(), {"Proxy-Authorization": header}


def _ssl_context() -> ssl.SSLContext:
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            pass
    return ssl.create_default_context(cafile=cafile or None, capath=capath or None)


class HttpAnswer:
    """Status, headers and the decoded JSON (or None) of one answer."""

    __slots__ = ("data", "headers", "status", "text")

    def __init__(self, status: int, headers: Any, raw: bytes) -> None:
        self.status = status
        self.headers = headers
        self.text = raw.decode("utf-8", "replace")
        try:
            self.data: Any = json.loads(raw)
        except ValueError:
            self.data = None


MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""An answer larger than this is refused while it arrives (a chat answer is kilobytes, an
embeddings batch a few megabytes): a broken or hostile server cannot fill the memory."""


async def _bounded(answer: aiohttp.ClientResponse) -> bytes:
    declared = answer.content_length
    if declared is not None and declared > MAX_ANSWER_BYTES:
        raise _too_large(declared)
    chunks: list[bytes] = []
    size = 0
    async for chunk in answer.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise _too_large(size)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int) -> ProviderError:
    return ProviderError("malformed_response", f"answer refused: {_size(size)} or more, over "
                         f"the {_size(MAX_ANSWER_BYTES)} limit")


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB"


class PooledSession:
    """One aiohttp session (opened in the loop of its first request) posting JSON to one
    base URL with fixed headers. Raises ProviderError for timeouts and connection
    failures; HTTP statuses are the caller's to read."""

    def __init__(self, base_url: str, headers: dict[str, str], *,
                 max_connections: int = 1000) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {**headers, "Content-Type": "application/json"}
        self.max_connections = max_connections
        parts = urllib.parse.urlsplit(self.base_url)
        self.proxy = env_proxy(parts.scheme, parts.hostname or "")
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()  # a forked worker inherits the object, not the loop's thread

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = _Connector(limit=self.max_connections, ssl=_ssl_context())
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
            self._loop = asyncio.get_running_loop()
            self._pid = os.getpid()
            _OPEN.add(self)
        return self._session

    async def post(self, path: str, body: dict[str, Any], timeout: float) -> HttpAnswer:
        """POST ``body`` as JSON to ``base_url + path`` (or to ``path`` when it is a URL).

        ``timeout`` bounds the connection and the wait for the whole answer; a request given
        up is cancelled on the wire (its connection is closed, not returned to the pool)."""
        return await self._request("POST", path, json.dumps(body).encode(), timeout)

    async def get(self, path: str, timeout: float) -> HttpAnswer:
        """GET ``base_url + path`` (or ``path`` when it is a URL)."""
        return await self._request("GET", path, None, timeout)

    async def _request(self, method: str, path: str, data: bytes | None,
                       timeout: float) -> HttpAnswer:
        limits = aiohttp.ClientTimeout(total=timeout, sock_connect=timeout)
        proxy, proxy_headers = self.proxy if self.proxy is not None else (None, None)
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        headers = self.headers
        if proxy_headers and not url.startswith("https://"):
            headers = {**headers, **proxy_headers}  # plain HTTP: the proxy reads the request
        try:
            async with self._open().request(
                    method, url, data=data, headers=headers,
                    timeout=limits, proxy=proxy, proxy_headers=proxy_headers) as answer:
                return HttpAnswer(answer.status, answer.headers, await _bounded(answer))
        except (TimeoutError, aiohttp.ServerTimeoutError):
            raise ProviderError("timeout", "request timed out") from None
        except aiohttp.ClientError as exc:
            raise ProviderError("connection", f"connection failed: {one_line(exc)}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        _OPEN.discard(self)

    def __del__(self) -> None:
        if self._session is not None and self._loop is not None:
            _release(self._session, self._loop, forked=self._pid != os.getpid())


_OPEN: weakref.WeakSet[PooledSession] = weakref.WeakSet()
_CLOSING: set[asyncio.Task[None]] = set()


def _close_soon(session: aiohttp.ClientSession) -> None:
    task = asyncio.get_running_loop().create_task(session.close())
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


def _release(session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop, *,
             forked: bool = False) -> None:
    """Close a session dropped unclosed: in its loop while that runs; when the loop has
    ended (or runs in the parent of a forked process) its connections are not ours to use,
    and the session is only marked closed (aiohttp would otherwise report it unclosed on
    stderr when it is collected)."""
    if session.closed:
        return
    if not forked and loop.is_running() and not loop.is_closed():
        try:
            loop.call_soon_threadsafe(_close_soon, session)
            return
        except RuntimeError:
            pass  # the loop closed in between
    connector = session.connector
    session.detach()
    if isinstance(connector, _Connector):
        connector.ended = True


class _Connector(aiohttp.TCPConnector):
    """A TCPConnector that does not report the connections of an ended loop as leaked."""

    ended = False

    def __del__(self, _warnings: Any = None) -> None:
        if not self.ended:
            super().__del__()


@atexit.register
def _close_at_exit() -> None:
    """Close the sessions still open in loops that run in other threads (the reward hooks'
    shared loop, a trainer's reward loop) before the interpreter stops those threads."""
    for pooled in list(_OPEN):
        loop, session = pooled._loop, pooled._session
        if loop is None or session is None or loop.is_closed() or not loop.is_running() \
                or pooled._pid != os.getpid():
            continue
        try:
            asyncio.run_coroutine_threadsafe(pooled.close(), loop).result(timeout=2.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            continue
