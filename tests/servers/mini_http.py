"""A tiny asyncio HTTP/1.1 server with the control tests need and frameworks hide: dropping a
connection mid-request, and noticing when the client hangs up while the handler waits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

REASONS = {
    200: "OK",
    404: "Not Found",
    400: "Bad Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class Drop(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a handler to close the connection without any response."""


class ClientGone(Exception):  # noqa: N818
    """The client closed the connection while the handler was waiting."""


@dataclass
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class HttpResponse:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        payload = self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()
        head = [
            f"HTTP/1.1 {self.status} {REASONS.get(self.status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            "Connection: keep-alive",
        ]
        head += [f"{k}: {v}" for k, v in self.headers.items()]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


class ClientWatch:
    """Lets a handler wait while noticing a client that hung up (timeout, kill -9)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def wait_for(self, awaitable: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(awaitable)
        eof = asyncio.ensure_future(self._reader.read(1))
        done, _ = await asyncio.wait({task, eof}, return_when=asyncio.FIRST_COMPLETED)
        if eof in done:
            task.cancel()
            raise ClientGone
        eof.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await eof

    async def sleep(self, seconds: float) -> None:
        await self.wait_for(asyncio.sleep(seconds))


Handler = Callable[[HttpRequest, ClientWatch], Awaitable[HttpResponse]]


class MiniHTTPServer:
    """Serve `handler` on 127.0.0.1 from a background thread (start/stop) or the main thread (run)."""

    def __init__(self, handler: Handler, port: int = 0, host: str = "127.0.0.1") -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                request = HttpRequest(method, target.split("?", 1)[0], headers, body)
                try:
                    response = await self.handler(request, ClientWatch(reader))
                except Drop:
                    writer.transport.abort()
                    return
                except ClientGone:
                    return
                writer.write(response.encode())
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # shutting down or the client went away: nothing to report
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def serve(self, ready: threading.Event | None = None, lifetime_s: float | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        server = await asyncio.start_server(self._connection, self.host, self.port, backlog=512)
        self.port = server.sockets[0].getsockname()[1]
        if ready is not None:
            ready.set()
        if lifetime_s is not None:
            self._loop.call_later(lifetime_s, self._stopped.set)  # never outlive a forgotten test
        async with server:
            await self._stopped.wait()
            for writer in list(self._writers):  # keep-alive clients must not keep us running
                writer.transport.abort()

    def start(self, lifetime_s: float = 900.0) -> MiniHTTPServer:
        ready = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.serve(ready, lifetime_s)), name="mini-http", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def stop(self) -> None:
        """Stop serving; a second call does nothing."""
        if self._loop is not None and self._stopped is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> MiniHTTPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_for(server: MiniHTTPServer, lifetime: float) -> None:
    """Serve until `lifetime` seconds have passed, saying where once listening (the command-line servers)."""

    async def run() -> None:
        ready = threading.Event()
        task = asyncio.create_task(server.serve(ready, lifetime))
        while not ready.is_set():
            await asyncio.sleep(0.01)
        print(f"listening on {server.url}", flush=True)
        await task

    asyncio.run(run())
