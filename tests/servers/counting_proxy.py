"""A counting reverse proxy: put it in front of a real server to prove how many calls a run made.

GET /__proxy_stats returns {"counts": {"POST /v1/chat/completions": n, ...}}; POST /__proxy_reset clears.
`statuses` counts the upstream's answers by status ("POST /v1/chat/completions 500": n).
"""

from __future__ import annotations

from collections import Counter

import httpx

from .mini_http import ClientWatch, HttpRequest, HttpResponse, MiniHTTPServer

_HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive"}


class CountingProxy:
    def __init__(self, upstream: str, timeout_s: float = 300.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.counts: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.authorizations: Counter[str] = Counter()  # the Authorization header of each call, as sent
        self.timeout_s = timeout_s

    async def handle(self, request: HttpRequest, watch: ClientWatch) -> HttpResponse:
        if request.path == "/__proxy_stats":
            return HttpResponse(body={"counts": dict(self.counts)})
        if request.path == "/__proxy_reset":
            self.counts.clear()
            self.statuses.clear()
            return HttpResponse(body={"ok": True})
        self.counts[f"{request.method} {request.path}"] += 1
        self.authorizations[request.headers.get("authorization", "")] += 1
        headers = {k: v for k, v in request.headers.items() if k not in _HOP_HEADERS}
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            upstream = await client.request(
                request.method, self.upstream + request.path, content=request.body, headers=headers
            )
        self.statuses[f"{request.method} {request.path} {upstream.status_code}"] += 1
        return HttpResponse(upstream.status_code, upstream.content)


def start_counting_proxy(upstream: str) -> tuple[MiniHTTPServer, CountingProxy]:
    proxy = CountingProxy(upstream)
    return MiniHTTPServer(proxy.handle).start(), proxy
