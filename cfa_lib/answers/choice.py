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

from cfa_lib.answers.choice_options import ChoiceReading, by_option, values_stated, words_disagree
from cfa_lib.answers.commitment import has_refusal, sentences, takes_back
from cfa_lib.answers.hedges import UNDECIDED, conclusion, doubts_its_answer, is_hedge
from cfa_lib.answers.structured import data_block, letter_fields
from cfa_lib.answers.text import clean, without_headings

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
        r"(?:(?:(?i:therefore|thus|clearly|likely|most\s+likely|probably|then|indeed|either|both|option|choice|letter)\b"
        # '答え：選択肢C' (answer: option C), 'Respuesta: la opción a'
        r"|選択肢|选项|選項|선택지|보기|(?i:(?:la\s+|l['’]|a\s+)?(?:opci[óo]n|op[çc][ãa]o|opzione|alternativa)))"
        + deco
        + r")*"
    )
    explicit = (
        r"(?i:\bfinal\s+answer(?:\s+(?:is|would\s+be|will\s+be))?"
        r"|\b(?:answer|ans)(?:\s+(?:choice|option))?\s*(?:is|would\s+be|should\s+be|must\s+be|will\s+be|[:=：]|[-–—]+)"
        r"|\banswer\s*(?=\(\s*[A-Z]\s*\))"
        r"|\b(?:correct|right|best|final|most\s+appropriate|most\s+accurate)\s+(?:option|choice|response|selection|letter)\s*(?:is|would\s+be|[:=]|→|->|=>)"  # noqa: E501
        r"|\b(?:option|choice|selection|letter)\s*(?:[:=：]|[-–—]+)"  # "Chosen option — C", "choice: b"
        r"|\b(?:final|chosen|selected|picked)\s*(?:[:=：]|[-–—]+)"  # "FINAL: a", "Chosen: B"
        r"|\|[ \t]*(?:final[ \t]+)?(?:answer|choice)[ \t]*\|"  # a table's answer row: '| **Answer** | **B** |'
        r"|\bfinal\s+(?:choice|pick|selection|letter|option)\s*(?:is|[:=：]|[-–—]+)"  # "Final pick: c"
        r"|\bI\s+(?:would\s+|will\s+|'?d\s+)?(?:choose|select|pick|go\s+with)"
        r"|\bI['’]d\s+(?:choose|select|pick|go\s+with)"
        r"|\bmy\s+(?:final\s+)?(?:answer|choice|pick|selection)\s*(?:is|would\s+be|[:=])"
        r"|答案\s*(?:是|为|[:：])|(?:答え|正解|정답|최종\s*답)\s*(?:は|은|는)?\s*[:：]?"  # Chinese, Japanese, Korean
        r"|(?:应|应该|应当|故|所以)选(?:择)?"  # '所以应选 C' (so choose C)
        # 'La opción correcta es la A', 'A resposta correta é a B'
        r"|\b(?:la\s+bonne\s+(?:r[ée]ponse|option)\s+est|la\s+(?:respuesta|opci[óo]n)\s+correcta\s+es|"
        r"a\s+(?:resposta|op[çc][ãa]o|alternativa)\s+correta\s+[ée]|la\s+risposta\s+corretta\s+[èe]|"
        r"l['’]opzione\s+corretta\s+[èe]|die\s+richtige\s+(?:antwort|option)\s+ist)\b(?:\s+(?:la|el|le|a|o)\b)?"
        r"|правильный\s+ответ\s*(?:[—–-]|[:：])\s*(?:вариант\s+)?"  # 'Правильный ответ — вариант A.'
        # 'Doğru cevap B şıkkıdır.' (the right answer is B)
        r"|\bdoğru\s+(?:cevap|yanıt)(?:\s+(?:şıkkı|seçenek))?\s*[:：]?"
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
    named_lower = rf"(?i:\boption|\bchoice)\s*\({any_case}\)(?=\s*(?:[.!:;—–]|-\s|$))"  # 'matches option (b).'
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
        (3, re.compile(named_lower)),
        (3, re.compile(named_then)),
        (3, re.compile(arrow)),
        (3, re.compile(end_label)),
        (3, re.compile(end_colon)),
    ]


_CONDITION = re.compile(r"(?i)\b(?:if|had|were|otherwise|instead)\b")


def _is_hypothetical(text: str, start: int) -> bool:
    """'If the rate were annual, the answer would be A', '(C would be right if the saving were channelled
    abroad.)': a statement inside a conditional sentence."""
    sentence = re.split(r"[.!?](?!\d)\s*|\n", text[:start])[-1]  # '$2.00' ends no sentence
    after = re.split(r"[.!?](?!\d)|\n", text[start:], maxsplit=1)[0]
    conditioned_before = bool(_CONDITION.search(sentence)) and bool(
        re.search(r"(?i)\bwould\b", text[start : start + 40] + sentence))
    return conditioned_before or bool(re.match(r"[)\]*\s]*(?i:would)\b", text[start + 1 :])) and bool(
        _CONDITION.search(after))


def _letter_is_article(text: str, end: int) -> bool:
    """'A bond's price...': an English article, not a choice."""
    following = re.match(r"\s+([a-z][\w'’-]*)", text[end:])
    return bool(following) and following.group(1) not in _CONNECTIVES


def _names_two_letters(text: str, start: int, end: int, letters: str) -> bool:
    joiner = r"\s*(?:,|/|&|\band/or\b|\band\b|\bor\b|或|或者|\boder\b|\bou\b|\bo\b|\bили\b)\s*"
    # 'either B (90 percent) or C (150 percent)': a remark in parentheses between the two
    after = re.match(rf"[)\]]?(?:\s*\([^()\n]{{0,40}}\))?{joiner}(?:(?i:option|choice)\s*)?[(\[]?[{letters}](?![\w'’])",
                     text[end:])
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


# "ANSWER: C", "answer: c", "Final answer — C": the line the Format A prompt asks for, in any case, after a colon or
# dash, or the label alone as a heading and the letter opening the next line ('### Answer')
_ANSWER_LINE = (
    r"(?im)^[ \t>#*_\-•]*(?:final[ \t]+)?answer(?:[ \t*_]*(?:[:：]|[ \t]*[-–—]+)|[ \t*_#]*\n\s*)[ \t*_~(\[]*"
    r"(?P<letter>[{letters}])(?![\w'’])"
)
# "~~A~~ C?": a retracted letter next to a doubted one (two letters); "~~B~~ A": a correction to A
_STRUCK = re.compile(r"~~\s*\(?([A-Z])\)?\s*~~(?P<corrected>\s*\(?[A-Z]\)?(?![\w?])(?!\s*\?))?")


def _struck(match: re.Match[str]) -> str:
    return match.group("corrected") or f"{match.group(1)} or"

# "not A or C — it's B", "the answer is not C but B": a negation that commits to the remaining letter
_NEGATED = r"(?i:option\s+)?[{letters}](?:\s*\([^)]*\))?"  # "A (simple discount)"
# 'Nicht B, sondern A.', 'pas B, mais A', 'no B, sino A': the same in the other languages
_NEGATION = r"(?i:\bnot|\bnicht|\bpas|\bno)\s+" + _NEGATED + r"(?:\s*(?:,|(?i:or|nor|and))\s*" + _NEGATED + ")*" \
    r"\s*(?:,?\s*(?i:but|sondern|mais|sino)|[—–-]+\s*(?i:it['’]?s|it\s+is)?|[,;.]\s*(?i:it['’]?s|it\s+is))\s*[*_(\[]*" \
    r"(?P<letter>[{letters}])(?![\w'’])"


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
    body = re.sub(r"(?i)\bthe\s+(first|second|third|fourth|fifth)\s+(?:option|choice)(?:\s+listed)?\b",
                  lambda m: letter(_ORDINALS[m.group(1).lower()], m.group()), body)
    body = re.sub(r"(?i)\b(?:option|choice)\s+(one|two|three|four|five)\b",
                  lambda m: letter(_COUNTED[m.group(1).lower()], m.group()), body)
    # '所以应选第三个选项' (so choose the third option)
    body = re.sub(r"第([一二三四五])(?:个|個)?(?:选项|選項|選択肢)",
                  lambda m: letter("一二三四五".index(m.group(1)), m.group()), body)
    return re.sub(r"(?i)\b(?:option|choice)\s*#\s*([1-5])\b", lambda m: letter(int(m.group(1)) - 1, m.group()), body)


# 'الإجابة: ب' (answer: B): Arabic options are lettered أ، ب، ج in their alphabet's old order
_ARABIC_ANSWER = re.compile(r"(?:الإجابة|الجواب)(?:\s+الصحيحة)?\s*[:：]?\s*(?P<letter>[أبجد])(?!\w)")


def latin_letters(body: str) -> str:
    """A letter written in another script as its Latin twin, where it stands alone before punctuation or the end
    of a line ('Ответ: А' is A), or after an Arabic answer label ('الإجابة: ب' is 'Answer: B'); a Russian word such
    as the preposition 'В соответствии' is left alone."""
    body = _ARABIC_ANSWER.sub(lambda m: f"Answer: {'ABCD'['أبجد'.index(m.group('letter'))]}", body)
    body = re.sub(r"(?<!\w)Б(?=[ \t]*(?:[).:;!*\]]|\(|$))", "B", body, flags=re.M)  # 'Ответ: Б (второй вариант)'
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


def read_choice(text: str | None, choices: Iterable[str] | str = "ABC", *,
                options: Mapping[str, str] | None = None) -> ChoiceReading:
    """`extract_choice` with the reason when no letter can be told: a JSON or YAML reply's letter field, the answer
    line (and what takes it back), the statements by tier, a marked table row, a label line; then, with `options`,
    the option whose value or words the concluding statement gives (two such options: doubt). A letter the response
    says it is unsure of is the judge's."""
    letters = "".join(sorted({c.strip().upper() for c in choices if c.strip()}))
    if not letters or not all(c.isalpha() and len(c) == 1 for c in letters):
        raise ValueError(f"choices={choices!r} must be single letters such as 'ABC'")
    body = latin_letters(clean(text))
    if not body.strip():
        return ChoiceReading(None)
    block = data_block(body)
    if block is not None:
        reply, prose = block
        values = letter_fields(reply)
        named = {v.strip().strip("()").upper() for v in values}
        named = {v for v in named if len(v) == 1 and v in letters} or {  # '{"choice": "Carrying value."}'
            letter.upper() for letter, text in (options or {}).items() for v in values
            if letter.upper() in letters and _plain(v) == _plain(text)}
        if not without_headings(prose).strip():
            return ChoiceReading(named.pop()) if len(named) == 1 else ChoiceReading(
                None, "" if not named else "the JSON reply names two letters")
        if len(named) == 1:  # prose, then '```json {"answer": "C"} ```': the block is the answer line
            said = read_choice(prose, letters).letter
            return ChoiceReading(named.pop()) if said in (None, *named) else ChoiceReading(
                None, "the prose and the JSON answer name different letters")
    body = re.sub(r"~~(?!\s*\(?[A-Z]\)?\s*~~)[^~\n]+~~", " ", body)  # '~~ANSWER: B~~' is withdrawn; '~~B~~ C?' kept
    body = _ordinals_as_letters(_STRUCK.sub(_struck, body), letters)
    # '{"answer": "B"}' on a line of its own, twice or among prose: an answer line written as JSON
    body = re.sub(r'(?m)^[ \t]*\{[ \t]*"(?:final_)?answer"[ \t]*:[ \t]*"([A-Z])"[ \t]*\}[ \t]*$', r"ANSWER: \1", body)
    lines = _answer_lines(body, letters)
    if lines:
        last = lines[-1]
        start, end = last.span("letter")
        if options and (other := words_disagree(body, end, last.group("letter"), options)):
            return ChoiceReading(None, other)
        if re.match(rf"[)\]*.]*\s*,?\s*(?i:or|ou|oder)\s+\(?[{letters}](?![\w'’])", body[end:]):
            # 'ANSWER: C, or B if only exactly four': the answer line offers a second letter
            return ChoiceReading(None, no_choice="the answer line offers a second letter")
        # 'ANSWER: A — no, C.': the answer line corrects itself
        corrected = re.match(rf"[)\]*]*\s*[—–,;-]+\s*(?i:no|wait|actually|sorry|correction|I\s+mean)\b[,:!]?\s*"
                             rf"[(\[*]*(?P<letter>[{letters}])(?![\w'’])", body[end:])
        if corrected:
            start, end = end + corrected.start("letter"), end + corrected.end("letter")
            return ChoiceReading(_one_letter(body, start, end, corrected.group("letter"), letters))
        # 'Answer: B. Wait — no. Property held for resale ... is inventory. ... It's A.': taken back after the line
        retracted = re.match(r"[)\]*.]*\s*(?i:wait|actually|no|sorry|correction|hmm+|on\s+second\s+thought)\b",
                             body[end:])
        later = _stated_choice(body[end:], letters, None).letter if retracted else None
        if later is not None and later != last.group("letter").upper():
            return ChoiceReading(later)
        for earlier in lines[:-1]:  # 'ANSWER: B', 'Checking with simple return: ... closest to C.', 'ANSWER: A'
            if earlier.group("letter").upper() != last.group("letter").upper() and not takes_back(
                    body[earlier.end() : last.start()]):
                return ChoiceReading(None, f"two answer lines name {earlier.group('letter').upper()} and "
                                           f"{last.group('letter').upper()}, and nothing between takes the first back")
        return ChoiceReading(_one_letter(body, start, end, last.group("letter"), letters))
    if re.search(rf"(?:(?i:\bso|\bthen|\bthus|\bhence|\banswer\b)[:\s]*|,)\s*\(?[{letters}]\)?\s+or\s+\(?[{letters}]\)?"
                 r"[\s.!?*]*\Z", body):
        # '... depends on the day count, so A or B.': the conclusion leaves two open
        return ChoiceReading(None, no_choice="the conclusion leaves two letters open")
    reading = _stated_choice(body, letters, options)
    if reading.letter is not None and doubts_its_answer(body):  # '... → A. Wait, ... → B. Or A. Hard to say.'
        return ChoiceReading(None, "the response says it is unsure of its answer")
    closing = " ".join(sentences(body)[-2:])  # '... so A. But hold on — ... So B? Or stay with A?'
    named = _letters_in(closing, letters)
    if reading.letter is not None and closing.rstrip(" *_").endswith("?") and len(named) > 1:
        return ChoiceReading(None, "the response ends asking which of two letters")
    if reading.letter is not None and _closes_on_two(body, letters):
        # "It's either A or B.", "I'll leave it at A or B depending on the interpretation." after '→ A'
        return ChoiceReading(None, no_choice="the response closes offering two letters")
    last_sentence = next(iter(sentences(body)[-1:]), "")
    if reading.letter is not None and len(_letters_in(last_sentence, letters)) > 1 and _TENTATIVE.search(last_sentence):
        # 'Probably A (28), although if they expect rounding of the standard error first it could be C.'
        return ChoiceReading(None, no_choice="the last sentence leans to one letter and says it could be another")
    if reading.letter is not None and re.search(rf"\b(?i:maybe|perhaps)\s+\(?{reading.letter}\b", last_sentence):
        return ChoiceReading(None, "the last sentence offers its letter only as a maybe")  # 'So maybe A, but ...'
    if len(named) > 1 and (UNDECIDED.search(closing) or _DEPENDS.search(closing) or _EACH_IF.search(last_sentence)):
        # 'B if the new-issue rate of 6% is used (...), C if the weighted historical rate is used.'
        # 'It depends on the convention: under one reading the answer is A, under the other it is B.', 'Depends on day
        # count: A under 365, B under 360.'
        return ChoiceReading(None, no_choice="two letters, each under its own reading")
    return reading


def _stated_choice(body: str, letters: str, options: Mapping[str, str] | None) -> ChoiceReading:
    """The letter of a response with no answer line: its statements by tier, a marked table row, a label line; then,
    with `options`, the option whose value or words the concluding statement gives."""
    found: dict[int, list[tuple[int, int, str]]] = {2: _eliminations(body, letters)}
    for tier, pattern in _choice_patterns(letters):
        for match in pattern.finditer(body):
            start, end = match.span("letter")
            if tier <= 2 and _is_hypothetical(body, match.start() if tier == 1 else start):
                continue
            if tier > 1 and _NOT_BEFORE.search(body, max(0, start - 60), start):
                continue  # '(A), not the multistage DDM (C)': the letter a clause rules out
            if _is_article(match.group("letter"), body, end):
                continue
            found.setdefault(tier, []).append((start, end, match.group("letter")))
    strong = {tier: statements for tier, statements in found.items() if tier < WEAK_TIER and statements}
    if strong:
        start, end, letter = max(strong[min(strong)])  # the strongest tier present, its last statement
        if options and (other := words_disagree(body, end, letter, options)):
            return ChoiceReading(None, other)
        return ChoiceReading(_one_letter(body, start, end, letter, letters))
    if marked := _marked_row(body, letters):
        return ChoiceReading(marked)
    label = _label_line_letter(body, letters)
    weak = {letter.upper() for _, _, letter in found.get(WEAK_TIER, [])}
    if label is not None or weak:
        named = weak | ({label} if label else set())
        return ChoiceReading(named.pop()) if len(named) == 1 else ChoiceReading(None, "two letters are named")
    if _NO_OPTION_FITS.search(body):  # 'I get 1,300.5. None of the options match this figure.'
        return ChoiceReading(None, no_choice="the response says no option matches")
    if (line := _ANSWER_LINE_LETTER.search(body)) and line["letter"] not in letters:  # 'ANSWER: D' of A, B, C
        return ChoiceReading(None, no_choice=f"the answer line names {line['letter']}, which is no option")
    if _offers_two(body, letters):
        # '≈ $33.71. ~~B~~ C?', 'either B or A': two letters left open, whatever the value
        return ChoiceReading(None, no_choice="two letters are left open")
    # '= 0.40 or 0.60 depending on whether ...' against numeric options ('inside the €15.90–€21.45 range, so the stock
    # is fairly valued' names an option by its words)
    last_sentence = next(iter(sentences(body)[-1:]), "")
    if options and any(re.search(r"\d", text) for text in options.values()) and is_hedge(last_sentence) and \
            not re.search(r"(?i)\b(?:not|neither)\s+[-−$€£¥]?\d", last_sentence):  # '$13.85 — not $14.83 or $19.19.'
        return ChoiceReading(None, no_choice="the response ends on two values without choosing")
    if options and len(values_stated(" ".join(sentences(body)[-2:]), options)) > 1:
        # '... = 118.82. It's a premium bond, so 85.71 is impossible, and 112.54 would need a higher yield. 118.82 it
        # is.', '$13.85 — not $14.83 or $19.19.': options weighed by value, kept or ruled out in words; the judge reads
        return ChoiceReading(None, "the closing sentences state the values of two or more options")
    last = conclusion(body)
    if options and has_refusal(last):  # "I'm not comfortable picking one of these options: ..."
        return ChoiceReading(None, no_choice="the response declines to pick an option")
    reading = by_option(body, letters, options) if options else ChoiceReading(None)
    if reading.letter is not None and _SWITCHES.search(last) and len(_letters_in(last, letters)) > 1:
        # '= 5.10%. Let me reconsider... B? No, C. Actually B. Hmm.': letters switched after the value
        return ChoiceReading(None, "the response switches between letters after the value it gives")
    if reading.letter is None and not reading.doubt and (named := _letters_named_alone(body, letters)):
        return ChoiceReading(None, f"option {named} is named, but in no form the reader decides on")
    if reading.letter is None and not reading.doubt and _CYRILLIC_VE.search(body):
        return ChoiceReading(None, "a Cyrillic В is named: B by its shape, C by its place in А, Б, В")
    return reading


_DEPENDS = re.compile(r"(?i)\bdepends\s+on\b")
_EACH_IF = re.compile(r"\b[A-E]\)?\s+(?i:if|under|with)\b(?:[^.;]|\.\d)*[,;]\s*[A-E]\)?\s+(?i:if|under|with)\b")
_SWITCHES = re.compile(r"(?i)\b(?:no|actually|wait|hmm+|reconsider)\b|\?")
_ANSWER_LINE_LETTER = re.compile(r"(?im)^[\s*_#>]*answer\s*[:：][\s*_]*\(?(?P<letter>[A-Z])\)?[\s*_.]*\Z")
_NO_OPTION_FITS = re.compile(
    r"(?i)\b(?:none\s+of\s+the\s+(?:listed\s+|given\s+|three\s+)?(?:options|choices|answers)\s+(?:match(?:es)?|fits?|"
    r"is\s+(?:right|correct|exact))|neither\s+(?:one\s+)?(?:option\s+)?match(?:es)?|not\s+exactly\s+any\s+of\s+the\s+"
    r"(?:listed\s+|given\s+)?(?:options|choices)|(?:falls|lies|is)\s+between\s+options)\b"
    # 'My result is $45.84, which doesn't match any option exactly.' closing the response (not '...; the closest
    # option is 0.53, so I'll go with that one.')
    r"|\b(?:doesn['’]t|does\s+not|don['’]t|do\s+not)\s+match\s+any\s+(?:of\s+the\s+)?(?:listed\s+|given\s+)?"
    r"(?:options?|choices?|answers?)(?:\s+exactly)?[.!]?\s*\Z"
    r"|\bmatch(?:es)?\s+none\s+of\s+the\s+(?:listed\s+|given\s+|three\s+)?(?:options|choices|answers)(?:\s+exactly)?"
    r"[.!]?\s*\Z")  # 'The value $77.30 matches none of the options exactly.' closing the response


def _letters_named_alone(body: str, letters: str) -> str:
    """The letters a response names when it names no alternatives ('It's not C, since ... Then B'): no_answer
    needs positive evidence (no letter at all, a refusal, alternatives left open: 'A or B depending on ...')."""
    named = [m for m in re.finditer(rf"(?<![\w'’])[{letters}](?![\w'’])", body)
             if not _is_article(m.group(), body, m.end())]
    if any(_names_two_letters(body, *m.span(), letters) for m in named):
        return ""
    return ", ".join(sorted({m.group() for m in named}))


def _letters_in(text: str, letters: str) -> set[str]:
    """The letters a text names alone, as a set (`_letters_named_alone`)."""
    return set(_letters_named_alone(text, letters).split(", ")) - {""}


_NOT_BEFORE = re.compile(r"(?i)\bnot\b[^,;.:!?\n]*$")


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _eliminations(body: str, letters: str) -> list[tuple[int, int, str]]:
    """'B and C are wrong.': the one letter left, as a statement at the end of the sentence."""
    found = []
    for m in re.finditer(rf"(?<![\w'’])(?:(?i:options?)\s+)?(?P<a>[{letters}])\s*(?:,|&|\band\b)\s*(?:(?i:option)\s+)?"
                         rf"(?P<b>[{letters}])\s+(?i:are|were|can\s+be|may\s+be|should\s+be|must\s+be)\s+"
                         r"(?i:both\s+|all\s+)?(?i:wrong|incorrect|eliminated|"
                         r"ruled\s+out|out|false|invalid)\b", body):
        left = set(letters) - {m.group("a"), m.group("b")}
        if len(left) == 1 and m.group("a") != m.group("b"):
            found.append((m.end(), m.end(), left.pop()))
    return found


# '| A | 3.11% | ✅ selected |', '| C | £883 | Correct |': the one row of a table a reply marks as its choice
_MARKED = re.compile(r"(?i)✅|✔|☑|✓|\b(?:selected|chosen|my\s+(?:answer|pick)|correct)\b")
_UNMARKED = re.compile(r"(?i)❌|✗|✘|\bnot\s+(?:selected|chosen|correct)\b|\bincorrect\b")


def _marked_row(body: str, letters: str) -> str | None:
    rows = [re.match(rf"[ \t]*\|[ \t*_]*(?:(?i:option)[ \t]*)?\(?([{letters}])\)?[ \t*_]*\|(.*)", line)
            for line in body.splitlines()]
    marked = {m.group(1) for m in rows if m and _MARKED.search(m.group(2)) and not _UNMARKED.search(m.group(2))}
    return marked.pop() if len(marked) == 1 else None


def _offers_two(body: str, letters: str) -> bool:
    """Two letters offered as alternatives: 'B or C', 'either B or A', 'B (€827,000) or A (€449,000)'."""
    return bool(_two_offered(letters).search(body))


def _two_offered(letters: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'’])[{letters}][)\]]?(?:\s*\([^()\n]{{0,40}}\))?\s*(?:\b(?:or|ou|oder|o|или)\b|/|或)\s*"
                      rf"(?:(?i:option)\s*)?[(\[]?[{letters}](?![\w'’])")


def _closes_on_two(body: str, letters: str) -> bool:
    """The last sentence offers two letters ('It's either A or B.') and no letter follows them: the response's last
    word leaves the choice open, whatever it leaned to before."""
    last = next(iter(sentences(body)[-1:]), "")
    offered = list(_two_offered(letters).finditer(last))
    return bool(offered) and not _NEITHER.search(last[: offered[-1].start()]) and not _letters_in(
        last[offered[-1].end() :], letters)


_TENTATIVE = re.compile(r"(?i)\b(?:probably|maybe|perhaps|possibly|could\s+be|might\s+be)\b")
_NEITHER = re.compile(r"(?i)\b(?:neither|not|nor|rule\s+out|eliminate|wrong)\b[^.]*$")


WEAK_TIER = 3  # a letter named in passing ("(option C)", "→ B"): counted only when no other letter is


def _one_letter(body: str, start: int, end: int, letter: str, letters: str) -> str | None:
    """The committed letter in capitals, or None when the statement names two ('A or C', 'b/c')."""
    same_case = letters if letter.isupper() else letters.lower()
    return None if _names_two_letters(body, start, end, same_case) else letter.upper()


