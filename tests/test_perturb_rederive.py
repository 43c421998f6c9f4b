"""Counterfactual items a referee can trust: the defect classes of issue #20, each on a real question.

Every test here fails at a625d2e, where the perturbed items below were emitted as valid: easy_58 stated
its bounds twice and changed one copy, easy_193 kept option amounts copied into its formulas, easy_11 and
easy_411 left stated results of the inputs unchanged, challenge_35 and challenge_87 moved the share price
away from the strike the formula treats as at the money, and nothing re-read an item before calling it valid.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from cfa_lib.data import questions_by_id
from cfa_lib.perturbation import load_templates, template_perturbations
from cfa_lib.perturbation.schema import templates_dir
from cfa_lib.perturbation.templates import Template, verify_template

SEEDS = range(10)


@pytest.fixture(scope="module")
def items():
    """Every record of both datasets' templates at seeds 0-9, levels 1-3, by (question id, level, seed)."""
    records = {}
    for dataset in ("easy", "challenge"):
        templates = load_templates(dataset)
        questions = [q for q in questions_by_id(dataset).values() if q.id in templates]
        for seed in SEEDS:
            for record in template_perturbations(questions, templates, (1, 2, 3), seed):
                records[record.question_id, record.level, seed] = record
    return records


def _valid(items, question_id, levels=(1, 2)):
    found = [r for (qid, level, _), r in items.items() if qid == question_id and level in levels and r.valid]
    assert found, f"{question_id}: no valid item at seeds 0-9"
    return found


def _money(text: str) -> float:
    return float(text.replace(",", "").lstrip("$"))


def test_no_item_is_valid_unless_its_rederivation_agrees(items):
    valid = [r for r in items.values() if r.valid]
    assert len(valid) > 1000
    for record in valid:
        assert any(c.name == "rederived" and c.passed for c in record.trail), (record.question_id, record.level)


def test_easy_58_states_each_bound_once_in_words_and_notation(items):
    """'greater than or equal to 3 but less than 6, P(3 ≤ X < 6)': both copies of each bound move together."""
    pattern = r"integers 1–(\d+), .* equal to (\d+) but less than (\d+), P\((\d+) ≤ X < (\d+)\)"
    for record in _valid(items, "easy_58"):
        n, lo, hi, lo_again, hi_again = re.search(pattern, record.question).groups()
        assert (lo, hi) == (lo_again, hi_again)
        assert re.search(rf"with {n} potential outcomes", record.question)


def test_a_bound_changed_in_one_copy_only_is_rejected_by_the_rederivation():
    from cfa_lib.perturbation.rederive import rederive  # here: the other tests also run at a625d2e, and fail there

    questions, templates = questions_by_id("easy"), load_templates("easy")
    question, template = questions["easy_58"], templates["easy_58"]
    record, = template_perturbations([question], templates, (1,), seed=0)
    assert "less than 4, P(3 ≤ X < 4)" in record.question
    stale = copy.deepcopy(record)
    stale.question = record.question.replace("< 4)", "< 6)")  # what a625d2e emitted as valid
    assert rederive(question, template, verify_template(question, template), stale) == (
        "'hi' is written '4' and '6': one quantity, two values", "")


def test_easy_193_options_are_rebuilt_from_the_stem_they_sit_under(items):
    """The key option states interest paid = expense - rise in interest payable and taxes paid = tax expense +
    fall in taxes payable, as read from each perturbed stem (a625d2e kept '$16 ... $10 million')."""
    stem = (r"interest expense of \$(\d+)\xa0million and taxes of \$(\d+)\xa0million\. Interest payable increased "
            r"by \$(\d+)\xa0million, and taxes payable decreased by \$(\d+)\xa0million")
    for record in _valid(items, "easy_193"):
        expense, taxes, payable_up, payable_down = map(int, re.search(stem, record.question).groups())
        key = re.findall(r"\$(\d+) million", record.choices[record.correct_letter])
        assert list(map(int, key)) == [expense - payable_up, taxes + payable_down]


def test_a_formula_holding_an_option_amount_is_refused():
    """a625d2e's easy_193: argmin of |ie - dip - 22| + |tx + dtp - 10|..., the option amounts copied in."""
    question = questions_by_id("easy")["easy_193"]
    shipped = load_templates("easy")["easy_193"].model_dump()
    old = Template.model_validate(shipped | {"kind": "decision", "formula": "", "formulas": None, "decision": {
        "type": "argmin", "formulas": {"A": "abs(ie - dip - 22) + abs(tx + dtp - 10)",
                                       "B": "abs(ie - dip - 16) + abs(tx + dtp - 2)",
                                       "C": "abs(ie - dip - 16) + abs(tx + dtp - 10)"}}})
    check = verify_template(question, old)
    assert (check.ok, check.check) == (False, "numbers_accounted")
    assert check.reason.startswith("the formula of option A holds the literal 10, a number of option A ('$22 "
                                   "million for interest and $10 million for taxes.'): rebuild the options from "
                                   "formulas instead; the formula of option A holds the literal 22")


def test_easy_11_restates_the_ordinary_annuity_pv_of_its_new_inputs(items):
    """'payments of $2,000 is $15,443.47': the stated PV follows the rate and the payment (10 years)."""
    pattern = r"At a (\d+)% interest rate .* payments of (\$[\d,]+) is (\$[\d,.]+)\."
    for record in _valid(items, "easy_11"):
        rate, payment, pv = re.search(pattern, record.question).groups()
        r = int(rate) / 100
        assert _money(pv) == pytest.approx(_money(payment) * (1 - (1 + r) ** -10) / r, abs=0.01)


def test_easy_411_position_is_own_funds_plus_the_loan(items):
    pattern = r"You have (\$[\d,]+) to invest\. You borrow an additional (\$[\d,]+) .* invest (\$[\d,]+) in"
    for record in _valid(items, "easy_411"):
        own, loan, position = map(_money, re.search(pattern, record.question).groups())
        assert own + loan == position


def test_a_stated_derived_value_left_unchanged_is_rejected():
    from cfa_lib.perturbation.rederive import rederive

    questions, templates = questions_by_id("easy"), load_templates("easy")
    question, template = questions["easy_11"], templates["easy_11"]
    record, = template_perturbations([question], templates, (1,), seed=0)
    assert "payments of $1,370 is $10,578.78" in record.question
    stale = copy.deepcopy(record)
    stale.question = record.question.replace("$10,578.78", "$15,443.47")
    check = verify_template(question, template)
    assert rederive(question, template, check, stale)[0] == (
        "derived 'pv_ord' is written '$15,443.47' but pmt*(1 - (1 + r)**-n)/r gives 10578.8")
    wrong_option = copy.deepcopy(record)
    wrong_option.choices = dict(record.choices, B=record.choices["A"])  # the key is A since #32 (was B)
    assert rederive(question, template, check, wrong_option)[0] == (
        "re-derived key 11107.7: options within 0.5% are A, B, not exactly A")  # the key left B, the original's (#32)


def test_the_at_the_money_strike_stays_the_one_the_formula_uses(items):
    """The straddle of challenge_87 uses the middle strike (510); a625d2e moved the share price away from it
    (and challenge_35's at-the-money put to $22.70, where the $25 strike is at the money: that template is
    retired since, its exhibit breaking no-arbitrage)."""
    strikes = (500, 510, 520)
    for record in _valid(items, "challenge_87", levels=(1, 2, 3)):
        if record.level == 3:  # the price is the asked unknown: its key is the original price
            continue
        share = float(re.search(r"stock price = \$([\d.]+)", record.question).group(1))
        assert min(strikes, key=lambda k: abs(share - k)) == strikes[1]


def test_an_inverted_intrinsic_value_range_is_never_drawn(items):
    """easy_489: a625d2e drew 'in the range of €20.30 to €16.90' and keyed a price above both undervalued."""
    for record in _valid(items, "easy_489"):
        low, high = map(float, re.search(r"range of €(\d+\.\d+) to €(\d+\.\d+)", record.question).groups())
        assert low < high


def test_easy_level_1_stays_covered_at_seed_0(items):
    valid = sum(r.valid for (qid, level, seed), r in items.items()
                if qid.startswith("easy") and level == 1 and seed == 0)
    assert valid >= 80


def _option_chain(text: str) -> dict[float, tuple[float, float]]:
    """Exhibit 1 of challenge_86-88: strike -> (call premium, put premium)."""
    rows = re.findall(r"Call Premium: ([\d.]+) \| Exercise Price: (\d+) \| Put Premium: ([\d.]+)", text)
    return {float(k): (float(c), float(p)) for c, k, p in rows}


def _arbitrage_bounds(chain: dict[float, tuple[float, float]]) -> set[str]:
    """The no-arbitrage relations between neighbouring strikes that hold: spreads cost at most the strike gap,
    premiums are convex in the strike."""
    strikes = sorted(chain)
    held = set()
    for low, high in zip(strikes, strikes[1:], strict=False):
        gap = high - low
        held |= {f"call spread {low}" for _ in [0] if chain[low][0] - chain[high][0] <= gap + 1e-9}
        held |= {f"put spread {low}" for _ in [0] if chain[high][1] - chain[low][1] <= gap + 1e-9}
    for a, b, c in zip(strikes, strikes[1:], strikes[2:], strict=False):
        for side, name in ((0, "call"), (1, "put")):
            if chain[b][side] <= (chain[a][side] + chain[c][side]) / 2 + 1e-9:
                held.add(f"{name} convex {b}")
    return held


@pytest.mark.parametrize("question_id", ["challenge_86", "challenge_87", "challenge_88"])
def test_a_drawn_option_premium_keeps_the_exhibits_no_arbitrage_bounds(items, question_id):
    """Blind review round 1 (r1-074): challenge_88 at level 2, seed 7 priced the 490 call at 29.90 against a
    500 call at 15.55, a call spread worth more than its 10 strike gap, and keyed the seagull on that price.
    Every relation the original exhibit satisfies must hold in every valid item."""
    chain = _option_chain(questions_by_id("challenge")[question_id].stem)
    assert _arbitrage_bounds(chain)
    for record in _valid(items, question_id, levels=(1, 2, 3)):
        drawn = _option_chain(record.question)  # level 3 asks for one premium: its row is not an exhibit row
        original = _arbitrage_bounds({k: v for k, v in chain.items() if k in drawn})
        assert original <= _arbitrage_bounds(drawn), (record.level, sorted(original - _arbitrage_bounds(drawn)))
    assert not items["challenge_88", 2, 7].valid


# Blind review round 2: the classes it found, each on the item that showed it.

def _t_statistic(r: float, n: int) -> float:
    return abs(r) * (n - 2) ** 0.5 / (1 - r**2) ** 0.5


def test_a_change_stated_in_words_keeps_its_direction(items):
    """r2-073: easy_280 at level 1, seed 2 read "rates were 8 percent. Rates have since risen to 7 percent".
    A level written as where a change ended ("risen to", "increase to") must stay on its side of the level
    it changed from; `verify` refuses a template that does not declare it."""
    rates = r"were (\d+)\s?percent\. Rates have since risen to (\d+)\s?percent"
    for record in _valid(items, "easy_280"):
        before, after = map(int, re.search(rates, record.question).groups())
        assert after > before, record.question[:160]
    sales = r"were \$(\d+)\s?million, and Brown expects credit sales to increase to \$(\d+)\s?million"
    # easy_206 is retired since #32 (no valid draw: its key +x among +3x and -x is the option nearest the remembered
    # +$0.41 million whenever it leaves A); kept so a template for it is checked again
    for record in (r for (qid, _, _), r in items.items() if qid == "easy_206" and r.valid):
        before, after = map(int, re.search(sales, record.question).groups())
        assert after > before
    template = load_templates("easy")["easy_280"].model_copy(update={"domain": []})
    check = verify_template(questions_by_id("easy")["easy_280"], template)
    assert not check.ok and check.check == "domain" and "'risen'" in check.reason and "from r0" in check.reason


def test_a_drawn_answer_stays_within_five_times_the_original(items):
    """r2-031: easy_580 at level 2, seed 3 priced a 350-day CD at 81.6 for a redemption of 145, a bond
    equivalent yield of 81 % (3.6 % in the original): both inputs moved, and their small difference with them."""
    assert not items["easy_580", 2, 3].valid or items["easy_580", 2, 3].new_answer_value < 0.19
    value = {qid for dataset in ("easy", "challenge")
             for qid, t in load_templates(dataset).items() if t.kind == "value"}
    for record in (r for r in items.values()
                   if r.valid and r.level in (1, 2) and r.question_id in value and r.original_answer_value):
        ratio = record.new_answer_value / record.original_answer_value
        assert 0.2 <= ratio <= 5, (record.question_id, record.level, ratio)


def test_an_option_that_states_a_wrong_reason_is_never_the_key(items):
    """r2-139: easy_118 at level 1, seed 8 drew 162 observations, |t| = 1.86 < 1.96, and keyed C,
    "insignificant, because the test statistic is outside the bounds": a wrong reason. Only A is ever right,
    so the statistic stays outside the bounds."""
    pattern = r"Based on (\d+) observations, .* to be −(0\.\d+)\."
    for record in _valid(items, "easy_118"):
        n, r = re.search(pattern, record.question).groups()
        assert record.correct_letter == "A" and _t_statistic(float(r), int(n)) > 1.96


def test_the_dropqik_exhibit_itself_breaks_no_arbitrage():
    """Round 3 (r3-067, r3-070): challenge_35 and challenge_37 share challenge_36's Dropqik exhibit, whose own
    25/30 call spread costs more than its strike gap: every item on it states impossible prices."""
    stem = questions_by_id("challenge")["challenge_35"].stem
    exhibit = re.search(r"Exercise Price(.*?)3-month call option price(.*?)3-month put option price(.*?)\n", stem)
    strikes, calls, puts = (part.strip("|").split("|") for part in exhibit.groups())
    chain = {float(k): (float(c), float(p)) for k, c, p in zip(strikes, calls, puts, strict=True)}
    assert "call spread 25.0" not in _arbitrage_bounds(chain)  # 10.30 - 4.05 = 6.25 > 5
    assert chain[25.0][0] > (chain[20.0][0] + chain[30.0][0]) / 2  # and the calls are not convex at 25


@pytest.mark.parametrize("question_id", ["challenge_35", "challenge_36", "challenge_37", "challenge_78"])
def test_a_source_question_that_breaks_its_own_premise_is_retired(question_id):
    """r2-076 (challenge_36: Exhibit 1's 25/35 box costs 12.49 for a payoff of 10), r3-067 and r3-070 (the
    same exhibit under challenge_35 and challenge_37) and r2-052/r2-136 (challenge_78: "more integrated,
    lower volatility" over data that say the opposite): no item of them can be valid; they are listed as
    retired with the reason."""
    assert question_id not in load_templates("challenge")
    retired = {row["question_id"]: row for row in map(json.loads, (templates_dir() / "challenge_without_template.jsonl")
                                                       .read_text(encoding="utf-8").splitlines())}
    assert retired[question_id]["category"] == "source contradicts"
