"""The blind corpus (tests/grading_corpus_blind/): responses written and labelled from the labelling manual alone,
by someone who never saw the reader. The rule, row by row: a verdict the reader decides equals the label (a
decided verdict on a row labelled `judge` is a wrong decision), and a `correct` verdict reads the labelled
value; the reader may defer (`judge`) on a row labelled otherwise, but every class keeps its coverage at or
above the floor of benchmarks/grading.py (90 %).

Values of `incorrect` rows are not compared: this corpus signs a count with the opposite direction word
('sell 263' against the key's buy 263 is −263), tests/grading_corpus_commitment keeps it positive; both
are incorrect, which is what is asserted.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from cfa_lib.answers import grade_choice, grade_open_answer
from cfa_lib.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grading_corpus_blind"
OPEN = [json.loads(line) for line in (CORPUS / "open.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
MCQ = [json.loads(line) for line in (CORPUS / "mcq.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
COVERAGE_FLOOR = 0.90


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


def _grade(questions, row: dict, kind: str):
    question = questions[row["question_id"]]
    if kind == "mcq":
        return grade_choice(question, row["response"], row["finish_reason"])
    return grade_open_answer(question, row["response"], row["finish_reason"])


# labels written under the labelling manual's rule 3 alone (window 2 % of the key), before issue #31 asked that a
# key written coarser than the tolerance ('€6', '7%') accept what rounds to it when nearest to it; the labels
# stay as written, the disagreement is listed here and in the report
COARSE_KEY_RULE = {"bopen-013", "bopen-064"}


@pytest.mark.parametrize("row", OPEN, ids=[row["id"] for row in OPEN])
def test_open_row(questions, row):
    got = _grade(questions, row, "open")
    if got.verdict == "judge":
        return  # a deferral: counted against the class's coverage below
    if row["id"] in COARSE_KEY_RULE:
        assert (row["expected_verdict"], got.verdict) == ("incorrect", "correct"), got
        return
    assert got.verdict == row["expected_verdict"], (got, row["note"])
    if row["expected_verdict"] == "correct":
        assert got.value is not None and math.isclose(got.value.value, row["expected_value"], rel_tol=1e-6), got


@pytest.mark.parametrize("row", MCQ, ids=[row["id"] for row in MCQ])
def test_mcq_row(questions, row):
    got = _grade(questions, row, "mcq")
    assert (got.verdict, got.letter) == (row["expected_verdict"], row["expected_letter"]), (got, row["note"])


def test_coverage_per_class(questions):
    """Settled without an unneeded judge call: decided, or labelled `judge` and deferred."""
    rows, covered = defaultdict(int), defaultdict(int)
    for kind, corpus in (("open", OPEN), ("mcq", MCQ)):
        for row in corpus:
            got = _grade(questions, row, kind)
            rows[row["class"]] += 1
            covered[row["class"]] += got.verdict != "judge" or row["expected_verdict"] == "judge"
    short = {name: f"{covered[name]}/{n}" for name, n in rows.items() if covered[name] / n < COVERAGE_FLOOR}
    assert not short, short


# --- the rules the corpus asked for, on short texts -------------------------------------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "verdict", "value"),
    [
        # a sentence option stating one amount is the key; a loss word signs it (rule 4)
        ("easy_410", "Initial margin = 40% × €9,400 = €3,760.", "correct", 3760),
        ("easy_278", "Gain/(loss) = $990,000 − $1,040,000 = $(50,000).", "correct", -50000),
        ("easy_278", "The company records a gain of $50,000.", "incorrect", None),
        ("easy_348", "SOA can repurchase 19 million of shares.", "incorrect", None),
        # a ratio option: odds of 1 to 5 are 0.2, and so is an answer written '1 : 5'
        ("easy_38", "Odds for = 0.167/0.833, so the odds are 1 : 5.", "correct", 0.2),
        ("easy_38", "FINAL ANSWER: 5 to 1", "incorrect", None),
        ("easy_407", "FINAL ANSWER: 1.82 : 1", "correct", 1.82),
        # numbers in words where they state a value
        ("easy_125", "FINAL ANSWER: one million dollars", "correct", 1_000_000),
        ("easy_339", "The IRR is about eleven percent.", "correct", 11),
        ("easy_339", "The IRR is roughly ten and a half percent.", "incorrect", None),
        ("easy_810", "A risk-free asset does not co-move with anything, so the correlation is zero.", "correct", 0),
        # a difference asked: 'about €6 more' is the answer, not a comparison
        ("easy_6", "Continuous: €127,496.85 of interest. Daily: €127,491.29. Continuous earns about €6 more.",
         "correct", 6),
        # a colon after a value explains it
        ("challenge_39", "The portfolio gained 13.89%: 8% in euros, plus a 5.45% rise in the euro, compounded.",
         "correct", 13.89),
        # a percent read against a money key gives way to the amount stated later in its sentence
        ("easy_410", "The margin is 40%, i.e. 2/5 of the €9,400 position: 2/5 × €9,400 = €3,760.", "correct", 3760),
        # both directions as alternatives, two values kept side by side: nothing is committed
        ("challenge_38", "About 263 contracts, long or short depending on the benchmark.", "no_answer", None),
        ("easy_38", "In favour 1 to 5, against 5 to 1; both 1 to 5 and 5 to 1 describe it.", "no_answer", None),
        # words only for a numeric key: the judge reads them
        ("easy_414", "The short position stays open, so White's maximum possible loss is unlimited.", "judge", None),
        # '+X or -X' is one magnitude; 'up or down by X' is a size, but without an answer line 'down' next to a value
        # is a word the reader does not read there ('about 26 percent down'): the judge reads it
        ("challenge_87", "The share price must change by either +3.71% or −3.71%.", "correct", 3.71),
        ("challenge_87", "The stock must move up or down by 3.71% to break even.", "judge", None),
        # after a semicolon only a stated value overrides; a supposed value gives way to the statement before it
        ("easy_411", "Margin call at $17.86; at $19.71 equity is still 36.6%.", "correct", 17.86),
        ("easy_356", "The value is $26.92; at the original 7% yield it would be $25.00.", "correct", 26.92),
        ("easy_409", "The return is −15.4%; without commissions it would have been −14.9%.", "correct", -15.4),
        # the level after a change answers 'at what price'; a growth factor is not the rate
        ("easy_411", "The price would have to drop by $7.14, to $17.86.", "correct", 17.86),
        ("easy_341", "Solving gives 1 + r = 1.2879, i.e. r = 28.79%, compared with the 10% hurdle.", "correct", 28.79),
        # a fact of the question restated closes no answer
        ("easy_356", "Current value = 1.75/0.065 ≈ 26.92. The stock was issued at $25.", "correct", 26.92),
        ("easy_58", "FINAL ANSWER: 3 out of 20", "correct", 0.15),
    ],
)
def test_blind_rules(questions, qid, response, verdict, value):
    got = grade_open_answer(questions[qid], response, "stop")
    assert got.verdict == verdict, got
    if value is not None:
        assert got.value is not None and math.isclose(got.value.value, value, rel_tol=1e-6), got


@pytest.mark.parametrize(
    ("response", "letter"),
    [
        ("Purchase → capitalized → depreciation.\n→ A", "A"),
        ("A put benefits the holder.\n\nFINAL: a", "A"),
        ("... and when the collateral's credit quality is high. So A.", "A"),
        ("Forwards obligate both parties.\n\nChosen: B", "B"),
        ("Final pick: c", "C"),
        ("Not B or C, but A.", "A"),
    ],
)
def test_blind_letter_forms(questions, response, letter):
    assert grade_choice(questions["easy_229"], response, "stop").letter == letter
