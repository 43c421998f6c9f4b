"""Which value a response commits to, or why only the judge can tell.

The reader (`final_number.read_body`, on the body or on a FINAL ANSWER line) proposes the concluding
value; `settle` checks it against what a grader would point at:

* the last statement of the asked quantity (`asked.statements`: "The Macaulay duration is 2.83 years."):
  when the reading comes later and only compares or supposes, or names another measure ("The modified
  duration is 2.62."), the statement wins; when both lead to the same verdict the reading stands;
  otherwise the response commits to two values and the judge decides;
* without such a statement, a reading that only compares or supposes ("exceeds the ordinary annuity by
  $772.17", "with annual compounding it would take 563 months") gives way to the value stated before it,
  or, when none is, the judge decides;
* a reading in a currency against a percent key (or the reverse) is another quantity: the one value of
  the key's kind in its clause, or the value stated before it, is taken, or the judge decides.

`settle` never guesses: where it cannot point at one value it returns the reason for a `judge` verdict.
`table_after_statement` and `bold_elsewhere` give the same kind of reason when the value read is a table's
cell after a stated value, or differs from the one value the response bolds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cfa_lib.answers.asked import asked_quantity, compared_in_words, mentions, statements, worded
from cfa_lib.answers.commitment import TAKES_BACK, apply_sign_words, from_stem, is_aside, sentence_spans
from cfa_lib.answers.final_number import Reading, clause_start, in_parentheses, read_body, stated_in, value_clause
from cfa_lib.answers.key import rounding_step
from cfa_lib.answers.locales import normalise_signs
from cfa_lib.answers.numbers import CURRENCY_UNITS, PERCENT, Found, Number, first_value, scan_values
from cfa_lib.answers.question_unit import SCALE_WORDS, asks_difference
from cfa_lib.answers.text import clean
from cfa_lib.answers.value_context import asks_for_a_fall
from cfa_lib.models.thinking import split_thinking

_EXCEEDS_BY = re.compile(r"(?i)\b(?:exceed\w*|outperform\w*|beat\w*)\b[^.;]{0,80}\bby\s*(?:about\s+|roughly\s+)?$")
_COMPARED_WITH = re.compile(
    r"(?i)\b(?:than|vs\.?|versus|above|below|beyond|differs?\s+from|compared\s+(?:with|to)"
    r"|(?:a\s+(?:little|bit)|just|slightly|somewhat|well)\s+(?:under|over))\s+"  # 'a little under two thousand euros'
    r"(?:the\s+|a\s+|an\s+|its\s+)?(?:[\w-]+\s+){0,3}$"
)
_COMPARED_AFTER = re.compile(r"(?i)^\s*(?:more|less|higher|lower|greater|smaller|above|below)\b")
_SUPPOSED = re.compile(
    r"(?i)^\W*(?:with|without|under|using)\b[^.]*\bwould\b|\bwould\s+have\s+(?!to\b)\w|^\W*at\b[^.]*\d[^.]*\bwould\b|\b(?:if|had|were|instead|otherwise|alternatively)\b"
    r"[^.]*\bwould\b|\bwould\b[^.]*\b(?:if|instead|otherwise)\b"
)

# a response that takes back what it stated: what follows replaces it
_REVISED = re.compile(r"(?im)^\W*(?:wait|actually|correction|oops|hmm|on\s+second\s+thought)\b|\bI\s+made\s+an?\s+"
                      r"(?:error|mistake)\b|\blet\s+me\s+(?:redo|recompute|correct)\b")
Match = Callable[[Reading], bool]  # does a reading fall in the key's acceptance window?
Show = Callable[[Reading], str]  # a reading as the reason names it


def comments(reading: Reading, body: str, stem: str = "") -> bool:
    """The value read is the object of a comparison or a supposition, not a statement of the answer:
    'exceeds ... by $772.17', '$4,000 more than ...', 'With annual compounding it would take ... 563 months';
    words copied from the stem ('250 units instead of 200 units') are neither."""
    before, after = reading.region[: reading.found.start], body[reading.at + reading.found.end :]
    clause = reading.region[clause_start(reading, colon=False) : reading.found.end]
    found = [(before, _COMPARED_WITH.search(before)), (clause, _SUPPOSED.search(clause))]
    if not asks_difference(stem):  # "exceeds ... by €6", "about €6 more" state the difference asked for
        found += [(before, _EXCEEDS_BY.search(before)), (after, _COMPARED_AFTER.match(after))]
    return any(m is not None and not from_stem(text, m.start(), m.end(), stem) for text, m in found)


# words of a subject that name no measure: "the project's value today is $58.33", "so the final answer is"
_UNNAMED = frozenset(
    "the a an its this that it our my final correct corrected resulting value values result answer figure amount "
    "total number sum outcome estimate one today now then approximately about".split()
)


def names_a_measure(reading: Reading) -> bool:
    """The reading's value is stated for a named quantity ('The corresponding modified duration is 2.62',
    'Net income after interest and tax: $280,000'), not a generic one ('the project's value today is')."""
    clause = re.split(r"[;(]|,\s|\b(?:so|and|but|thus|therefore|hence)\b", reading.region[: reading.found.start])[-1]
    subject = re.split(r"=|≈|:\s|:$|\|\s*$|\b(?:is|are|was|were|equals?|comes\s+to|be)\b", clause)[0]
    subject = re.split(r"\b(?:of|after|before|for|in|at|on|per|with|under|over|from)\b", subject)[0]
    words = [m.group().lower() for m in re.finditer(r"[A-Za-z][\w/-]+", subject)
             if not re.match(r"['’]", subject[m.end() : m.end() + 1])]  # "the project's"
    return any(w not in _UNNAMED for w in words)


def settle(body: str, stem: str, reading: Reading | None, key_unit: str | None, match: Match,
           show: Show) -> Reading | str | None:
    """The reading a grader would point at (None: no number committed), or the reason to ask the judge."""
    asked = asked_quantity(stem)
    stated = [s for s in statements(body, asked, stem) if not _other_kind(s.number, key_unit)]
    in_words = worded(body, asked, stem)
    if in_words is not None and (reading is None or not reading.explicit) and all(
            in_words > r.position for r in [*stated, *([reading] if reading else [])]):
        return None  # the last word on the asked quantity is no number: "the maximum possible loss is unlimited"
    compared = compared_in_words(body, asked, stem)
    if compared is not None and not stated and reading is not None and not reading.explicit and \
            compared >= _sentence_at(body, reading.position)[0]:
        # 'D1 = 2.83 × 1.040 = 2.9432', then 'So the intrinsic value comes out well below the undiscounted total ...'
        return "the response only compares the asked quantity with something in words; it states no value for it"
    if reading is not None and not reading.explicit and _other_kind(reading.number, key_unit):
        kind = _of_kind(reading, key_unit) or _stated_after(body, stem, reading, key_unit)
        if kind is None and not stated:  # "The NPV comes out to $58.33 ... the IRR is roughly 51%."
            before = _committed_before(body, stem, reading, key_unit)
            return before or "the value read is not of the key's kind (a percent against an amount, or the reverse)"
        reading = kind
    if not stated or asked is None:
        if reading is None or reading.explicit or not comments(reading, body, stem):
            return reading
        # the last value compares or supposes ("... less than the $200,000 of tuition"): the one before it
        before = _committed_before(body, stem, reading, key_unit)
        return before or (f"the last value read ({show(reading)}) only compares or supposes, and no value is "
                          "stated before it")
    last = stated[-1]
    if reading is None:
        return last
    if last.position < reading.position and _REVISED.search(body, last.position, reading.position):
        return reading  # 'Intrinsic value = ... = $47.30. Wait, ... next year's dividend: V = $52.31'
    in_region = reading.at <= last.position < reading.at + len(reading.region)
    another = comments(reading, body, stem) or bool(re.search(r"(?i)\bwould\b", value_clause(reading))) or (
        asked.specific and not mentions(asked, reading.region) and names_a_measure(reading))
    if _scaled_restatement(last.number, reading.number):  # '... = 100 - 10 = 90', then '$90 million'
        return reading
    agree = match(reading) == match(last)
    # when both agree, a restatement in the statement's own sentence ("= 2.8286, so about 2.83") is kept
    later = last.position < reading.position and (
        not agree or _sentence_at(body, last.position)[0] != _sentence_at(body, reading.position)[0])
    if not reading.explicit and (in_region or (later and another)):
        return last
    if agree:
        return reading
    return f"two committed values: {show(last)} stated for the asked quantity, {show(reading)} read as the conclusion"


def _scaled_restatement(bare: Number, scaled: Number) -> bool:
    """A bare number and the same number with a scale word ('90', then '$90 million'): one value, written
    in the stem's units in the working and in full in the answer."""
    return bare.unit is None and scaled.unit is not None and bare.value != 0 and any(
        abs(scaled.value - bare.value * scale) <= 1e-9 * abs(scaled.value) for scale in SCALE_WORDS.values())


def _committed_before(body: str, stem: str, reading: Reading, key_unit: str | None) -> Reading | None:
    """The value the text commits to before `reading`, when it is a statement itself (not a comparison, a
    supposition or a value of another kind); the text before the reading's own clause is read when its
    clause holds no such statement ('The value is $26.92; at the original 7% yield it would be $25.00'). An input
    copied from the stem in parentheses ('above the required return (4%)') is no such statement."""
    ends = dict.fromkeys([reading.position, reading.at + clause_start(reading, colon=False)])
    for end in ends:
        before = read_body(body[:end], stem)
        if before is None or _other_kind(before.number, key_unit) or comments(before, body[:end], stem):
            continue
        if in_parentheses(body, before.position) and before.token.strip() in stem:
            return None
        if not re.search(r"(?i)\b(?:would|could|might)\b", value_clause(before)):
            return before
    return None


def _sentence_at(body: str, position: int) -> tuple[int, str]:
    """The sentence holding `position`, and where it starts."""
    return next(((at, part) for at, part in reversed(sentence_spans(body)) if at <= position), (0, ""))


def _other_kind(number: Number, key_unit: str | None) -> bool:
    """A percent against a key in money, or money against a percent key."""
    return (number.unit == PERCENT and key_unit in CURRENCY_UNITS) or (
        number.unit in CURRENCY_UNITS and key_unit == PERCENT)


def _stated_after(body: str, stem: str, reading: Reading, key_unit: str | None) -> Reading | None:
    """A value of the key's kind stated later in the reading's sentence ('The initial margin is 40%, i.e. 2/5 of
    the €9,400 position: 2/5 × €9,400 = €3,760.')."""
    start = _sentence_at(body, reading.position)[0]
    end = next((at for at, _ in sentence_spans(body) if at > start), len(body))
    after = reading.position + len(reading.token)
    return stated_in(body[after:end], lambda n: not _other_kind(n, key_unit) and n.unit is not None,
                     at=after, stem=stem)


def _of_kind(reading: Reading, key_unit: str | None) -> Reading | None:
    """The one value of the key's kind in the reading's clause ('drops to $17.86, a decline of 28.6%')."""
    kind = {f.number for f in scan_values(reading.region) if not _other_kind(f.number, key_unit)}
    found = [f for f in scan_values(reading.region) if f.number in kind]
    if len(kind) != 1:
        return None
    return Reading(apply_sign_words(reading.region, found[-1]), reading.region, found[-1], reading.at,
                   reading.explicit)  # 'A negative total return of 18.42%: ... the $9 price drop.'


# --- a value the response marks or states elsewhere ------------------------------------------------------


def _figures(token: str) -> str:
    """The digits of a token's first number, without separators, sign, unit or scale ('$1,300' -> '1300')."""
    found = re.search(r"\d[\d,.]*", token)
    return "" if found is None else re.sub(r"[,.]", "", found.group()).rstrip("0")


# a markdown bold span ('**$905,940**', '| **Total** | **+2.21%** |'), paired left to right
_BOLD = re.compile(r"(?<!\*)\*\*(?=\S)([^*\n]*?\S)\*\*(?!\*)")
_VALUE_LIKE = re.compile(r"[$€£¥%]|\d[.,]\d|\d{3}")  # a value, not a label ('**Difference (Year 5)**')


def _bolded_values(response: str) -> list[str]:
    """The bold spans of a response that state a value, outside reasoning and code ('1.03**3' in a code block)."""
    prose = re.sub(r"```.*?(?:```|\Z)|`[^`\n]*`", " ", split_thinking(response or "")[0], flags=re.S)
    return [m.group(1) for m in _BOLD.finditer(prose) if _VALUE_LIKE.search(m.group(1))]


def bold_elsewhere(response: str, reading: Reading, stem: str, match: Match) -> str:
    """Why the value read is not the one the response marks, or '': the response bolds a value ('≈ **$905,940**')
    and the reader read another that falls on another verdict; which one it commits to the judge decides, unless
    the response bolds only that one value (`one_bold_value`)."""
    marked = _bolded_values(response)
    if not marked:
        return ""
    bold = read_body(normalise_signs(clean(marked[-1])), stem)
    if bold is None or _figures(bold.token) == _figures(reading.token):
        return ""  # the same number, signed or scaled by its context ('98' bold, '98 million' read)
    if match(bold) == match(reading):
        return ""
    return f"the response bolds {marked[-1].strip()} and the value read is {reading.token.strip()}"


def one_bold_value(response: str, stem: str) -> Reading | None:
    """The one value a response bolds, when it bolds one: a table's '**Total**' row after which another row
    follows ('(duration-only estimate) | +2.18%'), a '**€30,817**' among other figures. On the corpora written
    before it, it decided 21 answers the judge read before, each as its writer labelled it, and none otherwise."""
    marked = _bolded_values(response)
    return read_body(normalise_signs(clean(marked[0])), stem) if len(marked) == 1 else None


def table_after_statement(body: str, position: int, stem: str) -> str:
    """Why the value read is not the committed one, or '': it stands in a table after the text states another value
    ('= **13.89%**' then a table of the inputs whose last cell is 5.45%); which is the answer the reader cannot tell."""
    line_start = body.rfind("\n", 0, position) + 1
    if not body[line_start:].lstrip().startswith("|"):
        return ""
    table_start = line_start
    while table_start > 0 and body[body.rfind("\n", 0, table_start - 1) + 1 :].lstrip().startswith("|"):
        table_start = body.rfind("\n", 0, table_start - 1) + 1
    before = read_body(body[:table_start].rstrip(), stem)
    cell = read_body(body[line_start:], stem)
    if before is None or cell is None or before.number == cell.number:
        return ""
    return f"the value read stands in a table after the text states {before.number}"


# an answer chosen over, or corrected from, what came before it: "I'll go with", "Actually", "should be"
_TAKEN_BACK = re.compile(r"(?i)\b(?:actually|wait|correction|oops|hmm|on\s+reflection|instead|I['’]?ll\s+"
                         r"(?:go|use|take)|redo|re-?check|double-check|should\s+be|mistake|error|but)\b")


_OPERATOR_BEFORE = re.compile(r"(?:[-+×*/÷^−(]|\b(?:plus|minus|times|less|divided\s+by))[ \t]*[$€£¥]?\Z")
_OPERATOR_AFTER = re.compile(r"(?i)[ \t]*\)?[ \t]*(?:[-+×*/÷^−]|(?:plus|minus|times|less|divided)\b)")


def key_stated_elsewhere(body: str, stem: str, reading: Reading, on_key: Match, same: Callable[[Reading], bool]
                         ) -> str:
    """Why a value graded wrong may not be the committed answer, or '': another result in the response falls in
    the key's window, so the value read may be an aside or a step, and only the judge can tell:

    * an earlier one that nothing between takes back ('Deposit = £413.89 per quarter. Over 40 quarters the saver
      puts in a total of £16,556');
    * a later one ('$180 of commissions over the 10,000-share order: about $0.018 per share', 'appreciated by
      about 4.6%: the rate rises to 1.36', 'r = 5.74%? No — ... r = 5.12%').

    An operand ('0.55% + 0.80%', '(€100 million) plus'), a fraction, a number copied from the stem, or the read
    value with another sign or direction ('$13 million' then 'decreased by $13 million') is not such a result."""
    end = reading.position + len(reading.token)
    asks_back = _sentence_at(body, reading.position)[1].rstrip(" *").endswith("?")  # 'r = 5.74%? No — ...'
    for found in scan_values(body):
        if reading.position <= found.start < end:
            continue
        token = body[found.start : found.end]
        other = Reading(found.number, body, found)
        if "/" in token or token.strip() in stem or _OPERATOR_AFTER.match(body, found.end):
            continue
        if same(other) or not on_key(other):
            continue
        if found.start < reading.position:
            if not _TAKEN_BACK.search(body, found.end, reading.position):
                return (f"an earlier result, {token.strip()}, is the key's value and is not taken back before "
                        f"{reading.token.strip()}")
        elif not _OPERATOR_BEFORE.search(body, 0, found.start) and (
                asks_back or not _remark_at(body, found.start, stem)):
            return f"a later value, {token.strip()}, is the key's value: {reading.token.strip()} may be a step"
    return ""


def key_in_second_half(body: str, stem: str, on_key: Match, same: Callable[[Reading], bool]) -> str:
    """Why a value found without a FINAL ANSWER line and graded wrong is not a safe verdict, or '': the key's value
    stands in the second half of the response, where the conclusion lies, as an aside ('(If the $2.00 were the
    dividend just paid, ... $69.33)'), a revision or the answer itself among other results. A careful grader reads
    which one is committed; the reader defers. Numbers copied from the stem and the read value with another sign
    or direction (`same`) are not such a value. Measured on the blind corpora's first scores, this takes half of
    the wrong 'incorrect' verdicts of heuristic readings to the judge, at the cost of about one right one each."""
    for found in scan_values(body):
        if found.start < len(body) // 2:
            continue
        token = body[found.start : found.end].strip()
        other = Reading(found.number, body, found)
        if token not in stem and not same(other) and on_key(other):
            return f"the key's value, {token}, stands in the second half of a response without an answer line"
    return ""


def revised_after_final(after: str, stem: str, line_right: bool, on_key: Match) -> str:
    """Why the FINAL ANSWER line may not be the answer, or '': what follows it (`after`) takes it back ('Correction:
    that's basic. Diluted is $3.70.') and then states a value the key grades otherwise. The manual's rule (the line
    wins over steps, checks and asides after it) assumes nothing after it revises it."""
    revision = TAKES_BACK.search(after)
    if revision is None:
        return ""
    for found in scan_values(after):
        token = after[found.start : found.end].strip()
        if found.start >= revision.end() and token not in stem and on_key(Reading(found.number, after, found)) != \
                line_right:
            return f"the response takes back its FINAL ANSWER line after it ('{revision.group()}', then {token})"
    return ""


def _remark_at(body: str, position: int, stem: str) -> bool:
    """The value at `position` is in a remark after the answer: in parentheses, or in a sentence that compares,
    supposes or notes ('(If the put premium were also counted, it would be 3.71%.)', 'Footnote: ...')."""
    if in_parentheses(body, position):
        return True
    at, sentence = _sentence_at(body, position)
    before = body[at:position]
    return bool(_COMPARED_WITH.search(before)) or is_aside(sentence, stem) or bool(_SUPPOSED.search(sentence)) or bool(
        re.search(r"(?i)\b(?:footnote|complement\w*|some\s+texts|alternative\w*)\b", sentence))


def rounded_after(body: str, settled: Reading, stem: str, on_key: Match) -> str:
    """Why the graded value may not be the final word, or '': a later value restates it rounded ('= 5.72%' then
    'Rounded: ≈ 6%') and the key's window grades that restatement otherwise. Careful graders split on it (the
    last value stated, or a remark on the one computed), so the judge reads it."""
    start = settled.at + settled.found.end
    after = body[start:]
    for found in scan_values(after):
        number, token = found.number, after[found.start : found.end].strip()
        step = rounding_step(token, first_value)
        if number.unit != settled.number.unit or step is None or token in stem or number == settled.number:
            continue
        if not re.search(r"(?i)(?:\brounded\b|\bround(?:s|ing)?\s+to\b|[≈~]|\b(?:about|roughly|approximately|approx\.?|"
                         r"circa)\b)[^\d\n]{0,12}$", after[max(0, found.start - 30) : found.start]):
            continue  # a rounding is said to be one
        if step <= (rounding_step(settled.token, first_value) or 0) or in_parentheses(body, start + found.start) or \
                re.search(r"(?i)\bcheck", after[max(0, found.start - 30) : found.start]):
            continue  # not coarser than the graded value; a remark or a check ('(i.e. ..., or about $0.07 billion)')
        if abs(number.value - settled.number.value) <= step / 2 * (1 + 1e-9) and on_key(
                Reading(number, after, found)) != on_key(settled):
            return f"the response restates its answer rounded ({token}), and the key's window grades that otherwise"
    return ""


def signed_after(body: str, settled: Reading, stem: str) -> str:
    """Why the graded value's sign is in doubt, or '': a later restatement of the positive value read says in words
    that it is a loss or a fall ('= 1.10%', then 'Bond A is expected to lose 1.10% relative to Treasuries'; 'Total ≈
    1.42%, i.e. the price would decrease by 1.42%'), and the question asks for no fall. Careful graders take the
    sign the response says in words; the judge reads it."""
    if settled.number.value <= 0 or asks_for_a_fall(stem):
        return ""
    start = settled.at + settled.found.end
    for found in scan_values(body[start:]):
        found = Found(found.number, found.start + start, found.end + start)
        signed = apply_sign_words(body, found)
        if signed.value < 0 < found.number.value and signed.unit == settled.number.unit and \
                abs(found.number.value - settled.number.value) <= 1e-9 * max(1.0, found.number.value):
            return f"the response restates {body[found.start : found.end].strip()} as a loss or a fall in words"
    return ""
