"""max_cost_usd: what a spend session has spent, and what each request about to be sent may cost.

A spend session is who the cap counts: CFA_SPEND_SESSION (a pipeline shares one across its notebooks),
else this process. The cache records every paid answer under its session, so a restarted run counts
what it already spent.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field

from .cache import HOST
from .errors import SpendCapReached, usd
from .types import Completion

log = logging.getLogger("cfa_lib.models")

_session: tuple[int, str] | None = None


def spend_session() -> str:
    """CFA_SPEND_SESSION, else one name per process (a forked worker gets its own)."""
    global _session
    if os.environ.get("CFA_SPEND_SESSION"):
        return os.environ["CFA_SPEND_SESSION"]
    if _session is None or _session[0] != os.getpid():
        _session = (os.getpid(), f"{HOST}:{os.getpid()}:{time.time():.3f}")
    return _session[1]


@dataclass
class Budget:
    """The session's total so far plus what is reserved for requests sent but not answered."""

    cap: float | None
    spent: float
    costs: dict[str, float | None]
    reserved: dict[str, float] = field(default_factory=dict)

    @classmethod
    def unlimited(cls) -> Budget:
        return cls(None, 0.0, {})

    @classmethod
    def for_requests(cls, model: str, cap: float, spent: float, costs: dict[str, float | None]) -> Budget:
        """A budget for these requests (key -> expected cost); warns when they cannot all fit."""
        budget = cls(cap, spent, costs)
        total = sum(c or 0.0 for c in costs.values())
        if spent + total > cap:
            log.warning("%s: %s spent plus about %s for %d requests exceeds max_cost_usd=%s; the run stops "
                        "before crossing it", model, usd(spent), usd(total), len(costs), usd(cap))
        return budget

    def reserve(self, key: str) -> bool:
        cost = self.costs.get(key)
        if self.cap is None or cost is None or key in self.reserved:
            return True
        if self.spent + sum(self.reserved.values()) + cost > self.cap:
            return False
        self.reserved[key] = cost
        return True

    def settle(self, key: str, completion: Completion) -> None:
        self.reserved.pop(key, None)
        if not completion.cached:
            self.spent += completion.cost_usd or 0.0

    def stop(self, left: list[str]) -> SpendCapReached:
        rest = sum(self.costs.get(k) or 0.0 for k in left)
        return SpendCapReached(self.spent, self.cap or 0.0, len(left), rest)
