"""Replays Ollama API exchanges (tests/fixtures/ollama) on a loopback port, since no Ollama server can be
installed here. /api/tags returns tags.json; /api/chat answers the exchange in chat.json whose model and
last user message match, or 404 with Ollama's "model not found" error. Received requests are kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .mini_http import ClientWatch, HttpRequest, HttpResponse, MiniHTTPServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ollama"


class OllamaReplay:
    def __init__(self, fixtures: Path = FIXTURES) -> None:
        self.tags = json.loads((fixtures / "tags.json").read_text())
        self.exchanges = json.loads((fixtures / "chat.json").read_text())
        self.received: list[dict[str, Any]] = []

    async def handle(self, request: HttpRequest, watch: ClientWatch) -> HttpResponse:
        if request.method == "GET" and request.path == "/api/tags":
            return HttpResponse(body=self.tags)
        if request.method == "POST" and request.path == "/api/chat":
            body = request.json()
            self.received.append(body)
            users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
            for exchange in self.exchanges:
                wanted = exchange["request"]
                if wanted["model"] == body.get("model") and users and wanted["last_user"] == users[-1]:
                    return HttpResponse(body=exchange["response"])
            return HttpResponse(
                404, {"error": f'model "{body.get("model")}" not found, try pulling it first'}
            )
        return HttpResponse(404, {"error": "404 page not found"})


def start_ollama_replay() -> tuple[MiniHTTPServer, OllamaReplay]:
    app = OllamaReplay()
    return MiniHTTPServer(app.handle).start(), app
