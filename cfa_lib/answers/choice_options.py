"""A multiple-choice answer given by an option's value or words instead of its letter ('$120', 'Default risk.'),
and a letter whose restatement states another option's words ('ANSWER: B) daily', where daily is A)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from cfa_lib.answers.commitment import sentences
from cfa_lib.answers.final_number import read_number
from cfa_lib.answers.key import grade_number, numeric_key, rounding_step
from cfa_lib.answers.locales import normalise_signs
from cfa_lib.answers.numbers import Number, scan_values
from cfa_lib.answers.text import without_headings


@dataclass(frozen=True)
class ChoiceReading:
    """The letter committed to, or None: because two candidates remain (`doubt`, the judge's to read), because the
    response itself leaves the choice open (`no_choice`, a `no_answer`), or for neither reason (the judge's, unless
    the response shows it declines to choose)."""

    letter: str | None
    doubt: str = ""  # why the reader cannot tell (two options matched)
    no_choice: str = ""  # why the response names no single option ('so A or B', '39.8' between 39.68 and 39.96)


def words_disagree(body: str, end: int, letter: str, options: Mapping[str, str]) -> str:
    """Why the committed letter is in doubt, or '': the short clause restating it states another option's words and
    not its own ('ANSWER: B) daily', where daily is A); an aside after it ('C — though also known as a Pareto chart
    (A)', 'certainly not junior debt') is no restatement."""
    clause = re.split(r"[.;,:\n]|\b(?:though|but|although|while|whereas|since|because)\b", body[end:], maxsplit=1)[0]
    if _NEGATED_WORDS.search(clause) or len(clause.split()) > 6:  # a short restatement, not an aside
        return ""
    named = _stated(clause, options)
    if named and letter.upper() not in {n.upper() for n in named}:
        return f"the letter {letter.upper()} and the words of option {', '.join(named)} after it disagree"
    return ""


def by_option(body: str, letters: str, options: Mapping[str, str]) -> ChoiceReading:
    """The option whose number the committed value falls on (its acceptance window against the other
    options), or else whose words the concluding sentence states, not negated; two: doubt."""
    choices = {letter: text for letter, text in options.items() if letter.upper() in letters}
    reading = read_number(body)
    if reading is not None:
        keys = {letter: numeric_key(choices, letter) for letter in choices}
        if any(keys.values()):
            rounded = _at_precision(reading.token, reading.number, keys)
            if len(rounded) > 1:
                return ChoiceReading(None, no_choice="the value rounds to two options")  # '$77.8 thousand'
            if not rounded and _coarser_than(reading.token, [choices[o] for o, key in keys.items() if key is not None]):
                return ChoiceReading(None, no_choice="the value rounds to no option")  # '39.8': 39.68, 39.96
            hits = [letter for letter, key in keys.items() if key is not None and grade_number(
                reading.number, key.gold, list(key.distractors.values())).match]
            if len(hits) == 1 and not _rounds_to(reading.token, reading.number, choices[hits[0]], keys[hits[0]].gold):
                # 'ANSWER: 7.42%' against 7.29%, 7.56%, 8.16%: in 7.29%'s window, but a value no option states
                return ChoiceReading(None, f"the value {reading.token.strip()} is near option {hits[0].upper()} "
                                           "but does not round to it")
            if len(hits) == 1:
                return ChoiceReading(hits[0].upper())
            return ChoiceReading(None, f"the value {reading.number} falls on {'two' if hits else 'no'} option")
    opening = [letter for letter, text in choices.items() if _opens_with(body, text)]
    if len(opening) == 1:  # "Statement 1 — a large illiquid allocation is risky ...": the answer comes first
        return ChoiceReading(opening[0].upper())
    last = next((s for s in reversed(sentences(body)) if re.search(r"\w", s)), "")
    if _NEGATED_WORDS.search(last):
        return ChoiceReading(None, "the concluding sentence negates what it names") if _stated(last, choices) \
            else ChoiceReading(None)
    hits = _stated(last, choices)
    if len(hits) > 1 and re.search(r"(?i)\bor\b", last):
        return ChoiceReading(None)  # "either Fair Dealing or Diligence ...": two letters offered, none chosen
    if len(hits) > 1:
        return ChoiceReading(None, "the concluding sentence states the words of two options")
    if hits:
        return ChoiceReading(hits[0].upper())
    near = _stated(last, choices, inside=True)
    return ChoiceReading(None, f"the concluding sentence nearly states option {near[0]}'s words" if near else "")


def _value_of(text: str) -> Number | None:
    """The number a text commits to, as the rounding steps of values and options are read."""
    return (reading := read_number(text)) and reading.number


def values_stated(text: str, choices: Mapping[str, str]) -> list[str]:
    """The options whose number the text writes, digit for digit, in any minus sign ('The 111.88 and 135.88
    figures')."""
    written = [f.number for f in scan_values(normalise_signs(text))]
    return [letter for letter, option in choices.items() if (value := _value_of(normalise_signs(option))) is not None
            and any(n.unit == value.unit and math.isclose(n.value, value.value, rel_tol=1e-9) for n in written)]


def _at_precision(token: str, value, keys: Mapping) -> list[str]:
    """The options that round to the value as written ('$77.8 thousand' is $77,750 to $77,850: $77,780 and
    $77,807 both), in the value's own unit."""
    step = rounding_step(token, _value_of)
    return [letter for letter, key in keys.items() if step and key is not None and key.gold.unit == value.unit
            and abs(key.gold.value - value.value) <= step / 2 * (1 + 1e-9)]


def _rounds_to(token: str, value, option: str, gold) -> bool:
    """The value and the option's number agree at the coarser of their two precisions ('3.3%' and '3.33%', '925.93' and
    'CHF 926'; not '7.42%' and '7.29%'); values in different units are not compared here."""
    steps = [rounding_step(token, _value_of), rounding_step(option, _value_of)]
    if value.unit != gold.unit or None in steps:
        return True
    return abs(value.value - gold.value) <= max(steps) / 2 * (1 + 1e-9)


def _coarser_than(token: str, options: list[str]) -> bool:
    """The value is written with fewer decimals than every numeric option ('39.8' against '39.68', '39.96'); a
    fraction ('1,000,000 / 678,259') has no precision of its own."""
    if "/" in token:
        return False

    def places(text: str) -> int:
        found = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
        return len(found.group(1) or "") if found else 0
    return bool(options) and all(places(token) < places(text) for text in options)


def _opens_with(body: str, option: str) -> bool:
    """The response begins with the option's whole text, then a dash, a colon or a full stop ('Statement 1 — ...',
    'Default risk. For high-quality issuers ...'), under a heading or not."""
    text = re.escape(option.strip().rstrip(".").strip())
    body = without_headings(body).lstrip()  # a '## Solution' heading above it
    return bool(text) and bool(re.match(rf"(?i)[\s*_#>]*{text}[*_]*(?:\s*[—–:]|\s+-\s|\.(?:\s|$))", body))


_NEGATED_WORDS = re.compile(r"(?i)\b(?:not|no|never|neither|nor|rather\s+than|instead\s+of|unlike)\b|n['’]t\b")
_STOP = frozenset("a an the of to in on at is are be by for as and or with its it this that".split())


def _words(text: str) -> set[str]:
    """Content words cut to five letters ('cancelled' and 'cancel' are one word)."""
    return {w[:5] for w in re.findall(r"[a-z]+", text.lower().replace("-", " ")) if w not in _STOP}


def _said(word: str, said: set[str], inside: bool = False) -> bool:
    """The word is said ('show', 'shown'); `inside`: also within a longer word ('onven' in 'convenience', an option
    text with a typo), which is a near match only."""
    return any(s.startswith(word) or (len(s) >= 4 and word.startswith(s)) or (inside and len(word) >= 4 and word in s)
               for s in said)


def _stated(sentence: str, options: Mapping[str, str], inside: bool = False) -> list[str]:
    """The options every content word of which the last clause of the sentence holds; an option whose words
    another stated option's words contain ('volatility' within 'volatility and default') gives way to it."""
    said = {w for w in re.findall(r"[a-z]+", re.split(r";", sentence)[-1].lower())} if inside else \
        _words(re.split(r";", sentence)[-1])
    hits = {letter: words for letter, text in options.items()
            if (words := _words(text)) and all(_said(w, said, inside) for w in words)}
    return [letter for letter, words in hits.items() if not any(words < other for other in hits.values())]
