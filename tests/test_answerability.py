"""cfa_lib.answerability: the rules on real questions, the reviewed exceptions, and the shipped files and counts."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cfa_lib.answerability import (
    EXCEPTIONS_FILE,
    RULE_NAMES,
    RULES,
    Answerability,
    answerability_table,
    apply_rules,
    classify,
    counts,
    load_exceptions,
    shipped_lines,
    shipped_path,
)
from cfa_lib.data import Question, load_dataset


@pytest.fixture(scope="module")
def questions() -> dict[str, Question]:
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


# (question id, rule the rules alone apply, open-answerable by the rules)
RULE_CASES = [
    ("easy_366", "options_cross_reference", False),  # option C is "Both A and B."
    ("challenge_68", "options_verdict_grid", False),  # "Action 1 Correct, Action 2 Incorrect, ..."
    ("challenge_75", "options_verdict_grid", False),  # chat-room participants named only in the options
    ("easy_1", "which_of_the_following", False),  # "Which of the following risk premiums ..."
    ("challenge_7", "which_of_the_following", False),
    ("easy_153", "the_following", False),  # "All of the following are current assets except:"
    ("easy_878", "the_following", False),
    ("easy_144", "which_statement", False),  # "Which statement is most accurate? A common size income statement:"
    ("easy_211", "least_or_except", False),  # "Inventory cost is least likely to include:"
    ("easy_433", "least_or_except", False),  # "Uses of market indexes do not include serving as a:"
    ("challenge_27", "least_or_except", False),  # "Which approach is least relevant ..."
    ("challenge_45", "options_name_candidates", False),  # "Portfolio 1." ... (overridden by an exception)
    ("easy_705", "bare_subject_fragment", False),  # "A swap is:"
    ("easy_327", "bare_subject_fragment", False),  # "Corporate governance:"
    # Answerable
    ("easy_0", "open_question", True),  # "... the real risk-free rate and a premium for:" -> expected inflation
    ("easy_401", "open_question", True),  # a scenario then "This agreement is a:" is a real question
    ("easy_178", "open_question", True),  # "the following activities ...?Item 1: ... Item 2: ..." lists them
    ("easy_934", "open_question", True),  # "... if total revenue is at least:" is not a least-likely question
    ("easy_54", "open_question", True),  # "most recommended to least recommended" neither
    ("challenge_1", "open_question", True),  # yes/no question about the scenario
    ("easy_656", "closest_to", True),  # "The following information ... The debt/capital ... is closest to:"
    ("challenge_5", "closest_to", True),
    ("challenge_29", "candidates_in_stem", True),  # "Which of Pai's statements ...?" Statements 1-3 are quoted
    ("challenge_40", "candidates_in_stem", True),  # "Which of Kreutz's statements is least likely correct?"
    ("challenge_4", "candidates_in_stem", True),  # "For which portfolio ...?" Portfolios 1-3 in an exhibit
    ("easy_239", "computed_value", True),  # "Which of the following amounts is most likely the sale price?"
    ("easy_960", "computed_value", True),
]


@pytest.mark.parametrize(("qid", "rule", "answerable"), RULE_CASES)
def test_rules_on_real_questions(questions, qid, rule, answerable):
    verdict = apply_rules(questions[qid])
    assert (verdict.rule, verdict.open_answerable) == (rule, answerable), (qid, verdict)
    assert verdict.question_id == qid and verdict.reason


def test_every_rule_has_a_reason_and_a_case():
    assert all(rule.why for rule in RULES)
    tested = {rule for _, rule, _ in RULE_CASES}
    # Two rules have no question in either dataset; they are exercised on made-up stems below.
    assert set(RULE_NAMES) - tested == {"compared_with_others", "correct_with_respect_to", "exception"}


def _made_up(stem: str, choices: tuple[str, str, str] = ("x.", "y.", "z.")) -> Question:
    return Question("easy_99999", "easy", 99999, stem, dict(zip("ABC", choices, strict=True)), "A")


def test_rules_without_a_question_in_the_datasets():
    compared = apply_rules(_made_up("Compared with the other two bonds, the bond with the highest convexity is:"))
    assert (compared.rule, compared.open_answerable) == ("compared_with_others", False)
    subclaims = apply_rules(_made_up("The analyst's comments are most likely correct with respect to:"))
    assert (subclaims.rule, subclaims.open_answerable) == ("correct_with_respect_to", False)


def test_closest_to_stays_answerable(questions):
    closest = [q for q in questions.values() if q.stem.rstrip().endswith("closest to:")]
    assert len(closest) > 90
    assert all(classify(q).open_answerable for q in closest)


def test_best_described_completion_is_answerable(questions):
    # From the issue: "... best described as the sum of the real risk-free rate and a premium for:" -> inflation.
    assert classify(questions["easy_0"]).open_answerable


def test_an_exception_overrides_the_rules(questions, tmp_path):
    q = questions["challenge_45"]
    assert not apply_rules(q).open_answerable
    shipped = classify(q)
    assert shipped.open_answerable and shipped.rule == "exception" and "Exhibit 3" in shipped.reason

    custom = tmp_path / "exceptions.jsonl"
    custom.write_text(json.dumps({"question_id": "easy_0", "open_answerable": False, "reason": "test"}) + "\n")
    exceptions = load_exceptions(custom)
    assert classify(questions["easy_0"], exceptions) == Answerability("easy_0", False, "test", "exception")
    assert classify(questions["easy_1"], exceptions) == apply_rules(questions["easy_1"])


def test_every_shipped_exception_disagrees_with_the_rules(questions):
    exceptions = load_exceptions()
    assert len(exceptions) == 32
    for qid, override in exceptions.items():
        assert qid in questions, qid
        assert override.open_answerable != apply_rules(questions[qid]).open_answerable, f"{qid} is redundant"
        assert len(override.reason) > 30, qid
    assert EXCEPTIONS_FILE.read_text(encoding="utf-8").endswith("\n")


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        '{"question_id": "easy_0", "open_answerable": "yes", "reason": "r"}',
        '{"question_id": "easy_0", "open_answerable": true}',
        '{"question_id": "mmlu_0", "open_answerable": true, "reason": "r"}',
        '{"question_id": "easy_0", "open_answerable": true, "reason": "r"}\n'
        '{"question_id": "easy_0", "open_answerable": false, "reason": "r"}',
    ],
)
def test_bad_exceptions_file_fails_clearly(tmp_path, line):
    path = tmp_path / "exceptions.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match="exceptions.jsonl:"):
        load_exceptions(path)


@pytest.mark.parametrize("name", ["easy", "challenge"])
def test_shipped_files_match_the_code(name):
    shipped = shipped_path(name).read_text(encoding="utf-8").splitlines()
    assert shipped == shipped_lines(name), "run: python -m cfa_lib.answerability write"
    rows = [json.loads(line) for line in shipped]
    assert [r["question_id"] for r in rows] == [q.id for q in load_dataset(name)]
    assert all(set(r) == {"question_id", "open_answerable", "rule", "reason"} for r in rows)


def test_counts_easy():
    assert counts("easy") == {
        "questions": 1032,
        "open_answerable": 704,
        "option_dependent": 328,
        "by_rule": {
            "options_cross_reference": 1,
            "which_of_the_following": 253,
            "the_following": 9,
            "which_statement": 2,
            "least_or_except": 21,
            "bare_subject_fragment": 23,
            "closest_to": 77,
            "open_question": 613,
            "computed_value": 2,
            "exception": 31,
        },
    }


def test_counts_challenge():
    assert counts("challenge") == {
        "questions": 90,
        "open_answerable": 76,
        "option_dependent": 14,
        "by_rule": {
            "options_verdict_grid": 4,
            "which_of_the_following": 7,
            "least_or_except": 3,
            "closest_to": 21,
            "open_question": 42,
            "candidates_in_stem": 12,
            "exception": 1,
        },
    }


def test_table_accepts_a_list_of_questions(questions):
    subset = [questions["easy_0"], questions["easy_1"]]
    table = answerability_table(subset)
    assert list(table) == ["easy_0", "easy_1"]
    assert counts(subset)["option_dependent"] == 1
    assert replace(table["easy_0"], reason="") != table["easy_0"]  # frozen dataclass, compared by value
