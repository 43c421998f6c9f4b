"""Real CFA-Easy questions and hand-written generator extractions shared by the perturbation tests."""

from __future__ import annotations

from cfa_lib.data import Question
from cfa_lib.perturbation.build import perturb_question
from cfa_lib.perturbation.number_text import find_numbers
from cfa_lib.perturbation.types import ExtractedParameter, FormulaExtraction, Plan

# Rows of datasets/FinEval/CFA_Easy.json, as cfa_lib.data parses them.
EASY_3 = Question(
    id="easy_3",
    dataset="easy",
    index=3,
    stem="The value in six years of $75,000 invested today at a stated annual interest rate of 7% "
    "compounded quarterly is closest to:",
    choices={"A": "$112,555.", "B": "$113,330.", "C": "$113,733"},
    answer="C",
)
EASY_11 = Question(
    id="easy_11",
    dataset="easy",
    index=11,
    stem="At a 5% interest rate per year compounded annually, the present value (PV) of a 10-year ordinary "
    "annuity with annual payments of $2,000 is $15,443.47. The PV of a 10-year annuity due with the same "
    "interest rate and payments is closest to:",
    choices={"A": "$14,708.", "B": "$16,216.", "C": "$17,443"},
    answer="B",
)
EASY_569 = Question(
    id="easy_569",
    dataset="easy",
    index=569,
    stem="A bond offers an annual coupon rate of 4%, with interest paid semiannually. The bond matures in "
    "two years. At a market discount rate of 6%, the price of this bond per 100 of par value is closest to:",
    choices={"A": "93.07.", "B": "96.28.", "C": "96.33."},
    answer="B",
)
EASY_9 = Question(
    id="easy_9",
    dataset="easy",
    index=9,
    stem="An investment of €500,000 today that grows to €800,000 after six years has a stated annual "
    "interest rate closest to:",
    choices={
        "A": "7.5% compounded continuously.",
        "B": "7.7% compounded daily.",
        "C": "8.0% compounded semiannually.",
    },
    answer="C",
)
EASY_0 = Question(
    id="easy_0",
    dataset="easy",
    index=0,
    stem="The nominal risk-free rate is best described as the sum of the real risk-free rate and a premium for:",
    choices={"A": "maturity.", "B": "liquidity.", "C": "expected inflation."},
    answer="C",
)
EASY_361 = Question(
    id="easy_361",
    dataset="easy",
    index=361,
    stem=(
        "Two years ago, a company issued $20\xa0million in long-term bonds at par value with a coupon "
        "rate of 9%. The company has decided to issue an additional $20\xa0million in bonds and "
        "expects the new issue to be priced at par value with a coupon rate of 7%. The company has "
        "no other debt outstanding and has a tax rate of 40%. To compute the company's weighted "
        "average cost of capital, the appropriate after-tax cost of debt is closest to:"
    ),
    choices={"A": "4.2%.", "B": "4.8%.", "C": "5.4%."},
    answer="A",
)


def P(name, value, kind, span, description="", derived_from=""):  # noqa: N802 - reads like a table row
    return ExtractedParameter(
        name=name, value=value, kind=kind, span=span, description=description, derived_from=derived_from
    )


def not_computable(reason: str) -> FormulaExtraction:
    return FormulaExtraction(computable=False, reason=reason, parameters=[], asked_quantity="", unit="", formula="")


GROWTH = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("pv", 75_000, "amount", "$75,000", "amount invested today"),
        P("r", 0.07, "rate", "7%", "stated annual interest rate"),
        P("m", 4, "other", "quarterly", "compounding periods per year"),
        P("t", 6, "count", "six years", "years"),
    ],
    asked_quantity="future value",
    unit="$",
    formula="pv * (1 + r/m) ** (m*t)",
)
ANNUITY_DUE = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("r", 0.05, "rate", "5%", "annual interest rate"),
        P("n", 10, "count", "10-year", "years of payments"),
        P("pmt", 2000, "amount", "$2,000", "annual payment"),
        P(
            "pv_ordinary",
            15443.47,
            "amount",
            "$15,443.47",
            "PV of the ordinary annuity",
            derived_from="pmt * (1 - (1 + r) ** -n) / r",
        ),
    ],
    asked_quantity="PV of the annuity due",
    unit="$",
    formula="pv_ordinary * (1 + r)",
)
BOND = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("c", 0.04, "rate", "4%", "annual coupon rate"),
        P("m", 2, "other", "semiannually", "coupons per year"),
        P("n", 2, "count", "two years", "years to maturity"),
        P("y", 0.06, "rate", "6%", "market discount rate"),
        P("par", 100, "other", "100", "par value"),
    ],
    asked_quantity="bond price per 100 of par",
    unit="per 100 of par",
    formula="par * (c/m * (1 - (1 + y/m) ** (-m*n)) / (y/m) + (1 + y/m) ** (-m*n))",
)
RATE_FROM_GROWTH = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("pv", 500_000, "amount", "€500,000", "amount invested today"),
        P("fv", 800_000, "amount", "€800,000", "value after six years"),
        P("t", 6, "count", "six years"),
        P("m", 2, "other", "semiannually"),
    ],
    asked_quantity="stated annual rate compounded semiannually",
    unit="%",
    formula="m * ((fv / pv) ** (1 / (m * t)) - 1)",
)


def only_number(text: str) -> float:
    """The one number in an option or span, as written ("$113,733." -> 113733.0)."""
    (found,) = find_numbers(text)
    return found.number


def plan_for(question, extraction, level, seed=0) -> Plan:
    """The plan of one level; the test fails with the reason when the level ends in a record."""
    (item,) = perturb_question(question, extraction, levels=(level,), seed=seed)
    assert isinstance(item, Plan), item.reason
    return item
