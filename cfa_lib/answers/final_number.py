"""The number an open answer commits to as its final answer.

It reads, in order, the last `\\boxed{}`, the last explicit answer line ("Final answer:", "ANSWER:",
"the answer is", a "### Result" heading; not one inside a parenthetical remark) and otherwise the concluding
sentence; inside that region it scores each value (after "=", "is", "approximately"; with a unit; a
fraction "3/20" is one value) and demotes operands and multipliers of a formula ("1(0.0586)"), arguments
("P(3 ≤ X < 6)"), notation copied from the stem, durations ("in 6 years"), precision notes ("2 decimals"),
labels ("Step 3", "IFRS 16") and remarks in parentheses. `settle` then checks the reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cfa_lib.answers.commitment import (
    apply_sign_words,
    aside_number,
    is_aside,
    lists_inputs,
    main_clause,
    restated_fact,
    restates,
    sentence_spans,
    without_remarks,
)
from cfa_lib.answers.locales import normalise_signs
from cfa_lib.answers.numbers import Found, Number, scan_numbers, scan_values
from cfa_lib.answers.question_unit import asks_change, asks_difference
from cfa_lib.answers.text import clean

_CUE_BEFORE = re.compile(
    r"(?i)(?:=|≈|≅|~|:|→|=>|->|\b(?:is|are|was|were|be|equals?|equal\s+to|approximately|approx\.?|about|around|"
    r"roughly|nearly|close\s+to|closest\s+to|becomes|gives|yields|totals?|total\s+of|reaches|amounts?\s+to|"
    r"gain(?:s|ed)|earn(?:s|ed)|return(?:s|ed)|los(?:es|t)|gr(?:ows|ew)|shr(?:inks|ank)|"
    r"comes?\s+to|answer|i\.e\.|namely|call\s+it|(?:let['’]?s|I['’]d)\s+say|I['’]ll\s+(?:go\s+with|take)|(?:falls?|fell|drops?|dropped|declines?|goes\s+back|rises?|rose|increases?|"
    r"increased)\s+to|(?:increase|decrease|decline|rise|fall|drop|loss|gain|change)[sd]?\s+(?:of|by)"
    r"|(?:falls?|fell|drops?|dropped|declines?|declined|decreases?|decreased|rises?|rose|increases?|increased)"
    r"(?:\s+by)?\s+(?:about|approximately|roughly|around)"
    r"(?:\s+(?:about|approximately|roughly|around))?))(?:\s+(?:therefore|thus|hence|then))?"
    r"(?:\s+(?:at\s+most|at\s+least|up\s+to|only|just))?\s*$"
)
# "... for the 2-year bond at 6% coupon": a number in a trailing prepositional phrase is context
_CONTEXT_BEFORE = re.compile(r"(?i)\b(?:at|for|in|over|with|from|on|after|within|per)(?:\s+(?:the|a|an))?\s*$")
_COMPARISON_AFTER = re.compile(r"(?i)^\s*(?:higher|lower|more|less|greater|smaller|above|below)\b")
_TIME_AFTER = re.compile(r"(?i)^[\s-]*(?:years?|yrs?|months?|days?|weeks?|quarters?|periods?|semesters?)\b")
_PRECISION_AFTER = re.compile(
    r"(?i)^\s*(?:decimal(?:s|\s+places?|\s+points?)?|dp\b|d\.p\.|significant|sig\.?\s*figs?|digits?|places?)"
)
_OPERATOR = "×*/^+÷"

def _inside_remark(text: str, start: int, end: int) -> bool:
    """The number sits in a parenthetical remark such as '(rounded to 2 decimals)'."""
    open_at = text.rfind("(", 0, start)
    if open_at < 0 or text.rfind(")", open_at, start) >= 0:
        return False
    close_at = text.find(")", end)
    if close_at < 0:
        close_at = len(text)
    inside = text[open_at + 1 : start] + text[end:close_at]
    return len(re.findall(r"[A-Za-z]", inside)) >= 3


_MULTIPLIED = re.compile(r"\((?:[A-Za-z]\w?|\s*[-+]?[$€£¥]?\d[\d.,]*%?\s*)\)| \([-+]?\d[\d.,]*%?\)")


def _is_term(text: str, found: Found) -> bool:
    """A multiplier or an argument inside an expression: '1(w1)', '0.40(16%)', the 16% of '0.40(16%)', the
    3 and 6 of 'P(3 ≤ X < 6)', 'C(5,4)', '7 choose 2'."""
    if _MULTIPLIED.match(text, found.end) or re.match(r"(?i)\s+choose\s+\d", text[found.end :]) or \
            re.search(r"(?i)\d\s+choose\s+$", text[: found.start]):
        return True  # '7 choose 2': n and k of a count of combinations
    open_at = text.rfind("(", 0, found.start)
    return open_at > 0 and text.rfind(")", open_at, found.start) < 0 and bool(re.match(r"[\w)]", text[open_at - 1]))


# "drop by $7.14, to $17.86": the level after the change
_LEVEL_AFTER_CHANGE = re.compile(
    r"(?i)\bby\s+(?:about\s+|approximately\s+|roughly\s+)?[-+$€£¥]?\d[\d,.]*\s*(?:%|bps|basis\s+points)?,?\s+to\s*$")


_CURRENCY_CODES = "CHF|USD|EUR|GBP|JPY|CAD|AUD|HKD|SGD|NZD|SEK|NOK|DKK|INR|CNY|RMB|ZAR|BRL|MXN"


def _score(text: str, found: Found, difference: bool = False, change: bool = False) -> float:
    before = text[: found.start]
    after = text[found.end :]
    score = 0.0
    cue_text = re.sub(rf"(?:[\s*_(`$€£¥]|\b(?:{_CURRENCY_CODES}))+$", "", before)  # 'call it CHF 794': the cue
    cue = _CUE_BEFORE.search(cue_text)
    if cue and cue.group().lstrip().startswith(":") and _ends_in_value(cue_text[: cue.start()]):
        cue = None  # "gained 13.89%: 8% in euros, plus ...": the colon explains the value before it
    if cue or not before.strip():
        score += 3
    elif _CONTEXT_BEFORE.search(cue_text):
        score -= 1
    if re.search(r"(?i)\(?\s*1\s*\+\s*[a-z]\w*\s*\)?(?:\s*\^\s*\w+)?\s*[=≈]\s*$", cue_text):
        score -= 4  # "1 + r = 1.2879": a growth factor, not the rate
    if _LEVEL_AFTER_CHANGE.search(before):
        score += -3 if change else 3  # the change answers 'the percentage change', the level 'at what price'
    if _COMPARISON_AFTER.search(after) and not difference:  # "about €6 more" answers "the difference ..."
        score -= 2
    if re.search(r"(?i)\b(?:than|vs\.?|versus|compared\s+(?:with|to))\s+(?:the|a|an)\s+[\w\s-]{0,30}$", before[-60:]):
        score -= 3  # "lower than the unconditional rate of 5%"
    other_currency = re.search(rf"\b(?:{_CURRENCY_CODES})\s?$", before)
    scale_word = re.match(r"(?i)\s?(?:thousand|million|billion|trillion)", after)
    if found.number.unit is not None or other_currency or scale_word:
        score += 2
    stripped_before = before.rstrip()
    left_operator = (stripped_before[-1:] and stripped_before[-1] in _OPERATOR) or re.search(
        r"[\w)]\s+-$|(?i:\b(?:minus|plus|times|less|divided\s+by|multiplied\s+by)(?:\s+the)?)$", stripped_before
    )  # 'the sale price less the £2,000 of expenses': an operand in words
    left_exponent = re.search(r"[\^]\s*[({]\s*$", before)
    right_operator = re.match(rf"\s*(?:[{re.escape(_OPERATOR)}]|-\s+[\d($€£¥])", after) or re.match(r"\)\s*\^", after) \
        or re.match(r"\s*-\s*[^\W\d_aAI](?![^\W_])", after)  # "(1 - λ)", "1 - r": a symbol subtracted
    if left_operator or left_exponent or right_operator or _is_term(text, found):
        score -= 6
    if _TIME_AFTER.search(after) and not _CUE_BEFORE.search(cue_text):  # "in 6 years", not "= 2.83 years"
        score -= 4
    if _PRECISION_AFTER.search(after) or re.search(r"(?i)round(?:ed|ing)?\s+(?:off\s+)?(?:to|at)\s*$", before):
        score -= 8
    if _inside_remark(text, found.start, found.end):
        score -= 3
    if re.search(r"[A-Za-z]\s*\(\s*$", before) and re.match(r"\s*\)", after) and found.number.value > 0:
        score -= 2  # "the coupon (9%)": an input restated in parentheses
    value = found.number.value
    if found.number.unit is None and not other_currency and value.is_integer() and 1900 <= value <= 2100:
        score -= 2
    return score


def _ends_in_value(text: str) -> bool:
    """The text ends with a value (not a label: 'Step 3')."""
    found = scan_numbers(text)
    return bool(found) and not text[found[-1].end :].strip()


@dataclass(frozen=True)
class Reading:
    """The number a response commits to, with the region it was read in and its token ('€6.8 million');
    `at` is where the region starts in the body, `explicit` says a box or an answer line stated it."""

    number: Number
    region: str
    found: Found
    at: int = 0
    explicit: bool = False

    @property
    def token(self) -> str:
        return self.region[self.found.start : self.found.end]

    @property
    def position(self) -> int:
        """Where the number stands in the body."""
        return self.at + self.found.start


_EXPONENT = re.compile(r"(?:\^|\*\*)\s*[-−(]?\s*\Z")  # '(1 + r)^-5': an exponent is never the answer


def _best_in(text: str, threshold: float | None = None, first_bonus: float = 0.0, at: int = 0,
             explicit: bool = False, stem: str = "", keep: Callable[[Number], bool] | None = None) -> Reading | None:
    """Highest-scoring number of a region; ties go to the later one ('r = 0.0814 ≈ 8.14%'); a number in
    notation copied from the stem ('from t = 0 to t = 1') is demoted. Sign words are applied ("a decline of
    10.90%" is −10.90 %)."""
    difference, change = asks_difference(stem), asks_change(stem)
    candidates = [(_score(text, found, difference, change) - 4 * restates(stem, text, found), found.start, found)
                  for found in scan_values(text) if (keep is None or keep(found.number))
                  and not _EXPONENT.search(text, 0, found.start)]
    if not candidates:
        return None
    candidates[0] = (candidates[0][0] + first_bonus, *candidates[0][1:])
    score, _, found = max(candidates, key=lambda c: (c[0], c[1]))
    if threshold is not None and score < threshold:
        return None
    return Reading(apply_sign_words(text, found), text, found, at, explicit)


# 'comfortably under ten percent', 'slightly above the current $111.00': a bound on the answer, not the answer
_BOUND_BEFORE = re.compile(r"(?i)\b(?:above|below|under|over|beyond|beneath|(?:more|less|greater|higher|lower|fewer)"
                           r"\s+than|exceed(?:s|ing)?)\s+(?:the\s+(?:current\s+|stated\s+|original\s+)?)?[$€£¥]?\s*$")


def not_stated(reading: Reading, stem: str = "") -> str:
    """Why a value read without an answer line is not the response's answer, or '': it bounds the answer ('comfortably
    under ten percent'), or it is an operand of a formula ('BEY = (redemption/principal − 1) × 365/days'), which the
    reader takes only for want of a stated value."""
    before = reading.region[: reading.found.start]
    if _BOUND_BEFORE.search(before[-60:]):
        return f"the response bounds its answer ('{before[-25:].lstrip()}{reading.token}'), it does not state it"
    difference, change = asks_difference(stem), asks_change(stem)
    if _score(reading.region, reading.found, difference, change) <= -5:
        return f"the value read ({reading.token.strip()}) is an operand of a formula, not a result"
    return ""


def stated_in(text: str, keep: Callable[[Number], bool], at: int = 0, stem: str = "") -> Reading | None:
    """The best value of a text among those `keep` accepts, when it is stated ('= €3,760', 'is €3,760'), not
    merely mentioned."""
    return _best_in(text, threshold=3, at=at, stem=stem, keep=keep)


def _boxed_contents(text: str) -> list[tuple[int, str]]:
    contents = []
    for match in re.finditer(r"\\boxed\s*\{", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        contents.append((match.end(), text[match.end() : i - 1]))
    return contents


_ANSWER_MARKER = re.compile(
    r"(?im)(?:\bfinal\s+(?:answer|result)\b\s*(?:\([^)\n]{0,40}\))?(?:\s*(?:is\b|:|=|[-–—]+)|[ \t]*$)"
    r"|\b(?:short\s+|direct\s+)?answer\b\s*(?:\([^)\n]{0,40}\))?\s*(?::|=|is\b|[-–—]+(?![\d.]))"
    r"|答案\s*(?:是|为|[:：])|<answer>"  # '<answer>$416,002</answer>'
    # 'Edit: ... so the answer changes to $270.00', 'Oops — ... so the answer should be 3.70%.'
    r"|\banswer\s+(?:changes\s+to|becomes|is\s+now|should\s+(?:be|read))\b"
    # 'Either 0.65 or 0.40; if forced to choose, 0.65.'
    r"|\bif\s+(?:I['’]?m\s+|I\s+am\s+)?(?:forced|made|pushed)\s+to\s+(?:choose|pick)(?:\s+one)?\s*[,:]"
    r"|\bif\s+I\s+(?:had|have|must)\s+to\s+(?:choose|pick)(?:\s+one)?\s*[,:]"
    r"|\b(?:I['’]?m\s+|I\s+am\s+|I\s+)?lean(?:ing|s)?\s+(?:towards?|to)\b"  # '... could be 0.61. Leaning towards 0.39'
    r"|\bI\s+(?:would|['’]d|will)\s+report\b"  # '... 9.17 to 9.74 depending on rounding; I would report 9.45.'
    r"|\bmost\s+likely[\s:,]*(?=[$€£¥]?\d)"  # 'around $14–$15 per share — most likely $14.29'
    r"|^[ \t#>*_]*(?:answer|result|conclusion)[ \t*_]*:?[ \t*_]*$)"  # a heading: "### Result", "**Answer**"
)
_NOTE_MARK = r"[¹²³⁴⁵⁶⁷⁸⁹†‡]|\[\d+\]"  # a footnote's marker
# a footnote, a check, an explanation under the answer: every part of its sentence is the note's ('Check: ...; there
# are 4 quarters and p = 0.94.', 'Explanation: ... terminal value at t = 2.', 'Intermediate figures: 12.08, 18.88.')
_FOOTNOTE = re.compile(
    rf"(?i)^[\s>*#\-•]*(?:{_NOTE_MARK}|(?:(?:double[\s-]?)?check|checking|verification|sanity\s+check|note|nb|sensitivity|scenario"
    r"|intermediate\s+(?:figures|values|results|steps)|explanation)\s*:)")
_NOTE_SENTENCE = re.compile(
    r"(?i)^[\s>*#\-•]*(?:(?:sensitivity|scenario|aside|for\s+context|bonus)\s*:\s*)?"  # 'Sensitivity: if ...'
    rf"(?:\(|{_NOTE_MARK}|note\b|nb\b|(?:double[\s-]?)?check\b|checking\b|verification\b|verify\b|sanity\b|assum|if\b|"
    r"where\b|here\b|let\s+me\s+know|i\s+can\b|would\s+you\b|feel\s+free|rounded\b|this\s+assumes|"
    r"caveat|disclaimer|alternatively\b|for\s+example\b|e\.g\.)"
)


def extract_number(text: str | None) -> Number | None:
    """The number the response gives as its final answer (see the module docstring for the order)."""
    reading = read_number(text)
    return reading.number if reading else None


def read_number(text: str | None, stem: str = "") -> Reading | None:
    """`extract_number` with where the number was read (its region and token); `stem` lets an aside that
    mentions what the question asks ("the premium of ..." when the premium is asked) count."""
    body = normalise_signs(clean(text))
    if not body.strip():
        return None
    return read_body(body, stem)


def read_body(body: str, stem: str = "", line: bool = False) -> Reading | None:
    """`read_number` on a body already cleaned and normalised; `line`: the body is one answer line (a FINAL
    ANSWER line: '2.83 (Macaulay); modified 2.62' is read as a whole, its first value leading)."""
    for at, content in reversed(_boxed_contents(body)):
        reading = _best_in(content, at=at, explicit=True)
        if reading is not None:
            return reading
    rows = list(_RESULT_ROW.finditer(body))
    if len(rows) == 1:  # '| **Result** | **$40,368** |' above rows of checks, periods and sensitivities
        reading = _best_in(rows[0].group("cells"), at=rows[0].start("cells"), explicit=True, stem=stem)
        if reading is not None:
            return reading
    markers = [m for m in _ANSWER_MARKER.finditer(body) if not _HYPOTHETICAL.search(_sentence_before(body, m.start()))
               and not in_parentheses(body, m.start())]
    if markers:
        region = _answer_region(body, markers[-1].end())
        if region is None:
            return None
        # the number right after "Answer:" is the answer unless a later one is clearly the result
        at = body.find(region.split("\n")[0], markers[-1].end())
        return _best_in(main_clause(region), first_bonus=1, at=at, explicit=True, stem=stem)
    return _concluding_number(body, stem, semicolons=not line)


# a table row labelled as the result: '| **Result** | **$40,368** |', '| **Result: V₀ = D₁/(r−g)** | **$48.96** |',
# '| Base case (answer) | 8.38% |'
_RESULT_ROW = re.compile(r"(?im)^[ \t]*\|(?:[ \t*_]*(?:final[ \t]+)?(?:answer|result)\b|[^|\n]*\((?:the[ \t]+)?"
                         r"(?:answer|result)\))[^|\n]*\|(?P<cells>[^\n]*)$")
_HYPOTHETICAL = re.compile(r"(?i)\b(?:if|note|otherwise|alternatively|assuming|would|could|suppose)\b")


def in_parentheses(body: str, position: int) -> bool:
    """The position stands inside a parenthesis opened in its paragraph: '(The alternative answer –0.67 comes from a
    common mistake.)' is a remark, not the answer line, and holds no later result."""
    open_at = body.rfind("(", 0, position)
    return open_at >= 0 and body.rfind(")", open_at, position) < 0 and "\n\n" not in body[open_at:position]


def _sentence_before(body: str, position: int) -> str:
    """The text of the marker's sentence before it ('If ..., the answer would be'), within its line."""
    line = body[body.rfind("\n", 0, position) + 1 : position]
    return re.split(r"(?<=[.!?])\s+", line)[-1]


def _answer_region(body: str, start: int) -> str | None:
    """The rest of the marker's line, or the next two non-empty lines when that rest has no number."""
    line_end = body.find("\n", start)
    line = body[start : line_end if line_end >= 0 else len(body)]
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", line, maxsplit=1)[0]  # "2.83 years (Macaulay). Modified ..."
    if scan_numbers(first) or scan_numbers(line):
        return first if scan_numbers(first) else line
    if line.strip(" *:-–—") or line_end < 0:
        return None  # the final answer is not a number
    following = [part for part in body[line_end:].splitlines() if part.strip()][:2]
    region = "\n".join(following)
    return region if scan_numbers(region) else None


def _concluding_number(body: str, stem: str = "", semicolons: bool = True) -> Reading | None:
    """The number of the last sentence that states a result: asides (comparisons, hypotheticals,
    restatements, notes) are skipped, and a trailing restating clause is cut off first; a semicolon ends a
    statement too ('The $55 limit only matters if ...; ignoring gaps, White loses at most $800'); remarks in
    parentheses after a value that state other values or compare are blanked out first."""
    body = without_remarks(body)
    parts = [(at + m.start(), m.group(), m.start() > 0, bool(_FOOTNOTE.match(whole)))
             for at, whole in sentence_spans(body)
             for m in re.finditer(r"[^;]+(?:;|$)" if semicolons else r".+", whole) if m.group().strip(" ;")]
    for skip_asides in (True, False):  # a response made only of conditional sentences still answers
        for at, sentence, continued, in_note in reversed(parts):  # a footnote's later parts are the footnote's
            clause = _committed_clause(sentence)
            if skip_asides and (in_note or _NOTE_SENTENCE.match(clause) or is_aside(clause, stem)) or lists_inputs(
                    clause, stem):
                continue
            # after a semicolon only a stated value ('; ignoring gaps, White loses $800') overrides what came
            # before ('Margin call at $17.86; at $19.71 equity is still 36.6%')
            threshold = 3 if continued and skip_asides else -1
            reading = _best_in(clause, threshold=threshold, at=at + sentence.find(clause), stem=stem)
            if reading is not None and skip_asides and (
                    aside_number(clause, reading.found.start, stem)
                    or restated_fact(clause, reading.found.start, reading.found.end, stem)):
                continue  # a remark, or a fact of the question restated ('The stock was issued at $25.')
            if reading is not None:
                return reading
    return None


# '..., so', '→', and a value taken back in its sentence: '= 7.84%… no, the current yield must use ... = 5.20%.'
_TURN = re.compile(r"(?i)[,;]\s*(?:but|so|therefore|thus|hence)\b|→|⇒|=>|(?:…|\.{3})\s*(?:no|wait|actually)\b[,:;!]?")


def _committed_clause(sentence: str) -> str:
    """'If ... it would be 14.5 bps, but Exhibit 2 says gross, so the correct figure is 75 bps' → the clause
    after the last turn; then a trailing restating clause is cut off when what remains states a result."""
    turns = list(_TURN.finditer(sentence))
    if turns and re.search(r"\d", sentence[turns[-1].end() :]):
        sentence = sentence[turns[-1].end() :]
    clause = main_clause(sentence)
    if clause != sentence and _best_in(clause, threshold=2) is None:
        return sentence
    return clause


def clause_start(reading: Reading, colon: bool = True) -> int:
    """Where the clause holding the value starts in its region ("either 4 or 5 outperformances; P = 0.337");
    for hedges a colon or a comma ends a clause too ("4 or 5 qualify: P = ...", "the cases 4 or 5, the
    probability is ..."), for words it does not ("worst-case loss: $1,300")."""
    boundary = r"[;:→]|,\s" if colon else r"[;→]"
    cuts = [m.end() for m in re.finditer(rf"{boundary}|,\s*(?:so|then|but)\b|\b(?:so|therefore|thus|hence)\b",
                                         reading.region[: reading.found.start])]
    return cuts[-1] if cuts else 0


def value_clause(reading: Reading) -> str:
    """The reading's clause up to the end of the phrase holding its value: 'Sell 263 futures' or '263 (short
    position)', not the ', which means the probability of a down move ...' that follows."""
    rest = reading.region[reading.found.end :]
    remark = re.match(r"\s*\([^)]*\)", rest)
    rest = rest[remark.end() :] if remark else rest
    after = re.split(r"[,;(]|\b(?:which|while|whereas|and|but)\b", rest, maxsplit=1)[0]
    start = clause_start(reading, colon=False)
    return reading.region[start : reading.found.end] + (remark.group() if remark else "") + after
