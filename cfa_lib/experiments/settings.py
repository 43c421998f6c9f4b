"""The parameters every experiment notebook shares, checked once when built (cfa_lib.params)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PrivateAttr

from cfa_lib.data import Question, load_dataset
from cfa_lib.experiments.judging import default_judges
from cfa_lib.key_audit import KeyChanges, apply_audit
from cfa_lib.models.names import ModelSpec
from cfa_lib.models.run_options import RunOptions, resolve_options
from cfa_lib.params import (
    Parameters,
    check_audited,
    check_concurrency,
    check_cost_cap,
    check_dataset,
    check_judges,
    check_limit,
    check_optional_flag,
    check_seed,
    check_tolerance,
    checked_by,
    model_name,
    parse_model,
)


class Settings(Parameters):
    """Which model answers which questions, who judges, and how the engine may spend."""

    model: Annotated[str, checked_by(model_name)] = "local"  # read once, into `spec`, when the settings are built
    dataset: Annotated[str, checked_by(check_dataset)] = "easy"
    limit: Annotated[int | None, checked_by(check_limit)] = 20
    sample_seed: Annotated[int | None, checked_by(check_seed)] = None
    judge_model: Annotated[list[str] | None, checked_by(check_judges)] = None  # a panel of several: their majority
    tolerance: Annotated[float, checked_by(check_tolerance)] = 0.02
    audited: Annotated[bool, checked_by(check_audited)] = True  # the audited answer keys; False: the dataset's
    # Engine settings: None is "not given", so the CFA_* variable decides, else the engine's default
    # (models/run_options.py: CFA_MAX_CONCURRENCY else 64, CFA_BATCH else live, CFA_MAX_COST_USD else no cap,
    # CFA_RETRY_FAILED else cached failures kept).
    max_concurrency: Annotated[int | None, checked_by(check_concurrency)] = None  # a ceiling: the engine adapts
    batch: Annotated[bool | None, checked_by(check_optional_flag)] = None  # OpenAI's Batch API at half price
    max_cost_usd: Annotated[float | None, checked_by(check_cost_cap)] = None  # stop cleanly before spending more
    retry_failed: Annotated[bool | None, checked_by(check_optional_flag)] = None  # resend deterministic failures

    _spec: ModelSpec = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._spec = parse_model(self.model)  # a bad name fails here, before any question

    @property
    def spec(self) -> ModelSpec:
        """The subject's name as parsed when the settings were built: what the run's client and default judges
        are made from (`get_client` takes it as it is)."""
        return self._spec

    def engine(self) -> RunOptions:
        """The engine settings every batch of this run is sent with, resolved once (each one given here, else
        its CFA_* variable, else the engine's default: `models.run_options.resolve_options`)."""
        return resolve_options({"max_concurrency": self.max_concurrency, "batch": self.batch,
                                "max_cost_usd": self.max_cost_usd, "retry_failed": self.retry_failed}, {})

    @property
    def judges(self) -> list[str]:
        """The judge panel: never the subject, unless no other model is available (offline)."""
        return self.judge_model or default_judges(self.spec)

    @property
    def self_judged(self) -> bool:
        return self.model in self.judges

    def questions(self) -> list[Question]:
        """The questions asked, graded against the audited keys unless `audited` is False (`key_changes` says what
        the audit changed)."""
        return self.key_changes()[0]

    def key_changes(self) -> tuple[list[Question], KeyChanges]:
        """The questions with their keys, and the keys the audit corrected or set aside among them."""
        return apply_audit(load_dataset(self.dataset, limit=self.limit, sample_seed=self.sample_seed),
                       "audited" if self.audited else "original")
