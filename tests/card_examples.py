"""The worked example of the option-bias experiment card (seed 000, CFA-Easy #9), verbatim: one copy for
every test that grades it."""

FORMAT_A_OUTPUT = """We need: 500,000 × (1 + r/2)^12 = 800,000
(1 + r/2)^12 = 1.6
r/2 = 1.6^(1/12) - 1 = 0.03988
r = 0.07977 ≈ 8.0%
ANSWER: C"""

FORMAT_B_OUTPUT = """Using FV = PV × (1 + r)^n:
800,000 = 500,000 × (1 + r)^6
(1 + r)^6 = 1.6
r = 1.6^(1/6) - 1 = 0.08148 ≈ 8.15%

The stated annual interest rate is approximately 8.15%."""
