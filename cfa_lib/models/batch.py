"""OpenAI's Batch API: a run's uncached requests as one JSONL file at half the price, resumable after kill -9.

Each submission is written to the cache (`batch_jobs`) under a fresh tag *before* it is uploaded, and
its batch id as soon as OpenAI returns it; the tag also goes into the batch's metadata. A run started
again with the same command therefore polls the batches it finds there instead of submitting again, and
even a process killed between `batches.create` and recording the id is recovered by finding its tag.
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from tqdm.auto import tqdm

from .backend import BatchAPI, Messages, RawReply
from .cache import CompletionCache
from .openai_backend import reply_from
from .types import Schema

log = logging.getLogger("cfa_lib.models")

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS_PER_BATCH = 50_000  # OpenAI's limit per input file
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
POLL_FIRST_S = 0.5


class NoBatchAPI(Exception):  # noqa: N818 - a signal: the server has no /v1/files or /v1/batches
    """The OpenAI-compatible server has no Batch API; the caller runs live instead."""


@dataclass
class BatchItem:
    """One request to send by batch; params may change between rounds (a doubled token budget)."""

    key: str
    messages: Messages
    params: dict[str, Any]
    schema: Schema | None


@dataclass
class BatchOutcome:
    replies: dict[str, RawReply] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    batch_ids: list[str] = field(default_factory=list)


def poll_max_s() -> float:
    """Longest wait between two polls (CFA_BATCH_POLL_S, default 30 s); polls start at 0.5 s."""
    try:
        return max(0.05, float(os.environ.get("CFA_BATCH_POLL_S") or 30.0))
    except ValueError:
        return 30.0


class BatchRunner:
    """Submit, record, poll and collect batches for one model through the official client."""

    def __init__(self, backend: BatchAPI, cache: CompletionCache, model: str) -> None:
        self.backend = backend
        self.cache = cache
        self.model = model

    # -- submission -----------------------------------------------------------------------------
    def _submit(self, api: openai.OpenAI, items: list[BatchItem]) -> tuple[str, str]:
        tag = uuid.uuid4().hex
        self.cache.add_batch_job(tag, self.model, [item.key for item in items])  # before anything is sent
        lines = [
            json.dumps(
                {
                    "custom_id": item.key,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.backend.batch_body(item.messages, item.params, item.schema),
                },
                ensure_ascii=False,
            )
            for item in items
        ]
        data = ("\n".join(lines) + "\n").encode()
        try:
            uploaded = api.files.create(file=(f"cfa-{tag}.jsonl", io.BytesIO(data)), purpose="batch")
        except openai.NotFoundError as exc:
            self.cache.remove_batch_job(tag)
            raise NoBatchAPI(str(exc)) from exc
        batch = api.batches.create(
            input_file_id=uploaded.id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata={"cfa_tag": tag, "cfa_model": self.model[:500]},
        )
        self.cache.set_batch_id(tag, batch.id)
        log.info("%s: submitted batch %s with %d requests", self.model, batch.id, len(items))
        return tag, batch.id

    def _find_by_tag(self, api: openai.OpenAI, tag: str) -> str | None:
        """The batch a killed run created but did not record (searched among the newest 100)."""
        for batch in api.batches.list(limit=100).data:
            if (batch.metadata or {}).get("cfa_tag") == tag:
                return batch.id
        return None

    # -- the whole round ------------------------------------------------------------------------
    def run(self, items: list[BatchItem], desc: str, progress: bool) -> BatchOutcome:
        """Send `items` by batch (reusing batches recorded in the cache) and wait for their results."""
        api = self.backend.api()
        wanted = {item.key: item for item in items}
        jobs: dict[str, tuple[str, list[str]]] = {}  # batch id -> (tag, keys)
        covered: set[str] = set()
        for job in self.cache.batch_jobs(self.model):
            keys = [k for k in job["keys"] if k in wanted]
            if not keys:
                continue
            batch_id = job["batch_id"]
            if batch_id is None:
                if not job["orphan"]:
                    continue  # another live run is submitting it right now; ours goes separately
                batch_id = self._find_by_tag(api, job["tag"])
                if batch_id is None:  # killed before the batch existed: nothing was sent
                    self.cache.remove_batch_job(job["tag"])
                    continue
                self.cache.set_batch_id(job["tag"], batch_id)
            log.info("%s: resuming batch %s (%d requests) recorded in the cache", self.model, batch_id, len(keys))
            jobs[batch_id] = (job["tag"], job["keys"])
            covered.update(job["keys"])
        fresh = [item for item in items if item.key not in covered]
        for start in range(0, len(fresh), MAX_REQUESTS_PER_BATCH):
            chunk = fresh[start : start + MAX_REQUESTS_PER_BATCH]
            tag, batch_id = self._submit(api, chunk)
            jobs[batch_id] = (tag, [item.key for item in chunk])
        outcome = BatchOutcome(batch_ids=list(jobs))
        finished = self._wait(api, list(jobs), len(wanted), desc, progress)
        for batch_id, batch in finished.items():
            tag, keys = jobs[batch_id]
            replies, errors = self._collect(api, batch)
            for key in keys:
                if key in replies:
                    outcome.replies[key] = replies[key]
                else:
                    outcome.errors[key] = errors.get(key) or f"not answered: batch {batch_id} ended {batch.status}"
            # answers for keys this run did not ask for stay with the job for the run that does
            left = [k for k in keys if k not in wanted and k in replies]
            self.cache.settle_batch_job(tag, left)
        return outcome

    def _wait(self, api: openai.OpenAI, batch_ids: list[str], total: int, desc: str, progress: bool
              ) -> dict[str, Any]:
        bar = tqdm(total=total, desc=f"{desc} (batch)", disable=not progress, unit="req")
        done: dict[str, Any] = {}
        delay = POLL_FIRST_S
        try:
            while len(done) < len(batch_ids):
                counted = 0
                for batch_id in batch_ids:
                    batch = done.get(batch_id) or self._retrieve(api, batch_id)
                    if batch is None:
                        continue
                    counts = batch.request_counts
                    counted += (counts.completed + counts.failed) if counts else 0
                    if batch.status in TERMINAL:
                        done[batch_id] = batch
                bar.update(max(0, min(total, counted) - bar.n))
                if len(done) < len(batch_ids):
                    time.sleep(delay)
                    delay = min(delay * 1.5, poll_max_s())
        finally:
            bar.close()
        return done

    def _retrieve(self, api: openai.OpenAI, batch_id: str) -> Any | None:
        """The batch's state, or None after a hiccup (5xx, 429, dropped connection): the next poll retries."""
        try:
            return api.batches.retrieve(batch_id)
        except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
            log.info("%s: polling batch %s failed (%s); trying again", self.model, batch_id, exc)
            return None

    def _collect(self, api: openai.OpenAI, batch: Any) -> tuple[dict[str, RawReply], dict[str, str]]:
        replies: dict[str, RawReply] = {}
        errors: dict[str, str] = {}
        for line in _lines(api, batch.output_file_id) + _lines(api, batch.error_file_id):
            key = line.get("custom_id")
            response = line.get("response") or {}
            if not key:
                continue
            if response.get("status_code") == 200 and not line.get("error"):
                try:
                    replies[key] = reply_from(ChatCompletion.model_validate(response.get("body")))
                except Exception as exc:  # a malformed line fails that request only
                    errors[key] = f"unreadable batch answer: {type(exc).__name__}: {exc}"
            else:
                error = line.get("error") or (response.get("body") or {}).get("error") or {}
                message = error.get("message") if isinstance(error, dict) else str(error)
                errors[key] = f"HTTP {response.get('status_code', '?')} in batch {batch.id}: {message}"
        return replies, errors


def _lines(api: openai.OpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    text = api.files.content(file_id).text
    return [json.loads(line) for line in text.splitlines() if line.strip()]

