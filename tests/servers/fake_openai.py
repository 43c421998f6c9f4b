"""A fake OpenAI chat-completions server with deterministic answers and injected faults.

Answers are `echo <sha256 of the messages>` (or a JSON instance of the requested schema), so any run
can be compared with any other. A configurable share of requests fails first with 429 + Retry-After,
500, a hang past the client's timeout, or a dropped connection; at most `max_faults_per_prompt` times
per prompt, so every request is answered eventually. GET /stats gives per-prompt counts.

    python -m tests.servers.fake_openai --port 8011 --fault-rate 0.2 [--delay 0.2]

Control (JSON bodies): POST /reset; POST /control {"hold_after": K} answers the first K chat requests
and holds the rest until {"hold_after": null}; held or hung requests whose client hangs up count as
"aborted", never as "answered". Prompt markers: "[[invalid-json]]", "[[empty-length]]",
"[[needs-budget:N]]" (empty, finish_reason "length", while the token budget is below N), "[[think]]".
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from .mini_http import ClientGone, ClientWatch, Drop, HttpRequest, HttpResponse, MiniHTTPServer, serve_for

FAULT_KINDS = ("429", "500", "hang", "drop")
MODEL_ID = "fake-model"


def digest(messages: list[dict[str, Any]]) -> str:
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def expected_answer(messages: list[dict[str, Any]]) -> str:
    """What the server answers to these messages (no markers, no schema)."""
    return f"echo {digest(messages)[:16]}"


def prompt_of(messages: list[dict[str, Any]]) -> str:
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    return str(users[-1]) if users else ""


def instance_of(schema: dict[str, Any], seed: str, root: dict[str, Any] | None = None) -> Any:
    """A deterministic value that validates against a simple JSON schema."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return instance_of(root.get("$defs", {}).get(name, {}), seed, root)
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return instance_of(schema[combo][0], seed, root)
    if "enum" in schema:
        return schema["enum"][int(seed[:8], 16) % len(schema["enum"])]
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {
            k: instance_of(v, hashlib.sha256((seed + k).encode()).hexdigest(), root) for k, v in props.items()
        }
    if kind == "array":
        return [instance_of(schema.get("items", {}), seed, root)]
    if kind == "integer":
        return int(seed[:4], 16) % 100
    if kind == "number":
        return int(seed[:4], 16) / 100
    if kind == "boolean":
        return int(seed[0], 16) % 2 == 0
    return f"v{seed[:6]}"


@dataclass
class FaultConfig:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    max_faults_per_prompt: int = 2
    retry_after_s: float = 0.05
    hang_s: float = 30.0
    delay_s: float = 0.0
    seed: int = 0


@dataclass
class PromptStats:
    requests: int = 0
    answered: int = 0
    faults: int = 0
    aborted: int = 0
    last_params: dict[str, Any] = field(default_factory=dict)


class FakeOpenAI:
    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self.reset()

    def reset(self) -> None:
        self.prompts: dict[str, PromptStats] = defaultdict(PromptStats)
        self.faults: Counter[str] = Counter()
        self.admitted = 0
        self.answering = self.peak_in_flight = 0  # chat requests being answered now, and the most at once
        self.hold_after: int | None = None
        self.release = asyncio.Event()  # binds to the serving loop on first use (Python >= 3.10)

    def stats(self) -> dict[str, Any]:
        prompts = {p: vars(s) for p, s in self.prompts.items()}
        return {
            "requests": sum(s.requests for s in self.prompts.values()),
            "answered": sum(s.answered for s in self.prompts.values()),
            "aborted": sum(s.aborted for s in self.prompts.values()),
            "faults": dict(self.faults),
            "peak_in_flight": self.peak_in_flight,
            "prompts": prompts,
        }

    def _roll(self, prompt: str, attempt: int) -> float:
        h = hashlib.sha256(f"{self.config.seed}:{prompt}:{attempt}".encode()).hexdigest()
        return int(h[:8], 16) / 0xFFFFFFFF

    async def handle(self, request: HttpRequest, watch: ClientWatch) -> HttpResponse:
        path = request.path.removeprefix("/v1")
        if request.method == "GET" and path == "/models":
            return HttpResponse(body={"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        if request.method == "GET" and path == "/stats":
            return HttpResponse(body=self.stats())
        if request.method == "POST" and path == "/reset":
            self.reset()
            return HttpResponse(body={"ok": True})
        if request.method == "POST" and path == "/control":
            return self._control(request.json() or {})
        if request.method == "POST" and path == "/chat/completions":
            return await self._chat(request.json(), watch)
        return HttpResponse(404, {"error": {"message": f"no route {request.method} {request.path}"}})

    def _control(self, body: dict[str, Any]) -> HttpResponse:
        if "hold_after" in body:
            self.hold_after = body["hold_after"]
            if self.hold_after is None:
                self.release.set()
            else:
                self.release.clear()
        for name in ("rate", "delay_s", "hang_s", "retry_after_s", "max_faults_per_prompt"):
            if name in body:
                setattr(self.config, name, body[name])
        return HttpResponse(body={"ok": True, "hold_after": self.hold_after})

    async def _chat(self, body: dict[str, Any], watch: ClientWatch) -> HttpResponse:
        messages = body.get("messages") or []
        prompt = prompt_of(messages)
        stats = self.prompts[prompt]
        stats.requests += 1
        stats.last_params = {k: v for k, v in body.items() if k != "messages"}
        self.answering += 1
        self.peak_in_flight = max(self.peak_in_flight, self.answering)
        try:
            if self.hold_after is not None and self.admitted >= self.hold_after:
                await watch.wait_for(self.release.wait())
            self.admitted += 1
            cfg = self.config
            if stats.faults < cfg.max_faults_per_prompt and self._roll(prompt, stats.requests) < cfg.rate:
                kind = cfg.kinds[int(self._roll(prompt, -stats.requests) * len(cfg.kinds)) % len(cfg.kinds)]
                stats.faults += 1
                self.faults[kind] += 1
                if kind == "429":
                    return HttpResponse(
                        429,
                        {
                            "error": {
                                "message": "Rate limit reached",
                                "type": "rate_limit_error",
                                "code": "rate_limit_exceeded",
                            }
                        },
                        {"Retry-After": f"{cfg.retry_after_s:g}"},
                    )
                if kind == "500":
                    return HttpResponse(
                        500, {"error": {"message": "The server had an error", "type": "server_error"}}
                    )
                if kind == "drop":
                    raise Drop
                await watch.sleep(cfg.hang_s)  # "hang": the client times out first
            if cfg.delay_s:
                await watch.sleep(cfg.delay_s)
        except ClientGone:
            stats.aborted += 1
            raise
        finally:
            self.answering -= 1
        stats.answered += 1
        return HttpResponse(body=self._reply(body, messages, prompt))

    def _reply(self, body: dict[str, Any], messages: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
        content = expected_answer(messages)
        finish = "stop"
        budget = body.get("max_completion_tokens") or body.get("max_tokens") or 10**9
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            schema = response_format["json_schema"]["schema"]
            content = json.dumps(instance_of(schema, digest(messages)))
        if "[[invalid-json]]" in prompt:
            content = "this is not JSON {"
        if "[[think]]" in prompt:
            content = f"<think>Let me work through {digest(messages)[:6]}.</think>{content}"
        needs = re.search(r"\[\[needs-budget:(\d+)\]\]", prompt)
        if "[[empty-length]]" in prompt or (needs and budget < int(needs.group(1))):
            content, finish = "", "length"
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1
        completion_tokens = max(1, len(content) // 4)
        return {
            "id": f"chatcmpl-{digest(messages)[:12]}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", MODEL_ID),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def start_fake_openai(config: FaultConfig | None = None, port: int = 0) -> tuple[MiniHTTPServer, FakeOpenAI]:
    """Start in a background thread; returns (server, app). Stop with server.stop()."""
    app = FakeOpenAI(config)
    return MiniHTTPServer(app.handle, port=port).start(), app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--faults", default=",".join(FAULT_KINDS), help="comma list of 429,500,hang,drop")
    parser.add_argument("--max-faults-per-prompt", type=int, default=2)
    parser.add_argument("--retry-after", type=float, default=0.05, help="seconds sent in Retry-After")
    parser.add_argument("--hang", type=float, default=30.0, help="seconds a hanging request waits")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument(
        "--lifetime", type=float, default=3600.0, help="stop by itself after this many seconds"
    )
    args = parser.parse_args()
    config = FaultConfig(
        rate=args.fault_rate,
        kinds=tuple(args.faults.split(",")),
        max_faults_per_prompt=args.max_faults_per_prompt,
        retry_after_s=args.retry_after,
        hang_s=args.hang,
        delay_s=args.delay,
    )
    server = MiniHTTPServer(FakeOpenAI(config).handle, port=args.port)
    serve_for(server, args.lifetime)


if __name__ == "__main__":
    main()
