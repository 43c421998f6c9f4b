"""Hedges: a response that offers values without choosing one, which rule 5 of the grading manual calls
`no_answer` ("either X or Y", "between X and Y", "X–Y", "X if ..., Y if ...", "it depends", two conventions side
by side), and a response that says it is unsure of the answer it gives, which the judge reads.
"""

from __future__ import annotations

import re

from cfa_lib.answers.commitment import from_stem, has_refusal, is_aside_start, sentence_spans, sentences
from cfa_lib.answers.key import rounding_step
from cfa_lib.answers.numbers import (
    CURRENCY_UNITS,
    PERCENT,
    Number,
    first_value,
    relative_error,
    scan_numbers,
    scan_values,
)

# --- hedges ----------------------------------------------------------------------------------------------
_NUM = r"(?:[-+]?(?:(?:US|R|A|C|HK|S)?\$|[€£¥₹]|(?:USD|EUR|GBP|JPY|CHF|BRL)\s?)?\s?\d[\d,]*(?:\.\d+)?)"  # 'US$ 109.000'
_UNIT = r"(?:\s?(?:%|bps|basis\s+points|million|mn|m|k|billion|bn|percent|per\s+cent))?"
_LABEL = r"(?=[^()]*[A-Za-z]{3})[^()]{1,40}"  # '(quarterly)', '(365-day basis)'
_PER = r"(?:\s+(?:per|a|an|each|every)\s+\w+)?"  # '£3,683.30 per month'
_UNDER = (r"(?:on|under|with|using|in|for)\s+(?:(?:a|an|the)\s+)?[\w\s()-]{0,30}?\b(?:basis|year|convention|method|"
          r"approach|assumption|reading|compounding)\b")  # 'under a 360-day convention'
# 'could be $15, could be $16', 'around 4.00%, but it could be 5.00%': a value offered as one of two
_ONE_OF_TWO = (rf"\b(?:could|might)\s+be\s+{_NUM}[^.;\n]{{0,30}}?\b(?:could|might)\s+be\s+{_NUM}"
               rf"|\bbut\s+it\s+(?:could|might)\s+(?:also\s+)?be\s+{_NUM}")
_CJK_UNIT = r"(?:美元|欧元|英镑|日元|万元|亿元|元|円|ドル|ユーロ|ポンド|万|亿)"
_HEDGE = re.compile(
    rf"(?i)\beither\b(?:[^.\n]|\.\d){{0,160}}?\bor\b"  # either X or Y ("either about −39.1% (if ...) or ...")
    rf"|\b(?:about|around|roughly|approximately)\s+{_NUM}{_UNIT}\s+to\s+{_NUM}"  # "about +1.97% to +1.99%"
    rf"|\bbetween\s+(?:about\s+)?{_NUM}{_UNIT}\s+and\s+{_NUM}"  # between X and Y
    rf"|\b(?:entre|zwischen|tra|fra)\s+(?:el\s+|la\s+|le\s+|les\s+|o\s+|a\s+|il\s+)?{_NUM}{_UNIT}\s*%?\s+"
    rf"(?:y|et|und|e)\s+(?:el\s+|la\s+|le\s+|les\s+|o\s+|a\s+|il\s+)?{_NUM}"  # entre X y Y, zwischen X und Y
    # 40–41 %, £97,500–£97,560, $113.7k–$113.8k, -4.1%–-4.0% (never a spaced minus)
    rf"|\d(?:%|[kKmM]|bn|mn)?(?:[–-]|–-)[$€£¥]?\d"
    r"|\bdepend(?:s|ing)?\s+on\b|\bhing(?:es|ing)\s+on\b|\bequally\s+valid\b|\bboth\s+(?:are|figures\s+are|values\s+are|"
    r"answers\s+are|interpretations\s+are|readings\s+are|approaches\s+are)\s+(?:defensible|plausible|valid|possible|correct|reasonable|acceptable|justifiable)\b|\bcould\s+also\s+be\s+right\b|\bI['’]d\s+need\s+to\s+know\b"
    r"|\bare\s+both\s+(?:defensible|plausible|valid|possible|correct|reasonable|acceptable|justifiable)\b"
    r"|\bI['’]d\s+report\s+one\s+of\b|\beither\s+(?:number|value|figure)\b|\bone\s+of\s+those\s+two\b"
    r"|\bI['’]d\s+need\s+to\s+(?:check|confirm|verify|see)\s+which\b"
    # "約4.99%か5.0%のどちらか" (either 4.99% or 5.0%), "4.99%或5.0%"
    # '约94.34美元或85.29美元': a currency word may stand between
    rf"|{_NUM}{_UNIT}\s*か\s*(?:約\s*)?{_NUM}{_UNIT}[^。\n]{{0,6}}どちらか|{_NUM}{_UNIT}\s*{_CJK_UNIT}?\s*(?:或者?|还是)\s*约?{_NUM}"
    r"|\bmay\s+be\s+what['’]?s\s+intended\b|\bsomewhere\s+between\b|\b(?:hard|impossible)\s+to\s+say\b"
    # 'could be $15, could be $16', '..., but it could be 5.00%', 'Both are used in practice.'
    rf"|{_ONE_OF_TWO}"
    r"|\bboth\s+(?:are|conventions\s+are|methods\s+are)\s+(?:widely\s+|commonly\s+)?(?:used|common|in\s+use)\b"
    r"|\b(?:not\s+sure|unsure)\s+(?:which|whether)\b|\b(?:could|might)\s+also\s+be\b"
    # "$70 if regulated, $120 if not", "£3,683.30 per month if ..., or £3,671.07 if ...", "(D1 = D0 × 1.04), $40.25 if"
    rf"|{_NUM}{_UNIT}{_PER}\s+if\b(?:[^.;]|\.\d)*?[,;]\s*(?:and\s+|or\s+)?{_NUM}{_UNIT}{_PER}\s+if\b"
    # "$69.33 under the first reading or $66.67 under the second"
    rf"|{_NUM}{_UNIT}\s+(?:under|with|on|using|in)\s+(?:the\s+)?(?:first|one|former)\b[^.;]{{0,60}}?\b(?:or|and)\s+{_NUM}"
    # "4.97% on a 365-day year, or 4.90% on a 360-day year", "2.75% on a 365-day basis, or about 2.71% if ..."
    rf"|{_NUM}{_UNIT}\s+{_UNDER}[^.;]{{0,40}}?,?\s+or\s+(?:about\s+|approximately\s+|roughly\s+)?{_NUM}"
    # "5.76% under a 360-day convention, 5.84% under a 365-day convention": each value under its own convention
    rf"|{_NUM}{_UNIT}\s+{_UNDER}[^.;]{{0,40}}?[,;]\s*(?:and\s+|but\s+|while\s+)?{_NUM}{_UNIT}\s+{_UNDER}"
    # "$113,733 (quarterly) or $113,330 (semiannual)": two values, each labelled with its own reading
    rf"|{_NUM}{_UNIT}\s*\({_LABEL}\)\s*(?:,?\s*or\s+|/\s*|;\s*)(?:about\s+|approximately\s+|roughly\s+)?"
    rf"{_NUM}{_UNIT}\s*\({_LABEL}\)"
    # "≈ 3.24% using 365 days (about 3.19% if a 360-day year is used instead)": another value under another reading
    rf"|{_NUM}{_UNIT}[^()\n]{{0,40}}\(\s*(?:or\s+|about\s+|approximately\s+|roughly\s+|[~≈]\s*)*{_NUM}{_UNIT}\s+"
    r"(?:if|with|under|using|on)\b[^()]*\binstead\b"
    # "≈ 0.30 if they are standard deviations; if they are variances, ... ≈ 0.20"
    rf"|{_NUM}{_UNIT}\s+if\b[^;\n]{{0,100}};\s*(?:but\s+|whereas\s+)?if\b[^\n]{{0,160}}?{_NUM}"
    # "it depends" in the other languages answers come in: cela dépend, depende de, hängt davon ab, 取决于, 次第,
    # によって異なる, 에 따라 달라집니다
    r"|\b(?:cela|ça|tout)\s+d[ée]pend\b|\bdepende\s+d[eo]\b|\bh[äa]ngt\b[^.]{0,40}\bab\b|取决于|视[^。]{0,12}而定|次第|によって(?:異な|変わ|違)"
    r"|따라\s*(?:답|값|결과)?[이가은는]?\s*달라"
)
# a response that says it has not chosen, whatever the key: "it could be either daily or continuous", "either of
# these could be what is meant", "I can't say which"
UNDECIDED = re.compile(
    r"(?i)\b(?:could|might|may)\s+be\s+either\b|\beither\s+(?:one\s+|of\s+(?:these|them|the\s+two)\s+)?"
    r"(?:could|might|may)\b|\bcan['’]?t\s+(?:say|tell)\s+which\b|\bcannot\s+(?:say|tell)\s+which\b"
    r"|\b(?:can['’]?t|cannot)\s+(?:pin\s+(?:this|it|that)\s+down|settle\s+(?:this|it|on\s+one))\b"
    r"|\bwithout\s+knowing\s+which\b|\bboth\s+have\s+(?:merit|a\s+case)\b"
    r"|\b(?:can['’]?t|cannot)\s+narrow\s+(?:it|this|that)\s+down\b"  # '... $19 to $20 ... I can't narrow it down'
    r"|\b(?:does(?:n['’]t|\s+not)|did(?:n['’]t|\s+not))\s+specify\s+which\b"
    r"|\bunder\s+one\s+(?:convention|reading|interpretation|assumption)\b[^.]{0,80}\bunder\s+the\s+other\b"
    # "Either reading is possible from the information given", "I can't rule either out from the wording"
    r"|\beither\s+(?:reading|interpretation|convention|assumption|one|answer|value)\s+(?:is|seems|could\s+be|may\s+be)\s+"
    r"(?:possible|valid|defensible|plausible|reasonable|right)\b"
    r"|\b(?:can['’]?t|cannot|can\s+not)\s+rule\s+(?:either|one|any)\s+(?:of\s+them\s+)?out\b"
)
# "8.0% or 8.16%", "2.83 or maybe the 2.62 figure": two values joined by "or" (a restatement of one value,
# "0.15, or 15%", is not a hedge)
_OR_PAIR = re.compile(
    # '€122,222 (or €49,744 if ...)', '≈ 0.40 (or ≈ 0.60 if ...)', '3.56%? or 3.51%'
    rf"(?i)(?P<a>{_NUM}{_UNIT})\??\s*(?:,|—|–|-|\()?\s*or[\s,]+(?:[a-z]+[\s,]+){{0,4}}?(?:[≈~]\s*)?(?P<b>{_NUM}{_UNIT})"
    rf"|(?P<a2>{_NUM}{_UNIT})\s+[a-z]+\s+or\s+(?P<b2>{_NUM}{_UNIT})"  # "969 contracts or 529 contracts"
)


def conclusion(body: str) -> str:
    """The last paragraph (text after the last blank line) of a cleaned body."""
    paragraphs = [p for p in re.split(r"\n\s*\n", body) if p.strip()]
    return paragraphs[-1] if paragraphs else ""


# "X can be 1, 2 or 3", "stocks 1, 2, 3, 4 or 5": the outcomes a response counts, not values it hesitates between
_ENUMERATION = re.compile(r"\b\d+(?:,\s+\d+)+,?\s+(?:or|and)\s+\d+\b")  # "1, 2 or 3", not "1,003,333 or 1,006,667"


# '≈ CHF 980 per unit — roughly CHF 975–985 given rounding': a range that only says how precise the value is
_ROUNDING_AFTER = re.compile(r"(?i)[^.;]{0,25}?\b(?:given|due\s+to|because\s+of|allowing\s+for|from)\s+rounding\b")


# 'the Year 1–3 cash flows', 'years 17–20', 't = 1-4': a span of periods, not a range of answers
_SPAN_OF_PERIODS = re.compile(r"(?i)\b(?:years?|yrs?|periods?|months?|quarters?|t\s*=)\s*\d+\s*[–-]\s*\d+")


def is_hedge(text: str, stem: str = "") -> bool:
    """Two values offered without a choice, a range, or an explicit 'it depends' (on the text from the
    committed value on, or a FINAL ANSWER line); sentences that open as asides ("By symmetry, ... between 5%
    and 11%") and lists of three or more outcomes ("X can be 1, 2 or 3") do not count."""
    parts = [_ENUMERATION.sub(" ", _SPAN_OF_PERIODS.sub(" ", s)) for s in sentences(text) if not is_aside_start(s)]
    return any(not from_stem(s, m.start(), m.end(), stem) and not _ROUNDING_AFTER.match(s, m.end())
               for s in parts for m in _HEDGE.finditer(s)) or any(
        _two_values(s, stem) for s in parts) or bool(UNDECIDED.search(text))


_OPEN_SENTENCE = re.compile(
    rf"(?i)\b(?:it\s+)?depends\s+on\b|\bunder\s+one\s+(?:convention|reading|interpretation|assumption|method)\b"
    rf"|{_ONE_OF_TWO}")


def sentence_leaves_open(body: str, position: int) -> bool:
    """The sentence holding the committed value says the answer depends, or offers it as one of two ('It depends on
    the convention: 3.50% if ..., or 3.30% under ...', 'could be $15, could be $16', 'around 4.00%, but it could be
    5.00%'), and states another value."""
    sentence = next((s for at, s in sentence_spans(body) if at <= position < at + len(s)), "")
    values = {round(found.number.value, 9) for found in scan_values(sentence)}
    return len(values) > 1 and bool(_OPEN_SENTENCE.search(sentence))


_DEPENDS_OPENING = re.compile(r"(?i)^[\s>*#_]*(?:it\s+)?depends\s+on\b")
_SETTLES = re.compile(r"(?i)\b(?:so|therefore|thus|hence|I(?:['’]d|\s+would|\s+will|['’]ll)|answer|go\s+with|choose|"
                      r"pick|use|take|assume|assuming|standard|here|given)\b")


def conclusion_depends(body: str) -> bool:
    """The last paragraph opens 'It depends on ...' and lists two or more values without settling on one ('It
    depends on the payment timing:' then '- ordinary annuity: £4,321.51' and '- annuity due: £4,303.58')."""
    last = conclusion(body)
    opening = _DEPENDS_OPENING.match(last)
    if opening is None:
        return False
    values = {round(found.number.value, 9) for found in scan_values(last)}
    return len(values) > 1 and not _SETTLES.search(last, opening.end())


_CONDITION_START = re.compile(r"(?i)^[\s>*_\-•]*(?:(?:but|and|or|though|however),?\s+)?if\b")


def ends_on_condition(body: str, position: int) -> bool:
    """The committed value closes the response in a condition ('But if the question only wants the price effect,
    it is −12.5%.') and the statement before it states a different value (−15.4 %): the response never settles."""
    spans = [(at, s) for at, s in sentence_spans(body) if scan_values(s)]
    mine = [i for i, (at, s) in enumerate(spans) if at <= position < at + len(s)]
    if not mine or mine[0] == 0 or not _CONDITION_START.match(spans[mine[0]][1]):
        return False
    here = [f.number for f in scan_values(spans[mine[0]][1]) if spans[mine[0]][0] + f.start <= position]
    before = scan_values(spans[mine[0] - 1][1])
    return bool(here and before) and relative_error(before[-1].number, here[-1]) > 0.01


# 'on a 365-day basis', 'with convexity', 'duration-only': a label for one way of computing, then its value
_CONVENTION = (r"(?:(?:(?:on|with|under|using|for)\s+an?|under\s+the)\s+(?:[\w-]+\s+){0,3}?"
               r"(?:year|basis|convention|method|approach|assumption)\b"
               r"|\b(?:with|without|including|excluding)\s+(?:the\s+)?convexity\b|\b[\w-]+-only\b)"
               r"(?:[^.;\n]|\.\d){0,80}?\d")
_TWO_CONVENTIONS = re.compile(
    rf"(?i){_CONVENTION}(?:[^.;\n]|\.\d)*[.;,]\s*(?:and\s+|but\s+|while\s+|whereas\s+)?{_CONVENTION}")


def ends_on_two_conventions(body: str) -> bool:
    """The response closes on a value under each of two conventions and chooses neither ('On a 365-day
    bond-equivalent basis the yield is 3.77%; on a 360-day money-market basis it is 3.71%.', 'With a 365-day year
    ... $4,109,589; with a 360-day year it is $4,166,667.'): nothing with a number follows."""
    found = list(_TWO_CONVENTIONS.finditer(body))
    if not found:
        return False
    sentence_end = re.compile(r"[^\n]*?(?:[.!?](?=\s|$)|$)").match(body, found[-1].end()).end()
    return not re.search(r"\d", body[sentence_end:])


# "both 1 to 5 and 5 to 1 describe ...", "both 8.0% and 8.16% are ...": two values kept side by side
_VALUE = rf"{_NUM}(?:/\d+(?:\.\d+)?)?{_UNIT}"
_BOTH_PAIR = re.compile(rf"(?i)\bboth\s+(?P<a>{_VALUE})\s+and\s+(?P<b>{_VALUE})")


def _two_values(sentence: str, stem: str) -> bool:
    for both in _BOTH_PAIR.finditer(sentence):
        a, b = scan_values(both.group("a")), scan_values(both.group("b"))
        if a and b and relative_error(a[0].number, b[0].number) > 1e-9 and not from_stem(
                sentence, both.start(), both.end(), stem):
            return True
    for pair in _OR_PAIR.finditer(sentence):
        a, b = (scan_numbers(pair.group(g) or pair.group(f"{g}2")) for g in ("a", "b"))
        both_ways = _BOTH_WAYS.search(sentence[max(0, pair.start() - 30) : pair.end()])
        units = {a[0].number.unit, b[0].number.unit} if a and b else set()
        if PERCENT in units and units & set(CURRENCY_UNITS):
            continue  # "$28.67, or about 115% of the $25 issue price": one value restated as a ratio, no alternative
        if re.match(r"\s*\)\s*[=≈]", sentence[pair.end() :]):
            continue  # "P(X = 3, 4 or 5) = 3 × (1/20)": the outcomes an expression's argument counts
        if _RESTATES.search(sentence[max(0, pair.start() - 40) : pair.start()]) and _units_differ(pair):
            continue  # '**297.51 months**, i.e. about 24.79 years or 9,049 days': one value in other units
        if a and b and relative_error(a[0].number, b[0].number) > 1e-9 and not both_ways and not from_stem(
                sentence, pair.start(), pair.end(), stem) and not _rounded_restatement(pair) and not _signed_in_words(
                pair, a[0].number, b[0].number):
            return True
    return False


def _signed_in_words(pair: re.Match[str], first: Number, second: Number) -> bool:
    """The second value is the first with its sign said in words ('= −0.5100, or negative 51 percent')."""
    worded = re.search(r"(?i)\b(?:negative|minus)\s*\Z", pair.string[: pair.start("b" if pair.group("b") else "b2")])
    return bool(worded) and first.value < 0 < second.value and relative_error(
        Number(-first.value, first.unit), second) <= 1e-9


_RESTATES = re.compile(r"(?i)\b(?:i\.\s?e\.|that\s+is|equivalently|in\s+other\s+words)")
_TIME_UNIT = re.compile(r"(?i)\s*(days?|weeks?|months?|quarters?|years?)\b")


def _units_differ(pair: re.Match[str]) -> bool:
    """Each value of the pair is followed by another unit of time ('24.79 years or 9,049 days')."""
    units = [_TIME_UNIT.match(pair.string, pair.end(g)) for g in ("a", "b") if pair.group(g)] or \
        [_TIME_UNIT.match(pair.string, pair.end(g)) for g in ("a2", "b2") if pair.group(g)]
    return len(units) == 2 and all(units) and units[0].group(1).rstrip("s") != units[1].group(1).rstrip("s")


_APPROXIMATELY = re.compile(r"(?i)\b(?:about|approximately|roughly|around|circa|some)\b|[≈~]")


def _rounded_restatement(pair: re.Match[str]) -> bool:
    """'$66,000,000, or about $0.07 billion', 'about $1.19 million, or 1,185.4k': one value, said to be approximate,
    is the other written to fewer digits; one value restated, not an alternative ('8.0% or about 8.16%' offers
    two)."""
    first, second = pair.group("a") or pair.group("a2"), pair.group("b") or pair.group("b2")
    between = pair.string[pair.end("a" if pair.group("a") else "a2") : pair.start("b" if pair.group("b") else "b2")]
    a, b = first_value(first), first_value(second)
    if a is None or b is None or (a.unit != b.unit and None not in (a.unit, b.unit)):  # '1,185.4k' has no '$'
        return False
    before = pair.string[max(0, pair.start() - 12) : pair.start()]
    steps = sorted((rounding_step(first, first_value) or 0, rounding_step(second, first_value) or 0))
    return bool(_APPROXIMATELY.search(between) or _APPROXIMATELY.search(before)) and steps[1] > steps[0] and \
        abs(a.value - b.value) <= steps[1] / 2 * (1 + 1e-9)


# "rise above $511.03 or fall below $474.47": the two bounds of one answer (breakevens), not two answers
_BOTH_WAYS = re.compile(r"(?i)\b(?:above|rises?|up)\b.*\bor\b.*\b(?:below|falls?|down)\b"
                        r"|\b(?:below|falls?|down)\b.*\bor\b.*\b(?:above|rises?|up)\b")


# --- asides: sentences and clauses that comment on the answer ---------------------------------------------


# "Actually I'm not certain which convention the question intends.", "not sure my P(good) is right", "Hard to say.",
# "Or was the first right? I'm going back and forth", "Or maybe the first one was right.", "Hard to be sure",
# "= 2.0%??": a response that doubts the answer it gives, whatever it states; the judge reads it
_UNSURE = re.compile(
    r"(?i)\b(?:not|n['’]t)\s+(?:(?:entirely|totally|completely|quite|really|so|100\s?%)\s+)?(?:sure|certain|confident)\b"
    r"|\bgoing\s+back\s+and\s+forth\b|\bsecond[\s-]guess\w*|\bor\s+was\s+the\s+first\b|\bI['’]?m\s+torn\b"
    r"|\bor\s+(?:maybe|perhaps)\s+the\s+first\s+(?:one\s+)?(?:was|is)\s+(?:right|correct)\b"
    r"|\bunsure\b|\bI['’]?m\s+uncertain\b|\bcan['’]?t\s+decide\b"
    r"|\b(?:maybe|perhaps)\s+it\s+should\s+(?:be|have\s+been)\b"  # 'Actually, maybe it should be $39.0 million...'
    r"|\b(?:hard|impossible|difficult)\s+to\s+(?:say|tell|be\s+(?:sure|certain))\b"
    r"|\d%?\?{2,}")


# 'Let me reconsider which reading is intended before giving a number.' closing the response: the answer is still to
# come ('Hmm, let me reconsider... no, it should be €859.20.' settles it)
_STILL_TO_COME = re.compile(r"(?i)\blet\s+me\s+(?:reconsider|rethink|revisit)\b|\bbefore\s+(?:giving|committing\s+to|"
                            r"settling\s+on)\s+(?:a|an|the|my)\s+(?:number|answer|value|figure)\b"
                            r"|\bbefore\s+committing\s*[.!]?\s*\Z")  # "I'd rather match them before committing."


# 'The numbers come out as £18,663 and £19,206.': the conclusion states two results and names neither the answer
_TWO_RESULTS = re.compile(rf"(?i)\b(?:come\s+out\s+(?:as|at|to)|are|were)\s+(?:about\s+)?(?P<a>{_VALUE})\s+and\s+"
                          rf"(?:about\s+)?(?P<b>{_VALUE})[\s*_]*[.!]?[\s*_]*\Z")


def closes_on_two_results(body: str) -> bool:
    """The last sentence states two different values as results ('The numbers come out as £18,663 and £19,206.')."""
    last = next(iter(sentences(body)[-1:]), "")
    pair = _TWO_RESULTS.search(last)
    a, b = (scan_values(pair.group(g)) for g in ("a", "b")) if pair else ([], [])
    return bool(a and b) and relative_error(a[0].number, b[0].number) > 1e-9


def doubts_its_answer(body: str) -> bool:
    """One of the response's last two sentences doubts its answer, or the last one defers it."""
    last = sentences(body)[-2:]
    to_come = _STILL_TO_COME.search(last[-1]) if last else None
    return any(_UNSURE.search(sentence) for sentence in last) or bool(
        to_come and not re.search(r"\d", last[-1][to_come.end() :]))


# '≈ 36.7 (could print as 36.6 or 36.8 depending on rounding of z)', 'about 2.82% (or 2.81%, depending on rounding)',
# '4%, although with rounding 4.0–4.1% would be consistent':
# careful graders call it a hedge (rule 5) or a remark on precision; the judge reads it
_ROUNDING_REMARK = re.compile(r"(?i)\((?=[^()]*\d)[^()]*\bround(?:ing|ed|s)?\b[^()]*\)"
                              r"|,\s*(?:al)?though\s+(?:[^.]|\.(?=\d))*\bround(?:ing|ed|s)?\b(?:[^.]|\.(?=\d))*")


def hedges_only_on_rounding(text: str, stem: str = "") -> bool:
    """The text's only hedge is a remark in parentheses that puts its other values down to rounding."""
    return _ROUNDING_REMARK.search(text) is not None and not is_hedge(_ROUNDING_REMARK.sub(" ", text), stem)


def declines_to_choose(text: str, stem: str, letters: str) -> bool:
    """The response shows it gives no single option: its last two sentences hedge, say it has not chosen, doubt
    the answer or name two or more letters ('答案：A或C'), or it refuses. A response with no letter read and none of
    these may answer in a form the letter reader does not know ('Option #1 is not a use', 'So I'd go with the
    z-test'): replayed on the blind sets' first scores, a third of such `no_answer` verdicts were wrong, so the
    judge reads them."""
    end = " ".join(sentences(text)[-2:])
    named = set(re.findall(rf"(?<![A-Za-z0-9'’])([{letters}])(?![A-Za-z0-9'’])", end))  # 'A或C' too
    return is_hedge(end, stem) or bool(UNDECIDED.search(end)) or doubts_its_answer(text) or has_refusal(text) \
        or len(named) >= 2
