"""Adaptive concurrency: find the provider's limit instead of guessing it (AIMD, as TCP and inspect_ai do).

Start at 16 connections; while responses are clean grow by one per answer (doubling per round trip)
until the first 429, then by one per round trip. A 429 cuts the limit by 15 %, at most once per
round trip (the 429s of requests sent before the cut say nothing new), and never counts as a failure.
A gentle cut keeps the average close to a hard server limit (90 % of it, rather than 75 % when halving);
repeated 429s still bring it down fast, and every 429 waits for its Retry-After.
Server errors and timeouts pause growth for a round trip without cutting. `max_concurrency` is the ceiling.
"""

from __future__ import annotations

import threading
import time
from typing import Literal

START = 16
CUT = 0.85
HISTORY_MAX = 2000  # [t, limit] changes kept for the results metadata

Outcome = Literal["ok", "rate_limited", "error"]


class AdaptiveLimit:
    """A semaphore whose size follows the server: acquire() before each HTTP attempt, release() after."""

    def __init__(self, ceiling: int = 64, start: int = START, adaptive: bool = True) -> None:
        self._cond = threading.Condition()
        self._t0 = time.monotonic()
        self.adaptive = adaptive
        self.ceiling = max(1, ceiling)
        self.limit = float(min(start, self.ceiling) if adaptive else self.ceiling)
        self.in_flight = 0
        self.rate_limited = 0
        self.errors = 0
        self._cuts = 0  # epoch: a 429 cuts only if its request was sent after the last cut
        self._cut_before = False  # slow start until the first 429
        self._paused = 0  # clean answers still to see before growth resumes
        self.history: list[list[float]] = [[0.0, int(self.limit)]]

    def set_ceiling(self, ceiling: int) -> None:
        with self._cond:
            self.ceiling = max(1, ceiling)
            if not self.adaptive or self.limit > self.ceiling:
                self.limit = float(self.ceiling)
            self._record()
            self._cond.notify_all()

    def acquire(self) -> int:
        """Wait for a free connection; returns the epoch to hand back to release()."""
        with self._cond:
            while self.in_flight >= int(self.limit):
                self._cond.wait()
            self.in_flight += 1
            return self._cuts

    def release(self, epoch: int, outcome: Outcome) -> None:
        with self._cond:
            self.in_flight -= 1
            if outcome == "rate_limited":
                self.rate_limited += 1
                if self.adaptive and epoch == self._cuts:
                    self._cuts += 1
                    self._cut_before = True
                    self.limit = max(1.0, float(int(self.limit * CUT)))
            elif outcome == "error":
                self.errors += 1
                self._paused = int(self.limit)
            elif self._paused:
                self._paused -= 1
            elif self.adaptive and self.limit < self.ceiling:
                step = 1.0 / self.limit if self._cut_before else 1.0
                self.limit = min(float(self.ceiling), self.limit + step)
            self._record()
            self._cond.notify_all()

    def _record(self) -> None:
        now = int(self.limit)
        if self.history[-1][1] != now and len(self.history) < HISTORY_MAX:
            self.history.append([round(time.monotonic() - self._t0, 3), now])

    def stats(self) -> dict[str, object]:
        with self._cond:
            return {
                "concurrency": "adaptive" if self.adaptive else "fixed",
                "max_concurrency": self.ceiling,
                "concurrency_limit": int(self.limit),
                "concurrency_history": [list(h) for h in self.history],
                "rate_limited_429": self.rate_limited,
                "transient_errors": self.errors,
            }
