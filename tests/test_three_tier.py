"""Three-tier grading: each level and each auto-grading rule with real response texts."""

from __future__ import annotations

import json

import pytest

from cfa_lib.answers import extract_number, gold_number_from_option, open_key
from cfa_lib.answers.question_unit import stem_unit
from cfa_lib.data import load_dataset
from cfa_lib.experiments import three_tier as tt
from cfa_lib.experiments.loading import load_run
from cfa_lib.gold import GoldAnswer, from_option
from cfa_lib.models import Completion, complete_keyed, run_steps
from cfa_lib.paths import REFERENCE_DIR

EASY = {q.id: q for q in load_dataset("easy", limit=40)}
# The card's worked example (CFA-Easy #10): the gold £400,000 is derived, the options are statements.
PERPETUITY = GoldAnswer(400000.0, "£", "greater than the lump sum.", "PV of a perpetuity",
                        "2000 / 0.005 = 400,000", "model")


def tier(question_id: str, response: str, gold: GoldAnswer | None = None) -> tt.NumericTier:
    question = EASY[question_id]
    gold = gold or from_option(question)
    distractors = [gold_number_from_option(t) for t in question.distractors.values()]
    return tt.numeric_tier(extract_number(response), gold, distractors, 0.02)


def test_exact_answer_is_level_a() -> None:
    assert tier("easy_10", "PV = 2,000 / 0.005 = £400,000", PERPETUITY).level == "A"


def test_order_of_magnitude_slip_is_c_without_the_judge() -> None:
    result = tier("easy_10", "PV = 2000/0.06 = £33,333", PERPETUITY)
    assert result.level == "C" and "factor" in result.reasoning
    assert tier("easy_10", "The present value is £40,000.", PERPETUITY).level == "C"


def test_sign_error_is_c() -> None:
    result = tier("easy_10", "The present value is -£400,000.", PERPETUITY)
    assert result.level == "C" and "sign" in result.reasoning


def test_continuous_compounding_reaches_the_judge() -> None:
    # CFA-Easy #9: gold 8.0% compounded semiannually; continuous compounding gives ln(1.6)/6 = 7.83%.
    response = "With continuous compounding, r = ln(800,000/500,000)/6 = 7.83%. Final answer: 7.83%"
    result = tier("easy_9", response)
    assert result.level is None and "judge" in result.reasoning


def test_exact_rate_from_option_is_a() -> None:
    assert tier("easy_9", "r/2 = 1.6^(1/12) − 1 = 3.99%, so the stated annual rate is 7.98%.").level == "A"


def test_judge_cannot_make_an_out_of_tolerance_number_exact() -> None:
    verdict = tt.TierVerdict(level="A", reasoning="Close enough.")
    assert tt.capped_level(verdict, numeric_band=True) == "directional"
    assert tt.capped_level(verdict, numeric_band=False) == "exact"  # a text answer judged the same meaning


def test_error_category_outside_the_set_is_refused() -> None:
    with pytest.raises(ValueError):
        tt.ErrorAttribution.model_validate(
            {"error_category": '{"error_category": "arithmetic_error"}', "explanation": "x",
             "could_be_fixed_with_tools": False})
    ok = tt.ErrorAttribution.model_validate(
        {"error_category": "assumption_error", "explanation": "Used the annual rate.",
         "could_be_fixed_with_tools": True})
    assert ok.error_category == "assumption_error"


def test_summary_counts_levels_and_excludes_failures() -> None:
    rows = [
        {"level": "exact", "evaluation": {"auto_graded": True}},
        {"level": "directional", "evaluation": {"auto_graded": False}},
        {"level": "incorrect", "evaluation": {"auto_graded": True},
         "error_attribution": {"error_category": "assumption_error"}},
        {"level": None, "evaluation": {}, "excluded": "JUDGE_FAILED"},
    ]
    s = tt.THREE_TIER.summarize([tt.Row.from_dict(row) for row in rows], {})
    assert s.level_distribution == {"exact": 1, "directional": 1, "incorrect": 1}
    assert s.strict_accuracy == pytest.approx(1 / 3) and s.lenient_accuracy == pytest.approx(2 / 3)
    assert s.excluded_reasons == {"JUDGE_FAILED": 1} and s.error_categories == {"assumption_error": 1}


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-5-mini"])
def test_reference_runs_recompute_their_own_summary(model: str) -> None:
    path = REFERENCE_DIR / f"A1_open_ended_{model}.json"
    mine, theirs = load_run(tt.THREE_TIER, path).as_published, json.loads(path.read_text())["summary"]
    assert mine.level_distribution == theirs["level_distribution"]
    assert round(mine.strict_accuracy, 4) == theirs["strict_accuracy"]
    assert round(mine.lenient_accuracy, 4) == theirs["lenient_accuracy"]
    assert mine.error_categories == theirs["error_categories"]


def test_gold_from_option_for_every_numeric_option_of_cfa_easy() -> None:
    """Every correct option that extract_number reads becomes an exact gold, with no model involved."""
    n = 0
    for question in load_dataset("easy"):
        read = extract_number(question.correct_text)
        gold = from_option(question)
        if read is None or gold is None:
            continue
        if gold.source == "text":  # a distractor carries the same number: numbers cannot decide
            # easy_826 "equal to 1.0." against "less than 1.0." / "greater than 1.0." (issue, item 8)
            assert question.id in {"easy_277", "easy_826", "easy_927"} and gold.numerical is None
            continue
        assert gold.source == "option"
        key = open_key(question)  # in the unit the stem asks for: easy_212's "(€ millions)" makes €100 €100 million
        assert (gold.numerical, gold.unit) == (key.gold.value, key.gold.unit), question.id
        if stem_unit(question.stem) is None:
            assert (gold.numerical, gold.unit) == (read.value, read.unit), question.id
        n += 1
    assert n >= 85  # of the 154 correct options with a digit, the rest carry two numbers or none to grade by


def reply(text: str = "", **kw) -> Completion:
    return Completion(text=text, model="test", **kw)


def test_text_answer_goes_to_the_judge_and_takes_its_level() -> None:
    # CFA-Easy #0: the key is "expected inflation." — no number to grade by.
    gold = GoldAnswer(None, None, EASY["easy_0"].correct_text, None, None, "text")
    response = reply("The nominal risk-free rate is the real rate plus a premium for expected inflation.")
    row = tt.first_pass(EASY["easy_0"], gold, response, 0.02)
    assert row.level is None and not row.evaluation["auto_graded"] and row.excluded is None
    tt.apply_verdict(row, gold, {"judge": reply(parsed={"level": "A", "reasoning": "Same premium named."})})
    assert row.level == "exact" and row.evaluation["reasoning"] == "Same premium named."


def test_numeric_answers_are_auto_graded_in_the_first_pass() -> None:
    """easy_3's key is $113,733; a factor-of-ten slip is C without the judge. easy_10's key ("greater than
    the lump sum") is words: even a number goes to the judge, since no numeric gold is grounded there."""
    gold = from_option(EASY["easy_3"])
    row = tt.first_pass(EASY["easy_3"], gold, reply("FV = 75,000 × 1.0175^24 = $11,373.\nFINAL ANSWER: $11,373"), 0.02)
    assert row.level == "incorrect" and row.evaluation["auto_graded"]
    assert row.evaluation["student_value"] == 11373 and row.evaluation["gold_value"] == 113733
    assert row.evaluation["answer_source"] == "final_line"
    row = tt.first_pass(EASY["easy_10"], PERPETUITY, reply("PV = 2000/0.06 = £33,333"), 0.02)
    assert row.level is None and row.evaluation["verdict"] == "judge"


def test_failed_model_or_judge_excludes_the_row() -> None:
    failed = reply(error="HTTP 500 after 5 attempts", error_kind="failed")
    row = tt.first_pass(EASY["easy_10"], PERPETUITY, failed, 0.02)
    assert row.excluded == "MODEL_FAILED" and row.level is None
    row = tt.first_pass(EASY["easy_10"], PERPETUITY, reply("The perpetuity is worth more."), 0.02)
    tt.apply_verdict(row, PERPETUITY, {"judge": failed})
    assert row.excluded == "JUDGE_FAILED" and row.level is None


def test_attribution_outside_the_set_becomes_unclassified() -> None:
    bad = reply('{"error_category": "bad_luck"}', error="reply does not fit the schema", error_kind="invalid_json")
    assert tt.attribution(bad)["error_category"] == "unclassified"
    good = reply(parsed={"error_category": "assumption_error", "explanation": "Annual rate used.",
                         "could_be_fixed_with_tools": True})
    assert tt.attribution(good) == {"error_category": "assumption_error", "explanation": "Annual rate used.",
                                    "could_be_fixed_with_tools": True}


class OneReplyClient:
    """A gold model that answers every request with the same structured reply."""

    def __init__(self, parsed: dict) -> None:
        self.parsed = parsed

    def complete_many(self, requests, **_) -> list[Completion]:
        return [Completion(text=json.dumps(self.parsed), model="gold", parsed=self.parsed) for _ in requests]


def test_a_model_number_is_never_a_gold_for_a_decision_or_a_conceptual_question() -> None:
    """easy_2's key is "daily."; the original study's gold model made it 365 and graded answers against that.
    easy_0's key is words ("expected inflation."). Neither gets a numeric gold, whatever the model says."""
    from cfa_lib.gold import gold_answers

    gold_model = OneReplyClient({"numerical_answer": 365, "unit": None, "concept": "EAR", "solution_summary": "x"})
    asked = []
    golds = run_steps(gold_answers([EASY["easy_0"], EASY["easy_2"], EASY["easy_3"]], "the gold model"),
                      lambda ask: asked.append(ask) or complete_keyed(gold_model, ask.requests))
    assert [(a.model, a.counted_as, sorted(a.requests)) for a in asked] == [
        ("the gold model", "gold", ["easy_0", "easy_2"])]  # one declared step; easy_3's option carries the gold
    assert golds["easy_2"].numerical is None and golds["easy_2"].source == "text"
    assert "365 not used" in golds["easy_2"].note
    assert golds["easy_0"].numerical is None and golds["easy_0"].text == "expected inflation."
    assert golds["easy_3"].numerical == 113733 and golds["easy_3"].source == "option"  # the key's own number


@pytest.mark.parametrize("model, changes, strict, lenient", [
    ("gpt-4o-mini", {"graded against a model's number where the key has none": 38,
                     "regraded against the key's number: same level": 3,
                     "regraded against the key's number: level changed": 9,
                     "regraded against the key's number: needs the judge": 1}, 0.2427, 0.4572),
    ("gpt-5-mini", {"graded against a model's number where the key has none": 39,
                    "regraded against the key's number: same level": 5,
                    "regraded against the key's number: level changed": 9}, 0.4179, 0.6415),
])
def test_reference_runs_regraded_against_the_key(model, changes, strict, lenient) -> None:
    """The study's model golds: easy_2's "daily." was graded against 365; such rows lose their ground."""
    run = load_run(tt.THREE_TIER, REFERENCE_DIR / f"A1_open_ended_{model}.json", keys="original")  # the rules alone
    assert run.regrade_changes == changes
    s = run.summary
    assert round(s.strict_accuracy, 4) == strict and round(s.lenient_accuracy, 4) == lenient
    easy_2 = next(r for r in run.rows if r.question_id == "easy_2")
    assert easy_2.gold_answer["numerical"] == 365  # the file itself is never changed
    assert easy_2.level == "incorrect" and easy_2.excluded is None  # nor the rows read from it
    regraded = next(r for r in run.regraded_rows if r.question_id == "easy_2")
    assert regraded.outcome.excluded == "not_grounded" and regraded.excluded == "GOLD_NOT_GROUNDED"


def test_a_cut_answer_is_excluded_and_a_refusal_is_c_counted_as_no_answer() -> None:
    gold = from_option(EASY["easy_3"])
    row = tt.first_pass(EASY["easy_3"], gold, reply("FV = 75,000 × 1.0175^24 =", finish_reason="length"), 0.02)
    assert row.excluded == "TRUNCATED" and row.level is None
    row = tt.first_pass(EASY["easy_3"], gold, reply("Please provide the answer choices."), 0.02)
    assert row.level == "incorrect" and row.evaluation["verdict"] == "no_answer"
    assert row.outcome.status == "no_answer" and row.outcome.correct is False
    assert tt.THREE_TIER.summarize([row], {}).no_answer == 1
