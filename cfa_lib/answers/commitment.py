"""What an open response commits to: the small rules that decide before any number is compared.

Each rule is a short list of phrases, tested on the hand-labelled corpus (tests/grading_corpus/):

* `final_answer_line`: the `FINAL ANSWER: <value>` line the prompts ask for (the last outside reasoning);
* `is_refusal`: "please provide the options", "I can't compute ... without the exhibit";
* `is_aside` / `main_clause`: sentences and clauses that comment on the answer rather than state it
  (comparisons, hypotheticals, restatements, "of which", "i.e. a premium of ...");
* `apply_sign_words`: "a decline of 10.90 %" and "a 3.49 % decline" are negative; "falls to 95.00" stays a level;
* `direction_agreement`: buy/sell, gain/loss, receive/pay, ... of a value against the key's words.

Hedges ("either X or Y", "X–Y", "it depends") are `hedges`'s; what the question itself asks (its unit, a difference,
a change) is `question_unit`'s.
"""

from __future__ import annotations

import functools
import re

from cfa_lib.answers.numbers import Found, Number, scan_numbers, scan_values
from cfa_lib.answers.question_unit import asks_change, asks_difference

# --- the FINAL ANSWER line -----------------------------------------------------------------------------
# 'FINAL ANSWER: 5.12%' ('Final: £4,905'), or the label alone as a heading with the value on the next line ('### Final
# Answer'); the same label in the other languages replies come in ('Endgültige Antwort:', 'Réponse finale :',
# '最终答案：')
_FINAL_LABEL = (
    r"(?:final[ \t]+answer|final(?=[ \t*_]*[:：])|endg[üu]ltige[ \t]+antwort|finale[ \t]+antwort|r[ée]ponse[ \t]+finale"
    r"|respuesta[ \t]+final|resposta[ \t]+final|risposta[ \t]+finale|最终答案|最終答案|最終回答|최종[ \t]*답(?:변)?"
    r"|окончательный[ \t]+ответ|итоговый[ \t]+ответ)"
)
_FINAL_LINE = re.compile(
    rf"(?im)^[ \t>#*_\-•]*{_FINAL_LABEL}(?:[ \t*_]*[:：][ \t*_]*(?P<rest>.*)|[ \t*_#]*)$")


def _last_final_line(body: str) -> tuple[re.Match[str], str, str] | None:
    """The last `FINAL ANSWER:` line of a cleaned body, the value it writes (the next non-empty line when the
    marker stands alone) and what follows that value."""
    matches = list(_FINAL_LINE.finditer(body))
    if not matches:
        return None
    last = matches[-1]
    rest = (last.group("rest") or "").strip(" *_`")
    if rest:
        return last, rest, body[last.end() :]
    following = body[last.end() :].lstrip().split("\n", 1)
    if last.group("rest") is None and not re.match(r"[\s*_`$€£¥(~≈+-]*\d", following[0]):
        return None  # a heading over prose ('Final answer\nPrice per 10', cut): no answer line
    return last, following[0].strip(), following[1] if len(following) > 1 else ""


def earlier_answer_lines(body: str) -> list[tuple[str, str]]:
    """The values of the answer lines before the last one under the same label, each with the text between it and
    the last line ('FINAL ANSWER: 3.88%', then 'Hmm, using the par ...', then 'FINAL ANSWER: 4.13%'; not 'Final:
    134 × 30.50 = 4,138.55' over 'FINAL ANSWER: 35.92% loss')."""
    matches = [m for m in _FINAL_LINE.finditer(body) if (m.group("rest") or "").strip(" *_`")]

    def label(m: re.Match[str]) -> str:
        return re.sub(r"\W", "", body[m.start() : m.start("rest")]).lower()
    return [(m.group("rest").strip(" *_`"), body[m.end() : matches[-1].start()]) for m in matches[:-1]
            if label(m) == label(matches[-1])]


# what takes back a FINAL ANSWER line after it (a step or a check after the line does not; 'should be' only before a
# value: not 'the project should be accepted')
TAKES_BACK = re.compile(r"(?i)\b(?:correction|oops|I\s+mean|on\s+second\s+thought|"
                        r"should\s+(?:be|read|have\s+been)(?=\s*[:=]?\s*(?:about\s+)?[-−+$€£¥]?\s?\d)|"
                        r"I\s+made\s+an?\s+(?:error|mistake)|scratch\s+that|let\s+me\s+(?:redo|correct|fix))\b|"
                        r"\bwait\b[,:;!.—–-]*\s*(?:no\b|that['’]?s\s+(?:wrong|not\s+right)|that\s+is\s+wrong)")


# what, between two answer lines, says the first was wrong: 'Wait —', 'Hold on — I double-counted', 'Correcting:'
_REVISES = re.compile(r"(?i)\b(?:wait|hold\s+on|actually|on\s+reflection|I['’]ll\s+go\s+with|correct(?:ing|ion|ed)|"
                      r"revis\w*|recomput\w*|redo\w*|"
                      r"mistake|error|wrong|not\s+right|I\s+(?:dropped|forgot|mis\w+|double-counted|made))\b")


def takes_back(text: str) -> bool:
    """The text between two answer lines says the first was wrong ('Wait — I dropped a term. Recomputing:')."""
    return bool(TAKES_BACK.search(text) or _REVISES.search(text))


def after_final_line(body: str) -> str:
    """What a cleaned body writes after its last `FINAL ANSWER:` line and that line's value ('' when none)."""
    found = _last_final_line(body)
    return found[2] if found else ""


def final_answer_line(body: str) -> str | None:
    """The value written on the last `FINAL ANSWER:` line of a cleaned body (the next non-empty line when
    the marker stands alone), or None when there is no such line."""
    found = _last_final_line(body)
    return found[1] if found else None


# --- refusals --------------------------------------------------------------------------------------------
_REFUSAL = re.compile(
    r"(?i)\bplease\s+(?:provide|share|paste|include|supply|send|list|restate|give)\b"
    r"|\b(?:could|can|would)\s+you\s+(?:please\s+)?(?:provide|share|paste|list|restate|include|send|give|supply)\b"
    r"|\bif\s+you\s+(?:share|send|provide|paste|include|supply)\b"
    r"|\bI(?:['’]m|\s+am)\s+(?:not\s+able|unable)\b|\bunable\s+to\s+(?:answer|compute|determine)\b"
    r"|\bI\s+(?:can['’]?t|cannot|can\s+not)\s+(?:answer|compute|determine|complete|select|pick|judge|evaluate|tell|see|"
    r"help\s+(?:with|(?:you\s+)?(?:pick|choose|select)))\b"
    # 'I can't provide specific financial or investment advice' ('While I cannot provide examples, ...' concedes)
    r"|\bI\s+(?:can['’]?t|cannot|can\s+not)\s+(?:provide|give|offer)\s+(?:[\w-]+\s+){0,4}?(?:advice|an?\s+answer)\b"
    r"|\b(?:cannot|can['’]?t|can\s+not)\s+be\s+(?:answered|computed|determined|calculated)\s+without\b"
    r"|\bI['’]d\s+need\s+to\s+see\b|\bI['’]d\s+rather\s+not\s+guess\b|\bnot\s+comfortable\s+(?:giving|picking|choosing|selecting)\b"
    r"|\bI(?:['’]m|\s+am)\s+going\s+to\s+need\s+the\s+(?:answer\s+)?(?:options|choices)\b"
    r"|\bavoid\s+guessing\b|\b(?:options|choices)\s+(?:are\s+|were\s+)?(?:missing|not\s+(?:provided|shown|included|given))"
    r"|\bI\s+don['’]t\s+have\s+the\s+(?:data|information|exhibit)\b"
    r"|\b(?:question|it)\s+(?:seems|appears)\s+(?:to\s+be\s+)?(?:incomplete|cut\s+off)\b"
    # the same requests in the other languages answers come in
    r"|\b(?:podr[ií]as?|puede|podes|pode)\s+(?:usted\s+)?(?:indicarme|darme|proporcionarme|compartir|informar)"
    r"|\bpourriez[- ]vous\s+(?:me\s+)?(?:donner|indiquer|fournir|pr[ée]ciser)\b"
    r"|\bk[öo]nnten\s+Sie\s+(?:mir\s+)?(?:die\s+)?(?:Antwort)?(?:optionen|m[öo]glichkeiten|alternativen|angeben|nennen)"
    r"|请(?:提供|给出|列出)(?:选项|答案选项)"
    # Japanese, Korean: 'could you tell me the options', 'cannot compute'
    r"|選択肢を(?:教えて|提示して|示して)|計算できません|선택지를\s*(?:알려|제공해)|계산할\s*수\s*없"
)


def has_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def is_refusal(body: str, committed: Number | None) -> bool:
    """A refusal or a request for the options: a refusal phrase and either no number committed or a last
    sentence that is itself the request ("Please provide the answer choices.")."""
    if not has_refusal(body):
        return False
    if committed is None:
        return True
    last = sentences(body)[-1] if sentences(body) else ""
    return has_refusal(last) and not re.search(r"\d", last)


_ASIDE_START = re.compile(
    r"(?i)^[\s>*#\-•]*(?:\d{1,2}[.)]\s+)?[\s>*#\-•]*(?:\(|for\s+reference|for\s+comparison|compare\b|compared\b|by\s+contrast|"
    r"in\s+contrast|by\s+symmetry|in\s+other\s+words|that\s+is\b|that\s+corresponds|this\s+corresponds|"
    r"this\s+means|of\s+this\b|of\s+which\b|if\b|had\b|were\b|note\b|nb\b|alternatively\b|otherwise\b|"
    r"instead\b|multiplying\b|dividing\b|expressed\b|equivalently\b|as\s+a\s+check\b|(?:double[\s-]?)?check(?:ing)?\b|"
    r"verification\b|verify\b|sanity\b|assum|where\b|here\b|let\s+me\s+know|i\s+can\b|would\s+you\b|"
    r"feel\s+free|rounded\b|this\s+assumes|caveat|disclaimer|for\s+example\b|e\.g\.|on\s+an?\s+[\w\s-]{0,30}basis\b|"
    r"under\s+the\s+[\w\s-]{0,30}(?:method|approach|convention)\b[^.]*\bwould\b)"
)
_ASIDE_ANYWHERE = re.compile(
    r"(?i)\b(?:not|next|following\s+year|would\s+instead|rather\s+than|compar(?:ed|es|ing)\s+(?:with|to)|versus|vs\.?|"
    r"by\s+contrast|for\s+comparison|for\s+reference|of\s+which|irrelevant|a\s+common\s+mistake|the\s+same|"
    r"would\s+(?:give|carry|be\s+lower|be\s+higher)|will\s+be\s+amorti[sz]ed)\b"
    r"|\bfrom\s+(?:[A-Z]{3}\s?)?[$€£¥]?(?!(?:19|20)\d\d\b)\d[\d,.]*%?\s+(?:up\s+)?to\s+(?:[A-Z]{3}\s?)?[$€£¥]?\d"
    r"|\d[%\s]*±"  # a range: from X to Y (not years), X ± Y (not ±X, one magnitude both ways)
)
# a trailing clause that restates, compares or decomposes: cut it before reading the sentence's number
_CLAUSE_CUT = re.compile(
    r"(?i)[,;—–-]\s*not\b|\s+(?:when|if|because|since|assuming)\b|,\s*which\b|,?\s*(?:which\s+(?:means|implies|is|gives|"
    r"corresponds|differs)|differ(?:s|ing)?\s+from\b|meaning\b|i\.e\.,?|e\.g\.,?|whereas\b|while\b|"
    r"of\s+which\b|leaving\b|derived\s+from\b|or\s+(?:a\s+little|about|roughly|just)\s+(?:over|under|below|above)?|"
    r"(?:lower|higher|more|less|greater|smaller)\s+than\b|up\s+from\b|down\s+from\b|compared\s+(?:with|to)\b|"
    r"versus\b|vs\.?\s|against\b|from\s+[-+$€£¥]?\d[^,;]*\bto\b)"
)
# 'a premium of $64,940', 'a drop of $4.11', 'an expected gain of about $1.00': another quantity, after the answer
_ASIDE_NOUN = re.compile(r"(?i)\b(premium|discount|profit|excess|complement|drop|gain|decline|increase|rise|fall)"
                         r"\s+of\s*(?:about\s+|roughly\s+|approximately\s+)?[-+−]?[$€£¥]?$")


def sentences(body: str) -> list[str]:
    """Lines split into sentences (a split needs a capital, a parenthesis or markup after the stop)."""
    return [sentence for _, sentence in sentence_spans(body)]


def sentence_spans(body: str) -> list[tuple[int, str]]:
    """`sentences` with where each one starts in the body."""
    spans: list[tuple[int, str]] = []
    for line in re.finditer(r"[^\n]+", body):
        start = line.start()
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z(*#\[])", line.group()):
            at = body.index(part, start)
            start = at + len(part)
            if part.strip():
                spans.append((at, part))
    return spans


# a remark in parentheses after a value that states other values or compares: '+66 bps (risk premium 3.145% →
# 3.806%)', 'USD 120/unit (vs. MC of USD 40/unit)'; not one that qualifies it ('263 (short position)')
_REMARK = re.compile(r"(?<=[\d%$€£¥/\w])[ \t]*\((?=[^()\n]*[A-Za-z]{3})(?=[^()\n]*\d|\s*(?i:vs\b|versus|compared|cf\b))"
                     r"[^()\n]*\)")


def without_remarks(text: str) -> str:
    """The text with the remarks in parentheses after its values blanked out (same length: positions hold)."""
    return _REMARK.sub(lambda m: " " * len(m.group()), text)


@functools.lru_cache(maxsize=4096)  # asked of one sentence several times while a response is read
def main_clause(sentence: str) -> str:
    """The sentence up to its first restating or comparing clause (", which means", ", of which", " vs ")."""
    cut = _CLAUSE_CUT.search(sentence)
    if cut and re.search(r"\d", sentence[: cut.start()]):
        return sentence[: cut.start()]
    return sentence


def is_aside(sentence: str, stem: str = "") -> bool:
    """A sentence that comments on the answer: a comparison, a hypothetical, a restatement, the next
    period's figure; words copied from the stem ("with the same interest rate") do not make one."""
    difference = asks_difference(stem)
    return bool(_ASIDE_START.match(sentence)) or any(
        not from_stem(sentence, m.start(), m.end(), stem) and not (difference and _COMPARING.fullmatch(m.group()))
        for m in _ASIDE_ANYWHERE.finditer(sentence))


_COMPARING = re.compile(r"(?i)compar(?:ed|es|ing)\s+(?:with|to)|versus|vs\.?")  # asides unless a difference is asked


def restates(stem: str, text: str, found: Found) -> bool:
    """The number sits in notation copied from the stem ('t = 0', 'P(3 ≤ X < 6)'), not in an answer (an
    echo in words, 'face value of $5,000,000', may well be the answer committed to)."""
    context = " ".join(text[max(0, found.start - 6) : found.end].split())
    notation = re.search(r"[=≤≥<>(]", context)
    return bool(stem) and bool(notation) and len(context) >= 5 and context in " ".join(stem.split())


def from_stem(text: str, start: int, end: int, stem: str) -> bool:
    """text[start:end] and a word next to it are copied from the stem ('falls between 8% and 11%', 'with the
    same interest rate'): the response restates the question there, it does not hedge or comment."""
    if not stem:
        return False
    before = re.search(r"\S+\s+$", text[:start])
    after = re.match(r"\s*[^\s.,;:*]+", text[end:])
    flat = " ".join(stem.split()).lower()
    span = text[start:end]
    contexts = [(before.group() if before else "") + span, span + (after.group() if after else "")]
    return any(len(c.strip()) >= 12 and " ".join(c.split()).lower().strip(" .,;:*") in flat for c in contexts)


def restated_fact(text: str, start: int, end: int, stem: str) -> bool:
    """The value and up to three words before it (or two after it) are copied from the stem: 'The stock was
    issued at $25.' restates the question, it does not answer it."""
    if not stem:
        return False
    flat = " ".join(stem.split()).lower()
    span = text[start:end]
    for words in range(1, 4):
        before = re.search(rf"(?:\S+\s+){{{words}}}$", text[:start])
        after = re.match(rf"(?:\s+[^\s.,;:*]+){{{min(words, 2)}}}", text[end:])
        for context in ((before.group() + span) if before else "", (span + after.group()) if after else ""):
            context = " ".join(context.split()).lower().strip(" .,;:*")
            if len(context) >= 12 and context in flat:
                return True
    return False


@functools.lru_cache(maxsize=4096)
def _stem_values(stem: str) -> frozenset[float]:
    return frozenset(round(found.number.value, 9) for found in scan_numbers(stem))


def in_question(number: Number, stem: str) -> bool:
    """The value is one of the numbers the question writes."""
    return round(number.value, 9) in _stem_values(stem)


def lists_inputs(clause: str, stem: str) -> bool:
    """A clause of two or more different numbers, every one of them the question's ('(Inputs: 7.020, 65.180, 25
    bp.)', 'Given: coupon 5.5%, yield 5%, 3 years'): the inputs restated, not a result ('about 100 per 100 of par'
    states one value)."""
    values = {round(found.number.value, 9) for found in scan_values(clause)}  # 'P = 3/13' is one value
    return bool(stem) and len(values) >= 2 and (values <= _stem_values(stem) or _written_in(clause, stem))


def _written_in(text: str, stem: str) -> bool:
    """Every number of the text is written in the stem, digit for digit ('40' of '$40 million', '2015' of '1 January
    2015when')."""
    if re.search(r"[/×*÷=≈^]", text):  # '3/20', '= 0.05': a value computed from the stem's numbers
        return False
    written = set(_DIGITS.findall(text.replace(",", "")))
    return bool(written) and written <= set(_DIGITS.findall(stem.replace(",", "")))


# 'answer', '=', 'is', 'so': a paragraph that states something, not a bare list
_STATES = re.compile(r"(?i)answer|final|result|[=≈→]|\b(?:is|are|was|were|so|thus|therefore|hence|gives?|equals?)\b")


def without_inputs_after(body: str, stem: str) -> str:
    """The body without closing paragraphs that only list the question's inputs ('(Inputs from the question: 8%,
    14 years, $1,000.)', 'Given: coupon 5.5%, yield 5%, 3 years'): they restate the question and answer nothing,
    whatever the response committed to (or declined to) before them."""
    paragraphs = re.split(r"(\n[ \t]*\n)", body)
    while len(paragraphs) > 2 and (not paragraphs[-1].strip() or (
            _restates_inputs(paragraphs[-1], stem) and not _STATES.search(paragraphs[-1]))):
        paragraphs = paragraphs[:-2]
    return "".join(paragraphs)


_INPUTS_LABEL = re.compile(r"(?i)^[\s(*_>-]*(?:inputs?|given|data|known)\b")


def _restates_inputs(paragraph: str, stem: str) -> bool:
    """Two or more of the question's numbers and nothing else, or, under an inputs label, one ('(Inputs from the
    question: 8.)')."""
    return lists_inputs(paragraph, stem) or (
        bool(stem) and _written_in(paragraph, stem) and bool(_INPUTS_LABEL.match(paragraph)))


_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def is_aside_start(sentence: str) -> bool:
    """A sentence that opens as an aside ("By symmetry, ...", "For comparison, ...", "If ...")."""
    return bool(_ASIDE_START.match(sentence))


def aside_number(sentence: str, start: int, stem: str = "") -> bool:
    """The number is a premium/discount/excess "of X" that the question does not ask for."""
    noun = _ASIDE_NOUN.search(sentence[:start])
    if noun is None or f"{noun.group(1).lower()} of" in stem.lower():
        return False
    # a change ('a drop of $4.11') is an aside only where the question asks a level ('the price ... sold at')
    return noun.group(1).lower() in ("premium", "discount", "profit", "excess", "complement") or not asks_change(stem)


# --- sign words --------------------------------------------------------------------------------------------
_SIGN_BEFORE = re.compile(
    r"(?i)\b(?:decrease[sd]?|declin(?:e[sd]?|ing)|loss(?:es)?|lost|los(?:e|es|ing)|fall(?:s|en|ing)?|fell|"
    r"drop(?:s|ped|ping)?|shortfall|reduction|negative|minus|down)\b"
    r"(?:\s+(?:of|by|about|approximately|roughly|around|nearly|almost|some|is|was|=|:|in\s+value\s+(?:of|by)))*"
    r"[\s:=]*$"
)


# 'a negative total return of 18.42%': the sign word on the noun the value is 'of'
_NEGATIVE_NOUN = re.compile(r"(?i)\bnegative\s+(?:[a-z-]+\s+){1,3}of\s+(?:about\s+|approximately\s+|roughly\s+)?$")
# a line labelled as a loss or a fall: 'Loss on the margin position: 57.0%', '**Net decline in value:** 3.2%'
_SIGN_LABEL = re.compile(
    r"(?im)^[ \t>*#•-]*(?:total\s+|net\s+)?(?:loss|decline|decrease|drop)\b[^:\n.]{0,40}:[ \t*_]*$")
# '3.49 % decline', '21.5% (a decline)'
_SIGN_AFTER = re.compile(r"(?i)^\s*\(?\s*(?:an?\s+)?(?:decrease|decline|drop|fall|loss|reduction)\b")


def apply_sign_words(region: str, found: Found) -> Number:
    """−X when a sign word stands right before or after a positive X ("a decline of 10.90 %", "fell by",
    "drops about", "negative 0.24", "a negative total return of 18.42%", "a 3.49% decline", a line labelled 'Loss on
    the position:'); "falls to 95.00" is a level and keeps its sign."""
    number = found.number
    before, after = region[max(0, found.start - 60) : found.start], region[found.end :]
    sign = _SIGN_BEFORE.search(before) or _SIGN_LABEL.search(before) or _NEGATIVE_NOUN.search(before)
    if sign and _EITHER_WAY.search(before[: sign.start()]):
        return number  # "move up or down by 3.71%": a size, no sign
    if number.value > 0 and (sign or _SIGN_AFTER.match(after) or (
            _ACCOUNTING_OPEN.search(before) and re.match(r"\s*\)", after))):
        return Number(-number.value, number.unit)
    return number


# 'the return is (22.68%)', '= ($1,250)': a value alone in parentheses after a statement is an accountant's minus
_ACCOUNTING_OPEN = re.compile(r"(?i)(?:\b(?:is|was|are|were|of)|[=:])\s*\(\s*[$€£¥]?\s*$")


_EITHER_WAY = re.compile(r"(?i)\b(?:up|ris(?:e|es|ing)|increas(?:e|es|ing)|gain(?:s|ing)?)\s*(?:or|and/or|/)\s*$")


# --- direction words: the action or sign a value carries -------------------------------------------------------
_DIRECTIONS = {  # name: (one side, the other side)
    "trade": (r"buy(?:s|ing)?|bought|purchas(?:e[sd]?|ing)|long", r"sell(?:s|ing)?|sold|short(?:s|ing)?"),
    "result": (r"gains?|profits?", r"loss(?:es)?|los(?:e|es|ing)|lost"),
    "change": (r"increas(?:e[sd]?|ing)|ris(?:e[sn]?|ing)|rose|higher|up", r"decreas(?:e[sd]?|ing)|"
               r"declin(?:e[sd]?|ing)|fall(?:s|en|ing)?|fell|drop(?:s|ped|ping)?|lower|down"),
    "payment": (r"receiv(?:e[sd]?|ing|er)|recipient", r"pa(?:y|ys|ying|id|yer)|ow(?:e[sd]?|ing)"),
    "valuation": (r"over(?:valued|priced|weight|stated)", r"under(?:valued|priced|weight|stated)"),
    "currency": (r"appreciat(?:e[sd]?|ing|ion)", r"depreciat(?:e[sd]?|ing|ion)"),
    "flow": (r"inflows?", r"outflows?"),
    "balance": (r"surplus(?:es)?", r"deficits?"),
    "financing": (r"issu(?:e[sd]?|ing|ance)", r"repurchas(?:e[sd]?|ing)|buy(?:s|ing)?[\s-]?backs?|bought\s+back"),
}
Direction = tuple[str, int]  # ("trade", 0) buy, ("trade", 1) sell, ("result", 1) loss, ...


def directions(text: str) -> set[Direction]:
    """The direction words of a text: buy/sell, gain/loss, increase/decrease, receive/pay, over/under, ..."""
    return {(name, side) for name, words in _DIRECTIONS.items() for side, word in enumerate(words)
            if re.search(rf"(?i)\b(?:{word})\b", text)}


def direction_agreement(key: set[Direction], answer_text: str) -> str | None:
    """How the words around a committed value stand to the key's direction words: 'same', 'opposite' (sell
    against the key's buy), 'both' (it names both), or None (the key has none, or the answer is silent)."""
    answer = {d for d in directions(answer_text) if d[0] in {name for name, _ in key}}
    same, opposite = bool(answer & key), bool(answer - key)
    if not key or not answer:
        return None
    return "both" if same and opposite else "same" if same else "opposite"


def without_captions(key: set[Direction], text: str) -> str:
    """The text without captions that name a signed measure by both its directions: 'Gain/(loss) = $(50,000)',
    'the gain or loss on extinguishment is −$50,000' (the value's sign then gives the direction)."""
    for name in {name for name, _ in key}:
        one, other = (rf"\b(?:{word})\b" for word in _DIRECTIONS[name])
        for a, b in ((one, other), (other, one)):
            text = re.sub(rf"(?i){a}\s*/\s*\(?\s*{b}\s*\)?", " ", text)
            text = re.sub(rf"(?i){a}\s+or\s+(?:an?\s+)?{b}(?=[^=:\d]{{0,60}}?(?:[=:]|\bis\b|\bwas\b|\bof\b)\s*"
                          rf"[$€£¥(+-]?\s?\d)", " ", text)
    return text


def leaves_open(key: set[Direction], text: str) -> bool:
    """The text offers both directions of the key's words as alternatives: '263 contracts long or short',
    'buy or sell', 'a gain or a loss of $50,000' (a hedge: nothing is committed)."""
    for name in {name for name, _ in key}:
        one, other = (rf"\b(?:{word})\b" for word in _DIRECTIONS[name])
        joined = r"\s*(?:,\s*)?(?:or|and/or|/)\s+(?:an?\s+|the\s+)?"
        if re.search(rf"(?i){one}{joined}{other}|{other}{joined}{one}", text):
            return True
    return False
