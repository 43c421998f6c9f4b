"""A stand-in Ollama server: Ollama's wire format (/api/tags, /api/chat), its replies written by a real model.

No Ollama can be installed here (it is not on PyPI), so this process speaks the documented API to the official
`ollama` client and answers with the embedded GGUF, run in-process by llama-cpp-python: a request's `format`
schema becomes llama.cpp's grammar-constrained JSON, `options.num_predict` its token limit, `done_reason`
"length" a cut reply. It lists the names given with --name (each served by the one model) and counts every
request (GET /__stats). Run it as its own process, so that a test or a fleet recipe can stop it like a server:

    python -m tests.servers.fake_ollama --port 11435 --name smollm-c --name judge-c
"""

from __future__ import annotations

import argparse
import json
import threading
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cfa_lib.models.names import default_gguf


class FakeOllama:
    def __init__(self, names: list[str], n_ctx: int = 2048) -> None:
        from llama_cpp import Llama

        self.names = [n if ":" in n else f"{n}:latest" for n in names]
        self.llm = Llama(model_path=str(default_gguf()), n_ctx=n_ctx, seed=0, verbose=False)
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def tags(self) -> dict[str, Any]:
        return {"models": [{"name": n, "model": n, "modified_at": "2026-11-28T00:00:00Z", "size": 0,
                            "digest": "0" * 64, "details": {"format": "gguf", "family": "llama"}}
                           for n in self.names]}

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        name = body.get("model", "")
        if (name if ":" in name else f"{name}:latest") not in self.names:
            return 404, {"error": f'model "{name}" not found, try pulling it first'}
        options = body.get("options") or {}
        fmt = body.get("format")
        response_format = ({"type": "json_object", "schema": fmt} if isinstance(fmt, dict)
                           else {"type": "json_object"} if fmt == "json" else None)
        with self.lock:
            reply = self.llm.create_chat_completion(
                messages=body["messages"], temperature=options.get("temperature", 0.8),
                seed=options.get("seed"), max_tokens=options.get("num_predict"), response_format=response_format)
        choice, usage = reply["choices"][0], reply["usage"]
        return 200, {"model": name, "created_at": datetime.now(UTC).isoformat(), "done": True,
                     "message": {"role": "assistant", "content": choice["message"]["content"] or ""},
                     "done_reason": "length" if choice["finish_reason"] == "length" else "stop",
                     "prompt_eval_count": usage["prompt_tokens"], "eval_count": usage["completion_tokens"]}


def handler_for(app: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/api/tags":
                app.counts["GET /api/tags"] += 1
                self._send(200, app.tags())
            elif self.path == "/__stats":
                self._send(200, {"counts": dict(app.counts)})
            else:
                self._send(404, {"error": "404 page not found"})

        def do_POST(self) -> None:  # noqa: N802
            app.counts[f"POST {self.path}"] += 1
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if self.path == "/api/chat":
                self._send(*app.chat(body))
            else:
                self._send(404, {"error": "404 page not found"})

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet, like a server in a test
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=11434)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--name", action="append", required=True, help="a model name it serves (repeat)")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), handler_for(FakeOllama(args.name)))
    print(f"fake Ollama serving {', '.join(args.name)} at http://{args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
