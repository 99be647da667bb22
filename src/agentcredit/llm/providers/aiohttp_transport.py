"""An aiohttp connection pool under the ``openai`` SDK, for many requests in flight.

The SDK's default HTTP stack scans its whole connection pool on every request and every
response; at 64 requests in flight that is about 1 ms of CPU per call, in the trainer's
process (``benchmarks/rewards_throughput.py``). aiohttp keeps idle connections in a
per-host queue. The SDK still builds the requests, follows redirects and raises its own
errors: this class only carries bytes, and maps aiohttp's failures to the httpx2 errors the
SDK classifies (a refused connection is a connection error, a read past the timeout a
timeout).

Proxies come from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``), as with
the SDK's default client, looked up once per host (aiohttp's own ``trust_env`` looks them
up in a worker thread and reads ``~/.netrc`` on every request: a third of the gain);
certificates come from the same SSL context the SDK would build.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import urllib.parse
import urllib.request
import weakref
from typing import Any

import aiohttp
import httpx2

# aiohttp failure -> the httpx2 error the SDK turns into APITimeoutError (timeouts) or
# APIConnectionError (everything else). Most specific classes first.
_ERRORS: tuple[tuple[type[BaseException], type[Exception]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx2.ConnectTimeout),
    (aiohttp.SocketTimeoutError, httpx2.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx2.ReadTimeout),
    (asyncio.TimeoutError, httpx2.ReadTimeout),
    (aiohttp.ClientProxyConnectionError, httpx2.ProxyError),
    (aiohttp.ClientHttpProxyError, httpx2.ProxyError),
    (aiohttp.ClientConnectorError, httpx2.ConnectError),
    (aiohttp.InvalidURL, httpx2.UnsupportedProtocol),
    (aiohttp.ClientPayloadError, httpx2.ReadError),
    (aiohttp.ServerDisconnectedError, httpx2.RemoteProtocolError),
    (aiohttp.ClientError, httpx2.NetworkError),
)


def _mapped(exc: BaseException) -> Exception | None:
    for source, target in _ERRORS:
        if isinstance(exc, source):
            return target(str(exc) or type(exc).__name__)
    return None


Proxy = tuple[str, aiohttp.BasicAuth | None] | None


def env_proxy(scheme: str, host: str) -> Proxy:
    """The proxy the environment names for ``scheme://host`` (None: connect directly),
    with the credentials of a ``user:password@`` proxy URL as Basic auth."""
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
    auth = aiohttp.BasicAuth(urllib.parse.unquote(parts.username),
                             urllib.parse.unquote(parts.password or ""))
    return parts._replace(netloc=netloc).geturl(), auth


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """httpx2 transport over one aiohttp session, opened in the loop of its first request."""

    def __init__(self, *, max_connections: int = 1000) -> None:
        self.max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxies: dict[tuple[str, str], Proxy] = {}

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = _Connector(limit=self.max_connections,
                                   ssl=httpx2.create_ssl_context())
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                  auto_decompress=False)
            self._loop = asyncio.get_running_loop()
            _OPEN.add(self)
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeout = request.extensions.get("timeout") or {}
        limits = aiohttp.ClientTimeout(total=None, sock_connect=timeout.get("connect"),
                                       sock_read=timeout.get("read"))
        where = (request.url.scheme, request.url.host)
        if where not in self._proxies:
            self._proxies[where] = env_proxy(*where)
        proxy = self._proxies[where]
        try:
            body = await request.aread()
            async with self._open().request(
                    request.method, str(request.url), headers=request.headers.multi_items(),
                    data=body or None, allow_redirects=False, timeout=limits,
                    proxy=proxy[0] if proxy else None,
                    proxy_auth=proxy[1] if proxy else None) as answer:
                content = await answer.read()
                # Still encoded (auto_decompress is off): httpx2 decodes by the headers it
                # receives, as it does for its own transport.
                return httpx2.Response(answer.status, headers=answer.raw_headers,
                                       content=content, request=request,
                                       extensions={"http_version": b"HTTP/1.1"})
        except Exception as exc:
            mapped = _mapped(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        _OPEN.discard(self)

    def __del__(self) -> None:
        if self._session is not None and self._loop is not None:
            _release(self._session, self._loop)


_OPEN: weakref.WeakSet[AiohttpTransport] = weakref.WeakSet()
_CLOSING: set[asyncio.Task[None]] = set()


def _close_soon(session: aiohttp.ClientSession) -> None:
    task = asyncio.get_running_loop().create_task(session.close())
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


def _release(session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop) -> None:
    """Close a session whose transport is dropped unclosed: in its loop while that runs;
    when the loop has ended its connections ended with it, and the session is only
    marked closed (aiohttp would otherwise report it unclosed when collected)."""
    if session.closed:
        return
    if loop.is_running() and not loop.is_closed():
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
    for transport in list(_OPEN):
        loop, session = transport._loop, transport._session
        if loop is None or session is None or loop.is_closed() or not loop.is_running():
            continue
        try:
            asyncio.run_coroutine_threadsafe(transport.aclose(), loop).result(timeout=2.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            continue
