"""The fake OpenAI server plus the Files and Batches endpoints, in OpenAI's documented wire format.

No OpenAI server can be reached from the test machines, so the Batch API is exercised against this
loopback server with the real `openai` client: POST /v1/files (multipart upload, purpose "batch"),
GET /v1/files/{id}/content, POST /v1/batches, GET /v1/batches/{id}, GET /v1/batches (list, newest first).
A batch runs its lines in the background (`batch_concurrency` at a time, `delay_s` each) and answers them
like /v1/chat/completions; `batch_fault_rate` fails a line with HTTP 500 inside the batch (at most
`max_faults_per_prompt` times per prompt). POST /control {"batch_hold": true} keeps batches in_progress
until {"batch_hold": false}. Every line ever submitted is counted by custom_id (`submitted`) and every
answer produced, live or by batch, by request body (`paid`), so a test can prove nothing was paid twice.

    python -m tests.servers.fake_batch --port 8012 --delay 0.2 [--limit-in-flight 20]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from collections import Counter
from typing import Any

from .fake_openai import FakeOpenAI, FaultConfig, prompt_of
from .mini_http import ClientWatch, HttpRequest, HttpResponse, MiniHTTPServer, serve_for


def body_identity(body: dict[str, Any]) -> str:
    """What a provider bills for: model, messages, sampling params and response format."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """{field: (filename, bytes)} of a multipart/form-data body."""
    boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in body.split(b"--" + boundary):
        if b"\r\n\r\n" not in part:
            continue
        head, data = part.split(b"\r\n\r\n", 1)
        disposition = next((line for line in head.decode().split("\r\n") if "name=" in line), "")
        attrs = dict(
            item.strip().split("=", 1) for item in disposition.split(";") if "=" in item
        )
        name = attrs.get("name", "").strip('"')
        filename = attrs["filename"].strip('"') if "filename" in attrs else None
        fields[name] = (filename, data.removesuffix(b"\r\n"))
    return fields


class FakeBatchOpenAI(FakeOpenAI):
    def __init__(self, config: FaultConfig | None = None, batch_concurrency: int = 64,
                 limit_in_flight: int | None = None, batch_fault_rate: float = 0.0) -> None:
        self.batch_concurrency = batch_concurrency
        self.batch_fault_rate = batch_fault_rate
        self.limit_in_flight = limit_in_flight  # answer 429 (Retry-After: 1) above this many chat requests
        super().__init__(config)

    def reset(self) -> None:
        super().reset()
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: Counter[str] = Counter()  # custom_id -> lines submitted in any batch
        self.paid: Counter[str] = Counter()  # request body -> answers produced (live or batch)
        self.batch_faults: Counter[str] = Counter()
        self.batch_hold = False
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0

    def stats(self) -> dict[str, Any]:
        stats = super().stats()
        stats.update(
            batches_created=len(self.batches),
            lines_submitted=sum(self.submitted.values()),
            submitted_twice=sum(n - 1 for n in self.submitted.values() if n > 1),
            paid=sum(self.paid.values()),
            paid_twice=sum(n - 1 for n in self.paid.values() if n > 1),
            batch_faults=sum(self.batch_faults.values()),
            max_in_flight=self.max_in_flight,
            rate_limited=self.rate_limited,
        )
        return stats

    async def handle(self, request: HttpRequest, watch: ClientWatch) -> HttpResponse:
        path = request.path.removeprefix("/v1")
        if request.method == "POST" and path == "/control":
            body = request.json() or {}
            if "batch_hold" in body:
                self.batch_hold = bool(body["batch_hold"])
            for name in ("batch_concurrency", "limit_in_flight", "batch_fault_rate"):
                if name in body:
                    setattr(self, name, body[name])
        if request.method == "POST" and path == "/chat/completions":
            return await self._limited_chat(request, watch)
        if request.method == "POST" and path == "/files":
            return self._upload(request)
        if request.method == "GET" and path.startswith("/files/") and path.endswith("/content"):
            file_id = path.split("/")[2]
            if file_id not in self.contents:
                return HttpResponse(404, {"error": {"message": f"No such File object: {file_id}"}})
            return HttpResponse(body=self.contents[file_id])
        if request.method == "POST" and path == "/batches":
            return self._create_batch(request.json() or {})
        if request.method == "GET" and path == "/batches":
            data = sorted(self.batches.values(), key=lambda b: b["created_at"], reverse=True)
            return HttpResponse(body={"object": "list", "data": data, "has_more": False,
                                      "first_id": data[0]["id"] if data else None,
                                      "last_id": data[-1]["id"] if data else None})
        if request.method == "GET" and path.startswith("/batches/"):
            batch = self.batches.get(path.split("/")[2])
            if batch is None:
                return HttpResponse(404, {"error": {"message": "No such Batch"}})
            return HttpResponse(body=batch)
        return await super().handle(request, watch)

    async def _limited_chat(self, request: HttpRequest, watch: ClientWatch) -> HttpResponse:
        """Chat completions, answering 429 with Retry-After: 1 above `limit_in_flight` concurrent requests."""
        if self.limit_in_flight is not None and self.in_flight >= self.limit_in_flight:
            self.rate_limited += 1
            return HttpResponse(
                429,
                {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
                {"Retry-After": "1"},
            )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            response = await self._chat(request.json(), watch)
        finally:
            self.in_flight -= 1
        if response.status == 200:
            self.paid[body_identity(request.json())] += 1
        return response

    def _upload(self, request: HttpRequest) -> HttpResponse:
        fields = parse_multipart(request.headers.get("content-type", ""), request.body)
        filename, data = fields.get("file", (None, b""))
        purpose = fields.get("purpose", (None, b""))[1].decode()
        file_id = f"file-{len(self.files) + 1:06d}"
        self.contents[file_id] = data
        self.files[file_id] = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                               "filename": filename or "upload.jsonl", "purpose": purpose, "status": "processed"}
        return HttpResponse(body=self.files[file_id])

    def _store_file(self, lines: list[dict[str, Any]], purpose: str) -> str | None:
        if not lines:
            return None
        file_id = f"file-{len(self.files) + 1:06d}"
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        self.contents[file_id] = data
        self.files[file_id] = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                               "filename": f"{file_id}.jsonl", "purpose": purpose, "status": "processed"}
        return file_id

    def _create_batch(self, body: dict[str, Any]) -> HttpResponse:
        file_id = body.get("input_file_id")
        if file_id not in self.contents:
            return HttpResponse(400, {"error": {"message": f"input_file_id {file_id!r} not found"}})
        lines = [json.loads(line) for line in self.contents[file_id].decode().splitlines() if line.strip()]
        for line in lines:
            self.submitted[line["custom_id"]] += 1
        batch_id = f"batch_{len(self.batches) + 1:06d}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
            "input_file_id": file_id, "completion_window": body.get("completion_window"),
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()) + len(self.batches),  # strictly increasing: list is newest first
            "in_progress_at": None, "completed_at": None, "expires_at": int(time.time()) + 86400,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        self.batches[batch_id] = batch
        asyncio.ensure_future(self._process(batch, lines))
        return HttpResponse(body=batch)

    async def _process(self, batch: dict[str, Any], lines: list[dict[str, Any]]) -> None:
        batch["status"] = "in_progress"
        batch["in_progress_at"] = int(time.time())
        while self.batch_hold:
            await asyncio.sleep(0.02)
        gate = asyncio.Semaphore(self.batch_concurrency)
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        rate = self.batch_fault_rate

        async def one(n: int, line: dict[str, Any]) -> None:
            async with gate:
                if self.config.delay_s:
                    await asyncio.sleep(self.config.delay_s)
            body = line["body"]
            messages = body.get("messages") or []
            prompt = prompt_of(messages)
            request_id = f"req_{batch['id']}_{n}"
            if self.batch_faults[prompt] < self.config.max_faults_per_prompt and \
                    self._roll(prompt, 1000 + self.batch_faults[prompt]) < rate:
                self.batch_faults[prompt] += 1
                errors.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": 500, "request_id": request_id,
                                            "body": {"error": {"message": "The server had an error",
                                                               "type": "server_error"}}}})
                batch["request_counts"]["failed"] += 1
                return
            self.paid[body_identity(body)] += 1
            outputs.append({"id": f"batch_req_{n}", "custom_id": line["custom_id"], "error": None,
                            "response": {"status_code": 200, "request_id": request_id,
                                         "body": self._reply(body, messages, prompt)}})
            batch["request_counts"]["completed"] += 1

        await asyncio.gather(*(one(n, line) for n, line in enumerate(lines)))
        batch["status"] = "finalizing"
        batch["output_file_id"] = self._store_file(outputs, "batch_output")
        batch["error_file_id"] = self._store_file(errors, "batch_output")
        batch["status"] = "completed"
        batch["completed_at"] = int(time.time())


def start_fake_batch(config: FaultConfig | None = None, **kw: Any) -> tuple[MiniHTTPServer, FakeBatchOpenAI]:
    """Start in a background thread; returns (server, app). Stop with server.stop()."""
    app = FakeBatchOpenAI(config, **kw)
    return MiniHTTPServer(app.handle).start(), app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--limit-in-flight", type=int, default=None, help="429 above this many chat requests")
    parser.add_argument("--batch-concurrency", type=int, default=64)
    parser.add_argument("--lifetime", type=float, default=3600.0)
    args = parser.parse_args()
    app = FakeBatchOpenAI(FaultConfig(delay_s=args.delay), batch_concurrency=args.batch_concurrency,
                          limit_in_flight=args.limit_in_flight)
    server = MiniHTTPServer(app.handle, port=args.port)
    serve_for(server, args.lifetime)


if __name__ == "__main__":
    main()
