"""Grading one answer: `grade_open_answer` (Format B, no options shown) and `grade_choice` (Format A).

A verdict is printed only when a careful grader would agree with it; otherwise the answer goes to the
judge (a deferral costs a judge call, a wrong verdict costs the study). The order of decisions
(tests/grading_corpus/README.md):

1. truncated: `finish_reason == "length"` and no `FINAL ANSWER:` (MCQ: `ANSWER: X`) line was reached;
2. no_answer: nothing visible after a reasoning block, a refusal or a request for the options, a hedge
   from the committed value on ("either X or Y", "between X and Y", "X or Y depending on ...", "X under the first
   reading or Y under the second"; outcomes listed before the value, "X can be 1, 2 or 3, so ...", or inside an
   argument, "P(X = 3, 4 or 5) = ...", are not one), a closing "if ..., it is X" after a different stated value;
3. judge: the question has no numeric key (words, comparisons, label numbers, a number shared with a
   distractor), the response commits to words only, or `settle` cannot point at one committed value
   (two values stated for the asked quantity, a last value that comments on a different earlier one); the
   response doubts its own answer ('not sure', 'hard to say') or puts its other values down to rounding;
4. correct / incorrect: the committed number against the acceptance window (`key.grade_number`); a
   matching number with the opposite direction word (sell against the key's buy, a gain where the stem
   asks for the loss) is incorrect, one naming both directions goes to the judge.

The grammar of a committed answer the reader decides on (tests/grading_corpus/README.md, "What the reader
decides on"); anything outside it, or a second candidate it cannot rule out, goes to the judge with the reason:

* value: one number, in digits or number words; US digits (113,733.21), a decimal comma with dot or space
  thousands (28,79; 40.082,64; 16 215,64) in a text that writes no decimal point, an unambiguous decimal
  comma anywhere (28,79 %), dot thousands in a text that writes '1.000.000' (or a round '518.000' among other dot
  groups) and no decimal point, space thousands ('1 001' once another number is so grouped), full-width digits,
  apostrophe thousands (7'220.39), Indian lakh groups (13,03,433), scientific notation (2.8785E-01, 1.2 × 10²,
  6.6 × 10^{-3}), 万, 億/亿 and their sums (1億6,990万); '1,234' in a text that writes decimal commas, '900.000' in a
  text that writes no other decimal point, a CJK numeral read only in part (1億6千万) and the text's only comma
  group when it is the key only with a decimal comma ('70,906' against 70.906) are ambiguous and deferred;
* sign: '-', U+2011/2012/2013/2212 minus signs, accounting parentheses, sign words (in English, French,
  German, Spanish, Portuguese, Italian, Russian, Turkish, Chinese, Japanese, Korean) before or after it;
* unit and scale: %, also before the number (%3,49), bps (and their translations), a currency, a scale word or
  '(in $ millions)', '(in $ 000s)', '($000s)', 'in thousands' right after it, the unit the stem asks for;
* words next to it: each word within two words of the value, in its sentence, is known (`neighbourhood`: English
  prose, the reader's lexicon in the languages above, the question's words, symbols), else deferred ('strata 12,0%');
* position: a JSON reply's answer field (or the field naming the asked quantity; a fenced YAML mapping is read
  alike, and prose around the block may hold no value but a year), the last `FINAL ANSWER:` line
  (its parts naming the asked quantity when it has several), or the concluding statement; a remark in
  parentheses after the value, a level after a change ('by 66 bps, from 3.15% to 3.81%'), a comparison or a
  supposition are not the answer; nor is a footnote ('¹ ...'); a table cell after a stated value is deferred, and
  so is a value graded wrong beside another result on the key (earlier and not taken back, or later and not in
  a remark: `settle.key_stated_elsewhere`); without an answer line, a value graded wrong while the key's value
  stands anywhere in the response's second half is deferred too (`settle.key_in_second_half`);
* the key: its number, matched within min(2 %, half the gap to the nearest option), or within its own
  rounding when written coarser than that ('€6', '0.0') and nearer to it than to any other option; a bare number
  that falls on two options as a fraction and as percentage points ('0.30' against 0 %, 30 %, 70 %), a value
  exactly on the edge of a coarse key's rounding ('0.225' against '0.23'), and one that rounds to a whole key at its
  trailing zeros ('£722.21' against '£700') are deferred.

The `FINAL ANSWER:` line, when present, is the answer (`answer_source="final_line"`); otherwise the
heuristic reader of `final_number` proposes the committed conclusion and `settle` checks it against the
statement of the asked quantity (`answer_source="heuristic"`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from cfa_lib.answers.asked import asked_phrase, asked_quantity, mentions, names_only_the_question
from cfa_lib.answers.choice import has_answer_line, read_choice
from cfa_lib.answers.commitment import (
    Direction,
    after_final_line,
    direction_agreement,
    directions,
    earlier_answer_lines,
    final_answer_line,
    has_refusal,
    in_question,
    is_refusal,
    leaves_open,
    takes_back,
    without_captions,
    without_inputs_after,
    without_remarks,
)
from cfa_lib.answers.final_number import Reading, clause_start, not_stated, read_body, value_clause
from cfa_lib.answers.hedges import (
    UNDECIDED,
    closes_on_two_results,
    conclusion,
    conclusion_depends,
    declines_to_choose,
    doubts_its_answer,
    ends_on_condition,
    ends_on_two_conventions,
    hedges_only_on_rounding,
    is_hedge,
    sentence_leaves_open,
)
from cfa_lib.answers.key import NumericKey, numeric_key, option_value, rounding_step
from cfa_lib.answers.locales import (
    normalise_signs,
)
from cfa_lib.answers.neighbourhood import unknown_word
from cfa_lib.answers.numbers import (
    CURRENCY_UNITS,
    PERCENT,
    Number,
    aligned_values,
    ratios_as_fractions,
    scan_values,
    spell_numbers,
    symmetric_values,
)
from cfa_lib.answers.question_unit import in_stem_unit, stem_unit
from cfa_lib.answers.settle import (
    bold_elsewhere,
    key_in_second_half,
    key_stated_elsewhere,
    one_bold_value,
    revised_after_final,
    rounded_after,
    settle,
    signed_after,
    table_after_statement,
)
from cfa_lib.answers.structured import answer_fields, closing_answer, json_reply, leaves_answer_empty
from cfa_lib.answers.text import clean, without_headings, without_question, without_struck
from cfa_lib.answers.two_readings import ambiguous_format, lone_group_on_key, two_readings
from cfa_lib.answers.value_context import (
    SCALE_NAMES,
    asks_for_a_fall,
    in_asked_time_unit,
    in_response_scale,
    options_scale,
    par_basis,
    spelled_currency,
    stem_scaled_by,
)
from cfa_lib.data import Question

Verdict = Literal["correct", "incorrect", "no_answer", "truncated", "judge"]
AnswerSource = Literal["final_line", "heuristic"]
VERDICTS: tuple[str, ...] = ("correct", "incorrect", "no_answer", "truncated", "judge")

__all__ = ["VERDICTS", "OpenGrade", "grade_choice", "grade_open_answer", "open_key"]


@dataclass(frozen=True)
class OpenGrade:
    """The verdict on one answer, the value (or letter) read, why, and which path read it."""

    verdict: Verdict
    value: Number | None
    reason: str
    answer_source: AnswerSource | None = None
    letter: str | None = None  # grade_choice only

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "value": None if self.value is None else self.value.value,
            "unit": None if self.value is None else self.value.unit,
            "letter": self.letter,
            "answer_source": self.answer_source,
            "reason": self.reason,
        }

    @property
    def correct(self) -> bool | None:
        """True/False for a graded answer, None when numbers did not decide (no_answer, truncated, judge)."""
        return {"correct": True, "incorrect": False}.get(self.verdict)


def open_key(question: Question) -> NumericKey | None:
    """The question's numeric key, its option numbers read in the unit the stem asks for ('(€ millions)'); a
    sentence stating one amount and a ratio count as numbers here (`key.option_value`)."""
    return _open_key(question.stem, tuple(question.choices.items()), question.answer)


@functools.lru_cache(maxsize=4096)
def _open_key(stem: str, choices: tuple[tuple[str, str], ...], answer: str) -> NumericKey | None:
    """`open_key` once per question text (a perturbed question has other text, so its own key)."""
    options = dict(choices)
    key = numeric_key(options, answer, statements=True)
    unit = stem_unit(stem)
    if key is None or unit is None or unit.bps:
        return key if key is None or key.ratio else replace(key, step=rounding_step(options[answer], option_value))

    def scaled(text: str) -> Number | None:
        number = option_value(text)
        return None if number is None else in_stem_unit(number, text, unit)

    return NumericKey(
        scaled(options[answer]),  # type: ignore[arg-type]
        {letter: scaled(options[letter]) for letter in key.distractors},
        key.ratio,
        rounding_step(options[answer], scaled),
    )


_ENDS_ON_UNIT = re.compile(r"\d\s*(?:%|bps|basis\s+points|million|billion|thousand|years?|months?)\s*[.*_]*\s*$", re.I)


def grade_open_answer(question: Question, response: str | None, finish_reason: str | None = None,
                      tolerance: float = 0.02) -> OpenGrade:
    """Grade one open-ended response against the question's key (see the module docstring for the order)."""
    key = open_key(question)
    cleaned = without_question(clean(response), question.stem)
    if finish_reason != "length":  # a cut reply ends where it was cut, not on a list the reader could drop
        cleaned = without_inputs_after(cleaned, question.stem)
    body = symmetric_values(spell_numbers(normalise_signs(without_struck(cleaned))))
    if key is not None and key.ratio:
        body = ratios_as_fractions(body)
    reply = json_reply(body, question.stem)
    if reply is not None:
        return _graded_json(question, reply, finish_reason, tolerance)
    line = final_answer_line(body)
    if line is None:
        line = closing_answer(body)  # '```json {"final_answer": "9.40%"} ```' closing a reply of prose
    final = None if line is None else without_remarks(line)
    if finish_reason == "length" and final is None:
        return OpenGrade("truncated", None, "cut by the token limit before a FINAL ANSWER line")
    # 'FINAL ANSWER: 42' of 422.1 may be cut; 'FINAL ANSWER: 5.00%' ends on its unit, complete
    # '**FINAL ANSWER: $174**' closes its markup after the value: complete
    if finish_reason == "length" and body.rstrip().endswith(final.rstrip()) and not _ENDS_ON_UNIT.search(final) \
            and not re.search(r"\d[ \t]*(?:\*\*|__|`)\s*\Z", response or ""):
        return OpenGrade("truncated", None, "cut by the token limit on the FINAL ANSWER line: the value may be cut")
    if not without_headings(body).strip():  # '## Solution' over a reasoning block and nothing else
        return OpenGrade("no_answer", None, "nothing is committed outside the reasoning block")

    parts = [] if final is None else _candidates(final, question.stem)
    graded_parts = {(g.verdict, g.value and round(g.value.value, 6)) for g in (
        grade_open_answer(question, f"FINAL ANSWER: {part}", finish_reason, tolerance) for part in parts)
    } if len(parts) > 1 else set()
    if len(graded_parts) > 1 and not is_hedge(line, question.stem):  # a hedge is no_answer
        # 'principal 1,020; coupon 30.60', '5.96% / 5.88%' (two day-count conventions, both in the window)
        return OpenGrade("judge", None, "the answer line states two values", "final_line")
    source: AnswerSource = "heuristic" if final is None else "final_line"
    text = body if final is None else final
    reading = read_body(text, question.stem, line=final is not None)
    if final is None:
        # a refusal that restates one of the question's numbers, with no answer marker, commits to none
        restated = reading is not None and not reading.explicit and in_question(reading.number, question.stem)
        if is_refusal(body, None if reading is None or restated else reading.number):
            return OpenGrade("no_answer", None, "the response refuses or asks for the options", source)
        # alternatives laid out before the committed value are not a hedge ("X can be 1, 2 or 3, so ..."); an
        # undecided sentence around it is ('Under one convention it is 3.60%, under the other 5.40%.')
        committed_text = body[reading.at + clause_start(reading) :] if reading else conclusion(body)
        if reading is not None and sentence_leaves_open(body, reading.position):
            return OpenGrade("no_answer", None, "the sentence giving the value leaves the answer open", source)
    else:
        committed_text = line  # with its remarks: '2.80% (365-day basis) / 2.90% (360-day basis)' is a hedge
    # a hedge between numbers leaves nothing to compare; words ("either operating or financing cash
    # flows") are the judge's to read when the key is words
    if key is not None and (is_hedge(committed_text, question.stem) or (
            source == "heuristic" and reading is not None and UNDECIDED.search(reading.region))):
        if hedges_only_on_rounding(committed_text, question.stem):
            return OpenGrade("judge", None, "the response puts the other values it offers down to rounding", source)
        return OpenGrade("no_answer", None, "the response offers alternatives or a range without choosing", source)
    if source == "heuristic" and doubts_its_answer(body):
        return OpenGrade("judge", None, "the response says it is unsure of its answer", source)
    if source == "heuristic" and closes_on_two_results(body):
        return OpenGrade("judge", None, "the response closes on two results and names neither the answer", source)
    if key is None and UNDECIDED.search(committed_text):
        return OpenGrade("no_answer", None, "the response says it has not chosen between alternatives", source)
    if key is None:
        value = _in_stem_unit(reading, question) if reading else None
        return OpenGrade("judge", value, "the correct option is not a single computed number "
                         "(words, a comparison, a label or a number shared with a distractor)", source)

    def match(r: Reading) -> bool:
        return key.window(_in_stem_unit(r, question), tolerance).match

    settled = settle(text, question.stem, reading, key.gold.unit, match, lambda r: str(_in_stem_unit(r, question)))
    if isinstance(settled, str):
        return OpenGrade("judge", None, settled, source)
    if settled is not None and (ambiguous := ambiguous_format(settled, cleaned) or lone_group_on_key(
            settled, _in_stem_unit(settled, question), cleaned, question.stem, key, tolerance)):
        return OpenGrade("judge", None, ambiguous, source)
    if settled is None:
        if has_refusal(body):
            return OpenGrade("no_answer", None, "the response refuses or asks for the options", source)
        label = final if final is not None else (closing := _CLOSING_LABEL.search(body)) and closing.group(1)
        if label is not None and names_only_the_question(label, question.stem):
            # 'FINAL ANSWER: The required rate of return', 'Answer: The answer is': a label with nothing in it
            return OpenGrade("no_answer", None, "the answer line names what is asked and gives no answer", source)
        return OpenGrade("judge", None, "the response commits to words, not a number", source)
    if source == "heuristic" and (why := not_stated(settled, question.stem)):
        return OpenGrade("judge", None, why, source)
    if source == "heuristic" and conclusion_depends(body):
        return OpenGrade("no_answer", None, "the response closes on 'it depends' and a value for each case", source)
    if source == "heuristic" and ends_on_two_conventions(body):
        return OpenGrade("no_answer", None, "the response closes on a value under each of two conventions", source)
    if source == "heuristic" and ends_on_condition(body, settled.position):
        return OpenGrade("no_answer", None, "the response ends on a condition after stating a different value",
                         source)
    if source == "heuristic" and (table := table_after_statement(body, settled.position, question.stem)):
        return OpenGrade("judge", None, table, source)
    if source == "heuristic" and (bold := bold_elsewhere(response, settled, question.stem, match)):
        if (marked := one_bold_value(response, question.stem)) is None:
            return OpenGrade("judge", None, bold, source)
        settled = marked  # the one value a response bolds is what it commits to ('| **Total** | **+2.21%** |')
    question_words = " ".join([question.stem, *question.choices.values()])
    if word := unknown_word(settled.region, settled.found.start, settled.found.end, question_words,
                            english=source == "heuristic"):
        return OpenGrade("judge", None, f"an unknown word next to the value: {word}", source)
    graded = _graded(question, in_response_scale(settled, body, question), value_clause(settled), key, tolerance,
                     source)
    if graded.verdict == "incorrect" and graded.value is not None and (
            elsewhere := key_stated_elsewhere(text, question.stem, settled, match,
                                              lambda r: _same_magnitude(r, graded.value, question, key))):
        return OpenGrade("judge", None, elsewhere, source)  # the body, or the FINAL ANSWER line's other values
    if source == "heuristic" and graded.verdict == "incorrect" and graded.value is not None and (
            late := key_in_second_half(body, question.stem, match,
                                       lambda r: _same_magnitude(r, graded.value, question, key))):
        return OpenGrade("judge", None, late, source)
    if source == "heuristic" and graded.verdict in ("correct", "incorrect") and (
            restated := rounded_after(body, settled, question.stem, match) or signed_after(body, settled, question.stem)
    ):  # '= 5.72%' then 'Rounded: ≈ 6%'; '= 1.10%' then 'expected to lose 1.10%'
        return OpenGrade("judge", None, restated, source)
    if final is not None and (revised := revised_after_final(after_final_line(body), question.stem,
                                                             graded.verdict == "correct", match)):
        return OpenGrade("judge", None, revised, source)
    for value, between in earlier_answer_lines(body):  # 'FINAL ANSWER: 3.88%', 'Hmm, ...', 'FINAL ANSWER: 4.13%'
        if not takes_back(between) and grade_open_answer(question, f"FINAL ANSWER: {value}", finish_reason,
                                                         tolerance).verdict != graded.verdict:
            return OpenGrade("judge", None, f"two FINAL ANSWER lines disagree ({value}, then {final}) and nothing "
                             "between takes the first back", source)
    return graded


# the text after an answer label on the reply's last line: 'Answer: The answer is'
_CLOSING_LABEL = re.compile(r"(?im)^[ \t*#>_-]*(?:final\s+)?answer[ \t*_]*[:：][ \t*_]*(.*?)[ \t*_.]*\Z")


def _same_magnitude(reading: Reading, value: Number, question: Question, key: NumericKey) -> bool:
    """The reading states the graded value up to its sign or direction ('$13m', then 'decreased by $13 million')."""
    other = abs(on_key_scale(_in_stem_unit(reading, question), key.gold).value)
    return abs(other - abs(value.value)) <= 0.005 * abs(value.value) + 1e-9


def _candidates(line: str, stem: str) -> list[str]:
    """The parts of an answer line ('; '- or ' / '-separated) that state a value; those naming the asked quantity only,
    when some do ('2.83 (Macaulay); modified 2.62' answers 'the Macaulay duration' with its first part)."""
    # '590 months / 583 months' is two values; '$1.03 / $18.01 = 5.72%' one quotient
    parts = [part for part in re.split(r";" if re.search("[=≈]", line) else r";|\s/\s", line) if re.search(r"\d", part)]
    if len(parts) < 2:  # one value: nothing to choose between (the asked quantity is not worth reading)
        return parts
    asked = asked_quantity(stem)
    named = [part for part in parts if asked is not None and mentions(asked, part)]
    return named or parts


_UNIT_SUFFIX = {"pct": "%", "percent": "%", "bps": " bps", "bp": " bps", "usd": " USD", "eur": " EUR", "gbp": " GBP"}


_GIVEN = frozenset("input inputs given givens data assumptions parameters params known knowns".split())  # not answers


def _graded_json(question: Question, reply: dict, finish_reason: str | None, tolerance: float) -> OpenGrade:
    """A JSON reply: its answer field ('answer', 'final_answer') or else the field named by the asked quantity
    ('irr', 'price', 'correlation'; a unit suffix '_pct', '_bps' is the value's unit), at the top level or one
    level down, is the answer; no such field, or two that disagree, is the judge's."""
    fields = answer_fields(reply)
    if leaves_answer_empty(reply) or (fields and all(value is None for _, value in fields) and is_refusal(
            " ".join(value for value in reply.values() if isinstance(value, str)), None)):
        # '{"answer": null, "reason": "The question cannot be answered without the answer choices ..."}'
        return OpenGrade("no_answer", None, "the JSON reply leaves its answer empty", "final_line")
    if not fields:
        asked = asked_quantity(question.stem)
        named = set() if asked is None else {asked.head, *asked.modifiers, (asked.acronym or "").lower()} - {""}
        # its scalar fields, and those one level down ('{"inputs": {...}, "result": {"margin_call_price": 15.33}}')
        scalars = [(name, value) for name, value in reply.items() if not isinstance(value, dict | list)] + [
            (name, value) for outer, inner in reply.items() if isinstance(inner, dict) and outer.lower() not in _GIVEN
            for name, value in inner.items() if not isinstance(value, dict | list)]
        fields = [(name, value) for name, value in scalars
                  if (words := [w for w in name.lower().split("_") if w not in _UNIT_SUFFIX]) and set(words) <= named]
        # else the fields sharing most words with it: 'expected_terminal_price', 'breakeven_move_pct'
        fields = fields or _most_named(scalars, question.stem)
    if not fields:
        return OpenGrade("judge", None, "the JSON reply has no field for the asked quantity")
    grades = [grade_open_answer(question, f"FINAL ANSWER: {value}{_UNIT_SUFFIX.get(name.lower().split('_')[-1], '')}",
                                finish_reason, tolerance) for name, value in fields]
    if len({g.verdict for g in grades}) > 1:
        return OpenGrade("judge", None, "the JSON reply's fields for the answer disagree")
    first = grades[0]
    return replace(first, reason=f"JSON field '{fields[0][0]}': {first.reason}")


_PHRASE_STOP = frozenset("the a an of in on at to for by with and or is are be its this that which from as per "
                         "closest most likely will would".split())


def _name_words(name: str) -> set[str]:
    """'breakevenMovePct', 'value_per_share' → {'breakeven', 'move', 'percentage'}, {'value', 'share'}."""
    words = re.findall(r"[A-Za-z][a-z]*|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name))
    spelled = {"pct": "percentage", "chg": "change", "px": "price", "qty": "quantity", "num": "number",
               "max": "maximum", "min": "minimum"}
    return {spelled.get(w.lower(), w.lower()).rstrip("s") for w in words} - _PHRASE_STOP


def _most_named(scalars: list[tuple[str, Any]], stem: str) -> list[tuple[str, Any]]:
    """The numeric fields whose names share most words with the asked quantity, then with the asked phrase, then
    have fewest other words ('max_loss' before 'max_loss_per_share', 'required_return' before 'dividend_rate' for
    'the required rate of return'), when one value stands for them all and they share at least one word."""
    def words_of(text: str) -> set[str]:
        return {w.rstrip("s") for w in re.findall(r"[a-z]+|\d+", text.lower())} - _PHRASE_STOP
    asked = asked_quantity(stem)
    phrase = words_of(asked_phrase(stem))
    quantity = phrase if asked is None else words_of(" ".join([*asked.modifiers, asked.head, asked.acronym or ""]))

    def one_value(value: Any) -> bool:  # 4.08, '4.08%', '$26.92'; not 'buy 846 contracts, 2 legs'
        return isinstance(value, int | float | str) and not isinstance(value, bool) and len(str(value)) <= 20 and \
            len(scan_values(str(value))) == 1

    scored = [((len(words & quantity), len(words & phrase), -len(words - phrase)), name, value)
              for name, value in scalars if one_value(value) and (words := _name_words(name))]
    best = max((score for score, _, _ in scored), default=(0, 0, 0))
    top = [(name, value) for score, name, value in scored if score == best]
    return top if best[0] and len({value for _, value in top}) == 1 else []


def _graded(question: Question, reading: Reading, clause: str, key: NumericKey, tolerance: float,
            source: AnswerSource) -> OpenGrade:
    """The committed value against the window, then its direction words against the key's ('sell 263'
    against 'Buy 263 ...' is incorrect; 'a loss of $1,300' answers 'the maximum possible loss')."""
    value = _in_stem_unit(reading, question)
    if value.value < 0 < reading.found.number.value and key.gold.value > 0 and asks_for_a_fall(question.stem):
        value = Number(-value.value, value.unit)  # 'declined by 2.5 %' states the decline asked for: 2.5 %
    clause = without_captions(key_directions(question), clause)
    direction = direction_agreement(key_directions(question), clause)
    if direction == "same" and value.value * key.gold.value < 0:
        value = Number(-value.value, value.unit)  # the key's own word carries the sign
    if two := two_readings(value, key, tolerance):
        return OpenGrade("judge", None, two, source)
    basis = par_basis(reading, question, value)
    if isinstance(basis, str):
        return OpenGrade("judge", None, basis, source)
    value = in_asked_time_unit(reading, question, basis)
    if scale := options_scale(question, reading, value):  # '65.9' against '£66 million.'
        scaled = Number(value.value * scale, value.unit or key.gold.unit)
        # the stem writes every amount in that scale: so does a bare answer ('13'; '$13' may have dropped it)
        if stem_scaled_by(question.stem, scale) and not spelled_currency(reading) and \
                not re.search(r"[$€£¥]", reading.token):
            value = scaled
        elif key.window(scaled, tolerance).match and not key.window(value, tolerance).match:
            return OpenGrade("judge", None, f"{reading.token.strip()}, with no scale word, against options in "
                             f"{SCALE_NAMES[scale]}s: read in their scale it is the key, as written it is not", source)
    grade = key.window(value, tolerance)
    shown = on_key_scale(value, key.gold)
    if key.on_rounding_edge(value, tolerance):
        return OpenGrade("judge", shown, f"{shown} is exactly on the edge of the key's rounding: half-up it is the "
                         "key, half-to-even it is not", source)
    if key.rounds_at_its_zeros(value, tolerance):
        return OpenGrade("judge", shown, f"{shown} rounds to the key at the key's trailing zeros, which may be exact "
                         "or rounded", source)
    if grade.match and direction == "opposite":
        return OpenGrade("incorrect", shown, f"{grade.reason}, but its direction word contradicts the key's "
                         f"({question.correct_text.strip()})", source)
    if direction == "both" and leaves_open(key_directions(question), clause):
        return OpenGrade("no_answer", None, "the answer leaves the direction open (both named as alternatives)",
                         source)
    if grade.match and direction == "both":
        return OpenGrade("judge", shown, "the number matches but the answer names both directions", source)
    return OpenGrade("correct" if grade.match else "incorrect", shown, grade.reason, source)


def key_directions(question: Question) -> set[Direction]:
    """The direction the key states: words of the correct option ('Buy 263 ...', 'receive $103,500'), else of
    the asked phrase ('the maximum possible loss'; not up/down, which also name quantities: 'the probability
    of an up move')."""
    asked = {d for d in directions(asked_phrase(question.stem)) if d[0] != "change"}
    return directions(question.correct_text) or asked


def on_key_scale(value: Number, gold: Number) -> Number:
    """The value written on the key's scale and unit: 0.1429 against a 14.3 % key is 14.29 %."""
    x, _ = aligned_values(value, gold)
    if gold.unit == PERCENT:
        return Number(float(f"{x * 100:.12g}"), PERCENT)  # 0.45 %, not 0.45000000000000007 %
    return Number(x, gold.unit if value.unit in (None, *CURRENCY_UNITS) else value.unit)


def _in_stem_unit(reading: Reading, question: Question) -> Number:
    return in_stem_unit(reading.number, reading.token, stem_unit(question.stem))


def grade_choice(question: Question, response: str | None, finish_reason: str | None = None, *,
                 options: Mapping[str, str] | None = None) -> OpenGrade:
    """Grade one multiple-choice response: the `ANSWER: X` line wins over trailing hypotheticals; a response
    cut by the token limit before any answer line is truncated, never wrong. `options` (by default the
    question's) lets an answer by an option's value or words count as its letter; when it matches two
    options the judge decides."""
    letters = "".join(question.choices)
    body = without_inputs_after(without_question(clean(response), question.stem), question.stem)
    if finish_reason == "length" and not has_answer_line(body, letters):
        return OpenGrade("truncated", None, "cut by the token limit before an ANSWER line")
    reading = read_choice(body, letters, options=question.choices if options is None else options)
    letter = reading.letter
    if letter is None:
        if reading.doubt:
            return OpenGrade("judge", None, reading.doubt)
        if not without_headings(body).strip():
            return OpenGrade("no_answer", None, "nothing is committed outside the reasoning block")
        if reading.no_choice:
            return OpenGrade("no_answer", None, reading.no_choice)
        if (reply := json_reply(body, question.stem)) is not None and leaves_answer_empty(reply):
            return OpenGrade("no_answer", None, "the JSON reply leaves its answer empty")
        if not declines_to_choose(body, question.stem, letters):
            return OpenGrade("judge", None, "no letter is read, and the response neither hedges, refuses nor names "
                             "two options: it may answer in a form the reader does not know")
        return OpenGrade("no_answer", None, "no single letter is committed")
    source: AnswerSource = "final_line" if has_answer_line(body, letters) else "heuristic"
    verdict: Verdict = "correct" if letter == question.answer else "incorrect"
    return OpenGrade(verdict, None, f"committed to {letter}; the key is {question.answer}", source, letter)
