"""The letter a multiple-choice response commits to.

It works in tiers: explicit answer statements ("ANSWER: C", "the correct answer is B", `\\boxed{B}`), then
verdicts ("Option C is correct"), then a response that is just a label line ("C) expected inflation").
Within the strongest tier present the last statement wins, so a final answer restated after an
explanation is what counts; a statement naming two letters gives None.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cfa_lib.answers.commitment import sentences
from cfa_lib.answers.final_number import read_number
from cfa_lib.answers.key import grade_number, numeric_key, rounding_step
from cfa_lib.answers.structured import answer_fields, data_block
from cfa_lib.answers.text import clean

_CONNECTIVES = {
    "because", "since", "as", "which", "that", "is", "was", "would", "should", "could", "will", "it",
    "this", "for", "given", "due", "with", "here", "so", "then", "but", "while", "whereas", "where",
    "though", "although", "indeed", "only", "again", "in", "per", "from", "to", "correct", "right",
}  # fmt: skip


@functools.cache  # built once per set of letters: every MCQ reply is read with the same few
def _choice_patterns(letters: str) -> list[tuple[int, re.Pattern[str]]]:
    """(tier, pattern) with a named group `letter`; tier 1 is strongest."""
    letter = rf"(?P<letter>[{letters}])(?![A-Za-z0-9_'’])"  # "正解はCです": a CJK word may follow
    any_case = rf"(?P<letter>(?i:[{letters}]))(?![A-Za-z0-9_'’])"  # "answer: c", "Chosen option — C"
    deco = r"[\s:=*_`$\"'“‘(\[{>~–—-]*"
    filler = (
        r"(?:(?i:therefore|thus|clearly|likely|most\s+likely|probably|then|indeed|either|both|option|choice|letter)\b"
        + deco
        + r")*"
    )
    explicit = (
        r"(?i:\bfinal\s+answer(?:\s+(?:is|would\s+be|will\s+be))?"
        r"|\b(?:answer|ans)(?:\s+(?:choice|option))?\s*(?:is|would\s+be|should\s+be|must\s+be|will\s+be|[:=：]|[-–—]+)"
        r"|\banswer\s*(?=\(\s*[A-Z]\s*\))"
        r"|\b(?:correct|right|best|final|most\s+appropriate|most\s+accurate)\s+(?:option|choice|response|selection|letter)\s*(?:is|would\s+be|[:=])"  # noqa: E501
        r"|\b(?:option|choice|selection|letter)\s*(?:[:=：]|[-–—]+)"  # "Chosen option — C", "choice: b"
        r"|\b(?:final|chosen|selected|picked)\s*(?:[:=：]|[-–—]+)"  # "FINAL: a", "Chosen: B"
        r"|\bfinal\s+(?:choice|pick|selection|letter|option)\s*(?:is|[:=：]|[-–—]+)"  # "Final pick: c"
        r"|\bI\s+(?:would\s+|will\s+|'?d\s+)?(?:choose|select|pick|go\s+with)"
        r"|\bI['’]d\s+(?:choose|select|pick|go\s+with)"
        r"|\bmy\s+(?:final\s+)?(?:answer|choice|pick|selection)\s*(?:is|would\s+be|[:=])"
        r"|答案\s*(?:是|为|[:：])|(?:答え|正解|정답|최종\s*답)\s*(?:は|은|는)?\s*[:：]?"  # Chinese, Japanese, Korean
        r"|\b(?:la\s+bonne\s+r[ée]ponse\s+est|la\s+respuesta\s+correcta\s+es|a\s+resposta\s+correta\s+[ée]|"
        r"la\s+risposta\s+corretta\s+[èe]|die\s+richtige\s+antwort\s+ist)\b"
        r"|\b(?:respuesta|r[ée]ponse|resposta|antwort|risposta|cevap|ответ)"
        r"(?:\s+(?:final|finale|correcta|correcte|correta))?\s*[:：]"
        r"|\\boxed\s*\{)"
    )
    verdict = (
        r"[)\]]?\s+(?i:is|are|would\s+be|seems\s+to\s+be|appears\s+to\s+be)\s+(?i:the\s+)?(?i:most\s+|only\s+)?"
        r"(?i:correct\b|right\b|best\b|accurate\b|appropriate\b|true\b|answer\b|valid\b)"
    )
    verdict_before = rf"(?<![\w'’])(?:(?i:option|choice|answer)\s*)?[(\[]?(?P<letter>[{letters}]){verdict}"
    named_verdict = rf"(?i:\b(?:option|choice|answer))\s*[(\[]?(?P<letter>(?i:[{letters}])){verdict}"  # "option (b) is"
    verdict_verb = rf"(?i:\b(?:choose|select|pick|go\s+with))\s+{filler}[(\[]?{letter}"
    # "... credit quality is high. So A.": a closing sentence that is only a connective and a letter
    # "..., which leaves C.", "Neither A nor B is a contra asset, so C: the allowance ...", "... It is B."
    closing = rf"(?m)(?:^|(?<=[.!?,;])\s+)(?i:so|thus|therefore|hence|which\s+leaves|that\s+leaves|leaving|" \
              rf"it\s+is|it['’]s|(?:so\s+)?it\s+must\s+be)[,:]?\s+" \
              rf"(?:(?i:option|choice)\s+)?[(\[]?(?P<letter>[{letters}])[)\]]?(?:\s*[.!]?[ \t]*$|:\s|\s+[—–]\s)"
    # "$120 (option C).", "i.e. option B.", "Option A (standardized) — ...", "Option (C): ...", "... → B",
    # "... it will generate (B).": a letter named at the end of a statement
    named = rf"(?i:\boption|\bchoice)\s*[(\[]?{letter}[)\]]?(?=\s*(?:\([^)]*\)\s*)?(?:[.)!:;—–]|-\s|$))"
    # "... so the second option fits best.", "Of the three, the third option is least likely to ...": an option
    # the closing sentence says something of (ordinals are read as letters first, `_ordinals_as_letters`)
    named_then = rf"(?i:\boption)\s+{letter}\s+(?i:is|fits|seems|looks|matches|describes)\b(?!\s+not\b)[^.\n]*[.!]?\s*$"
    arrow = rf"(?m)(?:→|⇒|=>|->)\s*[(\[]?{letter}[)\]]?\s*[.!]?[ \t]*$"
    end_label = rf"(?m)(?<=\s)\((?P<letter>[{letters}])\)\s*[.!]?[ \t]*$"
    # "... complies with the entire Code: B.": a letter after a colon closing the response
    end_colon = rf"[:：]\s*[*_]*[(\[]?{letter}[)\]]?[*_]*\s*[.!]?\s*$"
    return [
        (1, re.compile(rf"{explicit}{deco}{filler}{any_case}")),
        (1, re.compile(rf"{explicit}{deco}[^()\n.]{{1,80}}?\({letter}\)")),  # "Answer: First mortgage debt (A)"
        (1, re.compile(_NEGATION.format(letters=letters))),
        (2, re.compile(verdict_before)),
        (2, re.compile(named_verdict)),
        (2, re.compile(verdict_verb)),
        (2, re.compile(closing)),
        (3, re.compile(named)),
        (3, re.compile(named_then)),
        (3, re.compile(arrow)),
        (3, re.compile(end_label)),
        (3, re.compile(end_colon)),
    ]


def _is_hypothetical(text: str, start: int) -> bool:
    """'If the rate were annual, the answer would be A': a statement inside a conditional sentence."""
    sentence = re.split(r"[.!?\n]\s*", text[:start])[-1]
    return bool(re.search(r"(?i)\b(?:if|had|were|otherwise|instead)\b", sentence)) and \
        bool(re.search(r"(?i)\bwould\b", text[start : start + 40] + sentence))


def _letter_is_article(text: str, end: int) -> bool:
    """'A bond's price...': an English article, not a choice."""
    following = re.match(r"\s+([a-z][\w'’-]*)", text[end:])
    return bool(following) and following.group(1) not in _CONNECTIVES


def _names_two_letters(text: str, start: int, end: int, letters: str) -> bool:
    joiner = r"\s*(?:,|/|&|\band/or\b|\band\b|\bor\b|或|或者|\boder\b|\bou\b|\bo\b|\bили\b)\s*"
    after = re.match(rf"[)\]]?{joiner}(?:(?i:option|choice)\s*)?[(\[]?[{letters}](?![\w'’])", text[end:])
    before = re.search(rf"(?<![\w'’])[{letters}][)\]]?{joiner}(?:(?i:option|choice)\s*)?[(\[]?$", text[:start])
    return bool(after or before)


_LABEL_LINE = (
    r"^[\s>#—–]*(?:→|⇒|=>|->)?\s*(?:(?i:so|thus|therefore|hence|final|answer)[,:]?\s*)?(?:(?i:option|choice)\s*)?"
    r"(?:\((?P<l1>[{letters}])\)|\[(?P<l2>[{letters}])\]|(?P<l3>(?i:[{letters}]))\)|(?P<l4>[{letters}])(?=[.:\-–—]|\s+[–—]\s|\s*$)|(?P<l5>[{lower}])(?=\.?\s*$))"
    r"(?P<rest>.*)$"
)


def _label_line_letter(text: str, letters: str) -> str | None:
    """A response that is, or ends with, a bare label line: 'C) expected inflation', '**C**', '(B)'.

    Bullet items ('- C', '• B') are not labels: they are symbols in a list (C = coupon); a letter after an
    em dash ('— C') is."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    pattern = re.compile(_LABEL_LINE.format(letters=letters, lower=letters.lower()))
    labelled = [(i, m) for i, line in enumerate(lines) if (m := pattern.match(line))]
    if not labelled:
        return None
    named = {_label_letter(m) for _, m in labelled}
    if len(named) == 1:
        return named.pop()
    last_index, last = labelled[-1]
    if last_index == len(lines) - 1 and not last.group("rest").strip(" .:)"):
        return _label_letter(last)  # a listing of the options followed by a lone final letter
    return None


def _label_letter(match: re.Match[str]) -> str:
    return next(match.group(g) for g in ("l1", "l2", "l3", "l4", "l5") if match.group(g)).upper()


# "ANSWER: C", "answer: c", "Answer — C": the line the Format A prompt asks for, in any case, after a colon or dash
_ANSWER_LINE = (
    r"(?im)^[ \t>#*_\-•]*(?:final[ \t]+)?answer[ \t*_]*(?:[:：]|[ \t]*[-–—]+)[ \t*_~(\[]*"
    r"(?P<letter>[{letters}])(?![\w'’])"
)
# "~~A~~ C?": a retracted letter next to a doubted one (two letters); "~~B~~ A": a correction to A
_STRUCK = re.compile(r"~~\s*\(?([A-Z])\)?\s*~~(?P<corrected>\s*\(?[A-Z]\)?(?![\w?])(?!\s*\?))?")


def _struck(match: re.Match[str]) -> str:
    return match.group("corrected") or f"{match.group(1)} or"

# "not A or C — it's B", "the answer is not C but B": a negation that commits to the remaining letter
_NEGATED = r"(?i:option\s+)?[{letters}](?:\s*\([^)]*\))?"  # "A (simple discount)"
_NEGATION = r"(?i:\bnot)\s+" + _NEGATED + r"(?:\s*(?:,|(?i:or|nor|and))\s*" + _NEGATED + ")*" \
    r"\s*(?:,?\s*(?i:but)|[—–-]+\s*(?i:it['’]?s|it\s+is)?|[,;.]\s*(?i:it['’]?s|it\s+is))\s*[*_(\[]*(?P<letter>[{letters}])(?![\w'’])"


# the prompt's own 'ANSWER: C' in capitals inside a line: '... → 113,733. ANSWER: C' after an earlier answer line
_ANSWER_INLINE = r"(?<![\w])ANSWER[ \t]*[:：][ \t*_(\[]*(?P<letter>[{letters}])(?![\w'’])"


def _answer_lines(body: str, letters: str) -> list[re.Match[str]]:
    """The `ANSWER: X` lines of a cleaned body, and the prompt's capitals inside a line, in order, without
    'Answer: A bond's price ...' (an article)."""
    found = {m.start("letter"): m for pattern in (_ANSWER_LINE, _ANSWER_INLINE)
             for m in re.finditer(pattern.format(letters=letters), body)}
    return [m for _, m in sorted(found.items()) if not _is_article(m.group("letter"), body, m.end("letter"))]


def _is_article(letter: str, text: str, end: int) -> bool:
    return letter in "Aa" and _letter_is_article(text, end)


# letters of A-C in other scripts: Cyrillic by shape and by order alike (А; Б, the second letter), Greek,
# full-width ('Ответ: А', 'Ответ: Б', 'Ｂ'); the Cyrillic В is left out: B by its shape, C by its place (А, Б, В)
_LOOKALIKES = str.maketrans("АБСЕабсеΑΒΕＡＢＣＤＥａｂｃｄｅ", "ABCEabceABEABCDEabcde")
_LONE_LOOKALIKE = re.compile(r"(?<!\w)[АБСЕабсеΑΒΕ](?=[ \t]*(?:[).:;!*\]]|$))|[Ａ-Ｅａ-ｅ]", re.MULTILINE)


_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4}
_COUNTED = {"one": 0, "two": 1, "three": 2, "four": 3, "five": 4}  # 'option three'
# the Cyrillic В alone as the answer: B by its shape, C by its place (А, Б, В); the judge's to read
_CYRILLIC_VE = re.compile(r"(?<!\w)[Вв](?=[ \t]*(?:[).:;!*\]]|$))", re.MULTILINE)


def _ordinals_as_letters(body: str, letters: str) -> str:
    """'the third option' and 'option #1' (options numbered as people count them) as 'option C' and 'option A'."""
    def letter(index: int, whole: str) -> str:
        return f"option {letters[index]}" if 0 <= index < len(letters) else whole
    body = re.sub(r"(?i)\bthe\s+(first|second|third|fourth|fifth)\s+(?:option|choice)\b",
                  lambda m: letter(_ORDINALS[m.group(1).lower()], m.group()), body)
    body = re.sub(r"(?i)\b(?:option|choice)\s+(one|two|three|four|five)\b",
                  lambda m: letter(_COUNTED[m.group(1).lower()], m.group()), body)
    return re.sub(r"(?i)\b(?:option|choice)\s*#\s*([1-5])\b", lambda m: letter(int(m.group(1)) - 1, m.group()), body)


def latin_letters(body: str) -> str:
    """A letter written in another script as its Latin twin, where it stands alone before punctuation or the end
    of a line ('Ответ: А' is A); a Russian word such as the preposition 'В соответствии' is left alone."""
    return _LONE_LOOKALIKE.sub(lambda m: m.group().translate(_LOOKALIKES), body)


def has_answer_line(body: str, choices: Iterable[str] | str = "ABC") -> bool:
    """A cleaned body holds the `ANSWER: X` line the Format A prompt asks for."""
    letters = "".join(sorted({c.strip().upper() for c in choices if c.strip()}))
    return bool(_answer_lines(body, letters))


def extract_choice(text: str | None, choices: Iterable[str] | str = "ABC", *,
                   options: Mapping[str, str] | None = None) -> str | None:
    """The letter the response commits to as its final answer, or None (no letter, or two letters).

    The last `ANSWER: X` line (the prompt's format) wins over everything after it: hypotheticals ("if the
    rate were annual, the answer would be A"), asides, restatements. Without it, the strongest statement
    wins (see the module docstring); a negation such as "not A but C" commits to C. With the `options`'
    texts, an answer that names no letter but states one option's value or words maps to that letter."""
    return read_choice(text, choices, options=options).letter


@dataclass(frozen=True)
class ChoiceReading:
    """The letter committed to, or None and whether that is because two candidates remain (`doubt`)."""

    letter: str | None
    doubt: str = ""  # why the reader cannot tell (two options matched): the judge's to read


def read_choice(text: str | None, choices: Iterable[str] | str = "ABC", *,
                options: Mapping[str, str] | None = None) -> ChoiceReading:
    """`extract_choice` with the reason when no letter can be told: a JSON reply's answer field, the answer
    line, the statements by tier, a label line; then, with `options`, the option whose value or words the
    concluding statement gives (two such options: doubt)."""
    letters = "".join(sorted({c.strip().upper() for c in choices if c.strip()}))
    if not letters or not all(c.isalpha() and len(c) == 1 for c in letters):
        raise ValueError(f"choices={choices!r} must be single letters such as 'ABC'")
    body = latin_letters(clean(text))
    if not body.strip():
        return ChoiceReading(None)
    block = data_block(body)
    if block is not None:
        reply, prose = block
        named = {str(v).strip().strip("()").upper() for _, v in answer_fields(reply) if isinstance(v, str)}
        named = {v for v in named if len(v) == 1 and v in letters}
        if not prose.strip():
            return ChoiceReading(named.pop()) if len(named) == 1 else ChoiceReading(
                None, "" if not named else "the JSON reply names two letters")
        if len(named) == 1:  # prose, then '```json {"answer": "C"} ```': the block is the answer line
            said = read_choice(prose, letters).letter
            return ChoiceReading(named.pop()) if said in (None, *named) else ChoiceReading(
                None, "the prose and the JSON answer name different letters")
    body = _ordinals_as_letters(_STRUCK.sub(_struck, body), letters)
    lines = _answer_lines(body, letters)
    if lines:
        last = lines[-1]
        start, end = last.span("letter")
        if options and (other := _words_disagree(body, end, last.group("letter"), options)):
            return ChoiceReading(None, other)
        # 'ANSWER: A — no, C.': the answer line corrects itself
        corrected = re.match(rf"[)\]*]*\s*[—–,;-]+\s*(?i:no|wait|actually|sorry|correction|I\s+mean)\b[,:!]?\s*"
                             rf"[(\[*]*(?P<letter>[{letters}])(?![\w'’])", body[end:])
        if corrected:
            start, end = end + corrected.start("letter"), end + corrected.end("letter")
            return ChoiceReading(_one_letter(body, start, end, corrected.group("letter"), letters))
        return ChoiceReading(_one_letter(body, start, end, last.group("letter"), letters))
    if re.search(rf"(?:(?i:\bso|\bthen|\bthus|\bhence|\banswer\b)[:\s]*|,)\s*\(?[{letters}]\)?\s+or\s+\(?[{letters}]\)?"
                 r"[\s.!?*]*\Z", body):
        return ChoiceReading(None)  # '... depends on the day count, so A or B.': the conclusion leaves two open
    found: dict[int, list[tuple[int, int, str]]] = {}
    for tier, pattern in _choice_patterns(letters):
        for match in pattern.finditer(body):
            start, end = match.span("letter")
            if tier == 1 and _is_hypothetical(body, match.start()):
                continue
            if tier > 1 and _NOT_BEFORE.search(body, max(0, start - 60), start):
                continue  # '(A), not the multistage DDM (C)': the letter a clause rules out
            if _is_article(match.group("letter"), body, end):
                continue
            found.setdefault(tier, []).append((start, end, match.group("letter")))
    strong = {tier: statements for tier, statements in found.items() if tier < WEAK_TIER}
    if strong:
        start, end, letter = max(strong[min(strong)])  # the strongest tier present, its last statement
        if options and (other := _words_disagree(body, end, letter, options)):
            return ChoiceReading(None, other)
        return ChoiceReading(_one_letter(body, start, end, letter, letters))
    label = _label_line_letter(body, letters)
    weak = {letter.upper() for _, _, letter in found.get(WEAK_TIER, [])}
    if label is not None or weak:
        named = weak | ({label} if label else set())
        return ChoiceReading(named.pop()) if len(named) == 1 else ChoiceReading(None, "two letters are named")
    reading = _by_option(body, letters, options) if options else ChoiceReading(None)
    if reading.letter is None and not reading.doubt and (named := _letters_named_alone(body, letters)):
        return ChoiceReading(None, f"option {named} is named, but in no form the reader decides on")
    if reading.letter is None and not reading.doubt and _CYRILLIC_VE.search(body):
        return ChoiceReading(None, "a Cyrillic В is named: B by its shape, C by its place in А, Б, В")
    return reading


def _words_disagree(body: str, end: int, letter: str, options: Mapping[str, str]) -> str:
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


def _letters_named_alone(body: str, letters: str) -> str:
    """The letters a response names when it names no alternatives ('It's not C, since ... Then B'): no_answer
    needs positive evidence (no letter at all, a refusal, alternatives left open: 'A or B depending on ...')."""
    named = [m for m in re.finditer(rf"(?<![\w'’])[{letters}](?![\w'’])", body)
             if not _is_article(m.group(), body, m.end())]
    if any(_names_two_letters(body, *m.span(), letters) for m in named):
        return ""
    return ", ".join(sorted({m.group() for m in named}))


WEAK_TIER = 3  # a letter named in passing ("(option C)", "→ B"): counted only when no other letter is


def _by_option(body: str, letters: str, options: Mapping[str, str]) -> ChoiceReading:
    """The option whose number the committed value falls on (its acceptance window against the other
    options), or else whose words the concluding sentence states, not negated; two: doubt."""
    choices = {letter: text for letter, text in options.items() if letter.upper() in letters}
    reading = read_number(body)
    if reading is not None:
        keys = {letter: numeric_key(choices, letter) for letter in choices}
        if any(keys.values()):
            rounded = _at_precision(reading.token, reading.number, keys)
            if len(rounded) > 1:
                return ChoiceReading(None)  # '$77.8 thousand' against $77,780 and $77,807: names no single option
            if not rounded and _coarser_than(reading.token, [choices[o] for o, key in keys.items() if key is not None]):
                return ChoiceReading(None)  # '39.8' against 39.68 and 39.96: it rounds to neither
            hits = [letter for letter, key in keys.items() if key is not None and grade_number(
                reading.number, key.gold, list(key.distractors.values())).match]
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


def _at_precision(token: str, value, keys: Mapping) -> list[str]:
    """The options that round to the value as written ('$77.8 thousand' is $77,750 to $77,850: $77,780 and
    $77,807 both), in the value's own unit."""
    step = rounding_step(token, lambda text: (r := read_number(text)) and r.number)
    return [letter for letter, key in keys.items() if step and key is not None and key.gold.unit == value.unit
            and abs(key.gold.value - value.value) <= step / 2 * (1 + 1e-9)]


_NOT_BEFORE = re.compile(r"(?i)\bnot\b[^,;.:!?\n]*$")


def _coarser_than(token: str, options: list[str]) -> bool:
    """The value is written with fewer decimals than every numeric option ('39.8' against '39.68', '39.96')."""
    def places(text: str) -> int:
        found = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
        return len(found.group(1) or "") if found else 0
    return bool(options) and all(places(token) < places(text) for text in options)


def _opens_with(body: str, option: str) -> bool:
    """The response begins with the option's whole text, then a dash or a colon ('Statement 1 — ...')."""
    text = re.escape(option.strip().rstrip(".").strip())
    return bool(text) and bool(re.match(rf"(?i)[\s*_#>]*{text}[\s*_.]*(?:[—–:]|-\s)", body))


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


def _one_letter(body: str, start: int, end: int, letter: str, letters: str) -> str | None:
    """The committed letter in capitals, or None when the statement names two ('A or C', 'b/c')."""
    same_case = letters if letter.isupper() else letters.lower()
    return None if _names_two_letters(body, start, end, same_case) else letter.upper()


