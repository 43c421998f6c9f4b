"""What checking a hand-written template against its question gives (`templates.verify_template`), and the
tolerances every rule shares."""

from __future__ import annotations

from dataclasses import dataclass, field

from cfa_lib.perturbation.accounting import Accounting
from cfa_lib.perturbation.domain import Domain
from cfa_lib.perturbation.formula import Formula
from cfa_lib.perturbation.number_text import NumberText
from cfa_lib.perturbation.types import Verification

REL_TOL = 0.005  # reproduce the key within 0.5 %; no distractor within 0.5 %; decisions keep a 0.5 % margin
# (a template with `key_rounded`: the key is the formula rounded to its written decimals, no distractor is)
MOVE_FACTORS = (1.1, 0.9)  # every input, moved by +10 % or by -10 %, must move the answer
ROUND_TRIP_TOL = 1e-6



@dataclass
class TemplateCheck:
    """Whether a template holds for its question; on success the pieces a perturbation needs."""

    question_id: str
    ok: bool
    reason: str = ""
    check: str = ""  # the rule that failed
    verification: Verification | None = None  # parameters, spans, derived givens (formula: value kind)
    option_formulas: dict[str, Formula] = field(default_factory=dict)  # argmax/argmin decisions
    original_key: str | None = None  # the letter the template selects with the original values
    original_value: float | None = None  # formula output (value, threshold) or the winner's value
    # options carrying several numbers (template `formulas`): per position, the formula, the factor from the
    # number as written to the formula's value, and the formula's output with the original values
    position_formulas: list[Formula] = field(default_factory=list)
    option_tuples: dict[str, list[NumberText]] = field(default_factory=dict)
    answer_scales: list[float] = field(default_factory=list)
    original_values: list[float] = field(default_factory=list)
    accounting: Accounting | None = None  # what every number of the stem, options and level-3 stem is
    domain: Domain = field(default_factory=Domain)  # where the formula holds
    distractor_formulas: dict[str, Formula] = field(default_factory=dict)  # letter -> its named mistake


class RuleFailed(Exception):
    """A contract rule a template breaks: its name (`check`) and why."""

    def __init__(self, check: str, reason: str):
        super().__init__(reason)
        self.check, self.reason = check, reason
