"""The parameters every experiment notebook shares, checked once when built (cfa_lib.params)."""

from __future__ import annotations

from typing import Annotated, Any

from cfa_lib.data import Question, load_dataset
from cfa_lib.experiments.judging import default_judges
from cfa_lib.models import DEFAULT_MAX_CONCURRENCY
from cfa_lib.params import (
    Parameters,
    check_concurrency,
    check_cost_cap,
    check_dataset,
    check_flag,
    check_judges,
    check_limit,
    check_model,
    check_seed,
    check_tolerance,
    checked_by,
)


class Settings(Parameters):
    """Which model answers which questions, who judges, and how the engine may spend."""

    model: Annotated[str, checked_by(check_model)] = "local"
    dataset: Annotated[str, checked_by(check_dataset)] = "easy"
    limit: Annotated[int | None, checked_by(check_limit)] = 20
    sample_seed: Annotated[int | None, checked_by(check_seed)] = None
    judge_model: Annotated[list[str] | None, checked_by(check_judges)] = None  # a panel of several: their majority
    tolerance: Annotated[float, checked_by(check_tolerance)] = 0.02
    max_concurrency: Annotated[int, checked_by(check_concurrency)] = DEFAULT_MAX_CONCURRENCY  # the engine adapts below
    batch: Annotated[bool, checked_by(check_flag)] = False  # OpenAI's Batch API at half price (others run live)
    max_cost_usd: Annotated[float | None, checked_by(check_cost_cap)] = None  # stop cleanly before spending more
    retry_failed: Annotated[bool, checked_by(check_flag)] = False  # resend the failures a deterministic model gave

    def engine(self) -> dict[str, Any]:
        """The engine options every batch of this run is sent with."""
        return {"max_concurrency": self.max_concurrency, "batch": self.batch, "max_cost_usd": self.max_cost_usd,
                "retry_failed": self.retry_failed or None}  # None: CFA_RETRY_FAILED decides

    @property
    def judges(self) -> list[str]:
        """The judge panel: never the subject, unless no other model is available (offline)."""
        return self.judge_model or default_judges(self.model)

    @property
    def self_judged(self) -> bool:
        return self.model in self.judges

    def questions(self) -> list[Question]:
        return load_dataset(self.dataset, limit=self.limit, sample_seed=self.sample_seed)
