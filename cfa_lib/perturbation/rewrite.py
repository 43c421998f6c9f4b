"""Accepting or rejecting the generator's rewrite of a perturbed question's text.

The model only writes prose; whether its text says what the plan settled is checked here span by span.
Levels 1 and 2 fall back to a deterministic span substitution when the rewrite fails its checks.
"""

from __future__ import annotations

from cfa_lib.answers import parse_reply
from cfa_lib.data import Question
from cfa_lib.models import Completion
from cfa_lib.perturbation.number_text import count_span, substitute_values
from cfa_lib.perturbation.records import finish
from cfa_lib.perturbation.types import Check, PerturbationRecord, Plan, QuestionRewrite


def check_rewrite(plan: Plan, text: str) -> list[Check]:
    """Every new value must appear in the text, no changed old value may remain, kept values stay."""
    checks: list[Check] = []
    if plan.record.level == 3:
        missing = [] if count_span(text, plan.level3_answer_text) else [plan.level3_answer_text]
        checks.append(Check("answer_stated", not missing, f"missing {missing[0]!r}" if missing else ""))
        leaked = [s for s in plan.old_spans if count_span(text, s)]
        checks.append(Check("unknown_removed", not leaked, f"still contains {leaked[0]!r}" if leaked else ""))
    else:
        missing = [s for s in plan.new_spans if not count_span(text, s)]
        checks.append(Check("new_values_present", not missing, f"missing {missing[0]!r}" if missing else ""))
        remaining = [s for s in plan.old_spans if count_span(text, s)]
        checks.append(
            Check("old_values_removed", not remaining, f"still contains {remaining[0]!r}" if remaining else "")
        )
    lost = [s for s in plan.kept_spans if not count_span(text, s)]
    checks.append(Check("other_values_kept", not lost, f"lost {lost[0]!r}" if lost else ""))
    return checks


def apply_rewrite(
    plan: Plan, question: Question, reply: Completion | QuestionRewrite | None, fallback: bool = True
) -> PerturbationRecord:
    """Accept the generator's rewrite if it passes the checks, else substitute spans (level 1/2) or reject."""
    record = plan.record
    rewrite, problem = parse_reply(reply, QuestionRewrite)
    if rewrite is not None and rewrite.question.strip():
        checks = check_rewrite(plan, rewrite.question)
        record.trail.extend(Check(f"rewrite_{c.name}", c.passed, c.detail) for c in checks)
        failed = [c for c in checks if not c.passed]
        if not failed:
            record.question = rewrite.question.strip()
            record.rewrite_path = "generator"
            return finish(record, "valid", "")
        problem = f"generator rewrite failed {failed[0].name}: {failed[0].detail}"
    else:
        problem = problem or "generator rewrite is empty"
        record.trail.append(Check("rewrite_reply", False, problem))
    if fallback and record.level in (1, 2):
        try:
            text = substitute_values(question.stem, plan.old_spans, plan.new_spans)
        except ValueError as error:
            record.trail.append(Check("substitution", False, str(error)))
            return finish(record, "rejected", f"{problem}; substitution impossible: {error}")
        checks = check_rewrite(plan, text)
        record.trail.extend(Check(f"substitution_{c.name}", c.passed, c.detail) for c in checks)
        if all(c.passed for c in checks):
            record.question = text
            record.rewrite_path = "substitution"
            return finish(record, "valid", "")
    return finish(record, "rejected", problem)
