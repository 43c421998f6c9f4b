"""Restricted evaluator for formulas written by a model: the only place model output is evaluated.

A formula is parsed with :mod:`ast` and walked by a small interpreter over a whitelist of node
types (numbers, parameter names, ``+ - * / **``, unary signs, and calls to a few math
functions). Nothing is ever handed to ``eval``/``exec``/``compile``. Every intermediate value is a
finite float of bounded magnitude, exponents are bounded, and evaluation has a wall-time budget,
so a hostile formula costs microseconds and ends in a :class:`FormulaError` with a readable reason.

Functions: ``exp log sqrt abs min max``; ``ncdf(x)``, the standard normal CDF (probabilities of a
normal return); ``irr(c0, c1, ..., cn)``, the per-period rate at which the cash flows c_t at
t = 0..n have zero present value (a project's IRR; a bond's per-period yield is
``irr(-price, c, ..., c + face)``); ``rate(n, pmt, pv, fv)``, a financial calculator's I/Y: the
per-period rate r with pv + pmt (1 - (1+r)^-n)/r + fv (1+r)^-n = 0 (a bond's per-period yield is
``rate(periods, coupon, -price, face)``). The two rate solvers search (-99 %, 1000 %) per period and
refuse cash flows whose present value does not change sign there, or changes sign more than once
(no rate, or several).
"""

from __future__ import annotations

import ast
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

MAX_FORMULA_CHARS = 600
MAX_NODES = 250
MAX_ABS_EXPONENT = 1e5  # daily compounding for 30 years is about 1.1e4 periods
MAX_MAGNITUDE = 1e100  # no finance quantity comes near this; it keeps floats far from overflow
# CPU seconds of this thread, not wall time: a loaded machine that deschedules the evaluation must not fail a
# formula (a verified template failed once in a parallel test run); only a formula that computes too long does
TIME_BUDGET_S = 0.05
PARAMETER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")


class FormulaError(ValueError):
    """A formula that is not allowed, malformed, or has no finite value."""


def _sqrt(x: float) -> float:
    if x < 0:
        raise FormulaError("square root of a negative number")
    return math.sqrt(x)


def _log(x: float) -> float:
    if x <= 0:
        raise FormulaError("log of a non-positive number")
    return math.log(x)


def _exp(x: float) -> float:
    if x > math.log(MAX_MAGNITUDE):
        raise FormulaError("exp argument too large")
    return math.exp(x)


def _ncdf(x: float) -> float:
    """The standard normal cumulative distribution function, P(Z <= x)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


RATE_LOW, RATE_HIGH = -0.99, 10.0  # the per-period rates the solvers search: -99 % to 1000 %
_GRID_POINTS = 400  # sign changes are looked for on this grid, even in log(1 + r)
MAX_RATE_PERIODS = 1200  # rate(n, ...): a monthly loan over 100 years at most
MAX_IRR_CASH_FLOWS = 61  # irr(c0, ..., c60): a 30-year semiannual bond
_RANGE = "(-99%, 1000%)"


def _solve_rate(value_at: Callable[[float], float], what: str) -> float:
    """The one r in (RATE_LOW, RATE_HIGH) where `value_at(r)` (a present value, or any positive multiple of
    it) is zero; bisection between the grid points around the single sign change."""
    span = math.log1p(RATE_HIGH) - math.log1p(RATE_LOW)
    grid = [math.expm1(math.log1p(RATE_LOW) + span * i / _GRID_POINTS) for i in range(_GRID_POINTS + 1)]
    values = [value_at(r) for r in grid]
    roots = [r for r, v in zip(grid, values, strict=True) if v == 0]
    changes = [i for i in range(_GRID_POINTS) if values[i] * values[i + 1] < 0]
    found = len(roots) + len(changes)
    if found == 0:
        raise FormulaError(f"{what}: the present value does not change sign for rates in {_RANGE}; no rate solves it")
    if found > 1:
        raise FormulaError(f"{what}: the present value changes sign more than once for rates in {_RANGE}; not unique")
    if roots:
        return roots[0]
    low, high = grid[changes[0]], grid[changes[0] + 1]
    f_low = values[changes[0]]
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        f_middle = value_at(middle)
        if f_middle == 0:
            return middle
        if (f_middle < 0) == (f_low < 0):
            low, f_low = middle, f_middle
        else:
            high = middle
    return (low + high) / 2


def _irr(*cash_flows: float) -> float:
    """The per-period IRR of cash flows c0 (now), c1, ..., cn (one per period)."""
    if not any(cash_flows):
        raise FormulaError("irr: every cash flow is zero")
    n = len(cash_flows) - 1

    def value_at(r: float) -> float:
        # NPV for r >= 0; NPV (1+r)^n for r < 0, which has the same sign and no overflow near -99 %
        if r >= 0:
            return math.fsum(c * (1 + r) ** -t for t, c in enumerate(cash_flows))
        return math.fsum(c * (1 + r) ** (n - t) for t, c in enumerate(cash_flows))

    return _solve_rate(value_at, "irr")


def _rate(n: float, pmt: float, pv: float, fv: float) -> float:
    """A financial calculator's I/Y: the per-period r with pv + pmt (1 - (1+r)^-n)/r + fv (1+r)^-n = 0."""
    if not 0 < n <= MAX_RATE_PERIODS:
        raise FormulaError(f"rate: the number of periods must be in (0, {MAX_RATE_PERIODS}], got {n:g}")

    def value_at(r: float) -> float:
        growth = math.log1p(r)
        if r >= 0:  # the present value
            annuity = n if r == 0 else -math.expm1(-n * growth) / r
            return pv + pmt * annuity + fv * math.exp(-n * growth)
        # r < 0: the future value, the present value times (1+r)^n > 0
        return pv * math.exp(n * growth) + pmt * math.expm1(n * growth) / r + fv

    return _solve_rate(value_at, "rate")


# name -> (function, minimum number of arguments, maximum number of arguments)
FUNCTIONS: dict[str, tuple[Callable[..., float], int, int]] = {
    "exp": (_exp, 1, 1),
    "log": (_log, 1, 1),
    "sqrt": (_sqrt, 1, 1),
    "abs": (abs, 1, 1),
    "min": (min, 2, 16),
    "max": (max, 2, 16),
    "ncdf": (_ncdf, 1, 1),
    "irr": (_irr, 2, MAX_IRR_CASH_FLOWS),
    "rate": (_rate, 4, 4),
}
FUNCTION_LIST = ", ".join(FUNCTIONS)

_BINARY_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_NODE_DESCRIPTIONS = {
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.NamedExpr: "assignment expressions are not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.Starred: "starred arguments are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.Slice: "slices are not allowed",
}


@dataclass(frozen=True)
class Formula:
    """A formula that passed the whitelist; evaluate it with :meth:`evaluate`."""

    text: str
    names: frozenset[str]  # parameter names the formula uses
    _tree: ast.expr

    def evaluate(self, values: Mapping[str, float]) -> float:
        missing = sorted(self.names - set(values))
        if missing:
            raise FormulaError(f"no value for parameter {missing[0]!r}")
        numbers: dict[str, float] = {}
        for name in self.names:
            numbers[name] = _check_magnitude(_as_float(values[name], f"parameter {name!r}"))
        return _Interpreter(numbers).run(self._tree)

    @property
    def literals(self) -> tuple[float, ...]:
        """The numbers written in the formula itself (unsigned): constants a draw never moves."""
        return tuple(float(node.value) for node in ast.walk(self._tree) if isinstance(node, ast.Constant))


def parse_formula(text: str, parameter_names: Iterable[str]) -> Formula:
    """Parse and whitelist-check a formula over the given parameter names (nothing is evaluated)."""
    names = set(parameter_names)
    for name in names:
        check_parameter_name(name)
    if not isinstance(text, str):
        raise FormulaError(f"formula must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise FormulaError("formula is empty")
    if len(stripped) > MAX_FORMULA_CHARS:
        raise FormulaError(f"formula is {len(stripped)} characters long; the limit is {MAX_FORMULA_CHARS}")
    try:
        tree = ast.parse(stripped, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        raise FormulaError(f"formula is not a valid expression: {error}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise FormulaError(f"formula has {len(nodes)} syntax nodes; the limit is {MAX_NODES}")
    used: set[str] = set()
    _check_node(tree.body, names, used)
    return Formula(text=stripped, names=frozenset(used), _tree=tree.body)


def evaluate_formula(text: str, values: Mapping[str, float]) -> float:
    """Evaluate a formula over named parameter values; raise :class:`FormulaError` on anything off."""
    return parse_formula(text, values.keys()).evaluate(values)


def check_parameter_name(name: str) -> None:
    if not isinstance(name, str) or not PARAMETER_NAME.match(name):
        raise FormulaError(
            f"parameter name {name!r} must start with a letter and use only letters, digits and _ (max 40)"
        )
    if name in FUNCTIONS:
        raise FormulaError(f"parameter name {name!r} is reserved for a function")


def _check_node(node: ast.AST, names: set[str], used: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise FormulaError(f"constant {node.value!r} is not allowed; only numbers are")
        return
    if isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise FormulaError(f"function {node.id!r} must be called")
        if node.id not in names:
            raise FormulaError(f"name {node.id!r} is not a parameter")
        used.add(node.id)
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_OPERATORS:
            raise FormulaError(f"operator {type(node.op).__name__} is not allowed; use + - * / **")
        _check_node(node.left, names, used)
        _check_node(node.right, names, used)
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.UAdd | ast.USub):
            raise FormulaError(f"unary operator {type(node.op).__name__} is not allowed")
        _check_node(node.operand, names, used)
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise FormulaError(f"only direct calls to {FUNCTION_LIST} are allowed")
        if node.func.id not in FUNCTIONS:
            raise FormulaError(f"function {node.func.id!r} is not allowed; use {FUNCTION_LIST}")
        if node.keywords:
            raise FormulaError("keyword arguments are not allowed")
        _, low, high = FUNCTIONS[node.func.id]
        if not low <= len(node.args) <= high:
            raise FormulaError(f"{node.func.id} takes {low}..{high} arguments, got {len(node.args)}")
        for argument in node.args:
            _check_node(argument, names, used)
        return
    reason = _NODE_DESCRIPTIONS.get(type(node), f"{type(node).__name__} is not allowed")
    raise FormulaError(reason)


class _Interpreter:
    def __init__(self, values: Mapping[str, float]):
        self.values = values
        self.deadline = time.thread_time() + TIME_BUDGET_S

    def run(self, node: ast.expr) -> float:
        try:
            return self._value(node)
        except ZeroDivisionError:
            raise FormulaError("division by zero") from None
        except OverflowError:
            raise FormulaError("result too large") from None
        except (RecursionError, MemoryError):
            raise FormulaError("formula too deeply nested") from None

    def _value(self, node: ast.expr) -> float:
        if time.thread_time() > self.deadline:
            raise FormulaError(f"evaluation took longer than {TIME_BUDGET_S} s")
        if isinstance(node, ast.Constant):
            return _check_magnitude(_as_float(node.value, "constant"))
        if isinstance(node, ast.Name):
            return self.values[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self._value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Call):
            function, _, _ = FUNCTIONS[node.func.id]  # type: ignore[attr-defined]
            return _check_magnitude(float(function(*(self._value(a) for a in node.args))))
        if isinstance(node, ast.BinOp):
            left, right = self._value(node.left), self._value(node.right)
            return _check_magnitude(_binary(node.op, left, right))
        raise FormulaError(f"{type(node).__name__} is not allowed")  # unreachable after parse_formula


def _binary(operator: ast.operator, left: float, right: float) -> float:
    if isinstance(operator, ast.Add):
        return left + right
    if isinstance(operator, ast.Sub):
        return left - right
    if isinstance(operator, ast.Mult):
        return left * right
    if isinstance(operator, ast.Div):
        if right == 0:
            raise FormulaError("division by zero")
        return left / right
    if abs(right) > MAX_ABS_EXPONENT:
        raise FormulaError(f"exponent too large ({right:.3g}; the limit is {MAX_ABS_EXPONENT:.0e})")
    if left == 0 and right < 0:
        raise FormulaError("division by zero (zero raised to a negative power)")
    if left < 0 and not float(right).is_integer():
        raise FormulaError("negative number raised to a fractional power")
    return left**right


def _as_float(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormulaError(f"{what} must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise FormulaError(f"{what} too large") from None
    return number


def _check_magnitude(value: float) -> float:
    if not math.isfinite(value):
        raise FormulaError("result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise FormulaError(f"intermediate value too large ({value:.3g})")
    return value
