"""Numbers as other locales and languages write them, rewritten as the US-English grammar the readers parse.

`normalise_signs` is the one entry point: Unicode minus signs, thousands grouped by spaces, apostrophes or
dots, decimal commas (read only where the whole text writes them, an ambiguous '1,234' left as written for
the reader to defer on), scientific notation, 万/億/亿 and the unit, scale and sign words of other
languages. Kept apart from `numbers` (which scans and compares the rewritten text) so that each grammar
has one home.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from decimal import Decimal

from cfa_lib.answers.text import no_break_spaces

# '1 003 333', '€644 161' (thin, narrow or no-break spaces); with plain spaces only '10 736 010', '60 000'
_SPACE_GROUPED = re.compile(
    r"(?<![\d.,])(?:\d{1,3}(?:[\u2009\u202f\u00a0]\d{3})+|\d{1,3}(?: \d{3}){2,}|\d{2,3} \d{3})(?![\d,]|\.\d{3})"
)


# '1 001' once the text has grouped another number by plain spaces ('24 024 / 24 = 1 001'); alone it may be two
_ONE_DIGIT_SPACE_GROUP = re.compile(r"(?<![\d.,])\d(?: \d{3})+(?![\d,]|\.\d{3})")
# ... and alone when no other reading exists: cents after it ('¥8 099.76'), a group that opens with 0 ('¥9 000')
_SURE_ONE_DIGIT_SPACE_GROUP = re.compile(
    r"(?<![\d.,])\d(?: \d{3})*(?: 0\d{2}(?: \d{3})*(?![\d,]|\.\d{3})| \d{3}(?=\.\d{2}(?!\d)))")


def _join_space_groups(match: re.Match[str]) -> str:
    return re.sub(r"[ \u2009\u202f\u00a0]", ",", match.group())


# Swiss thousands: "7'220.39", '1’500’000' (groups of three digits only)
_APOSTROPHE_GROUPED = re.compile(r"(?<![\d.,'’])\d{1,3}(?:['’]\d{3})+(?![\d'’])")
# Indian lakh and crore grouping: '$13,03,433', '12,34,567.89' (groups of two before the last three: no other reading)
_INDIAN_GROUPED = re.compile(r"(?<![\d.,])\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?(?![\d,])")


def normalise_signs(text: str) -> str:
    """Numbers as the readers read them (the number grammar of tests/grading_corpus/README.md): Unicode minus
    signs to '-', the lira sign the source uses for pounds (₤) to '£', apostrophe thousands and Indian lakh groups
    dropped (7'220.39 is 7220.39, 13,03,433 is 1303433), scientific notation, 万/億/亿 and unit
    words of other languages written out (`_written_out`), a text written with decimal commas read in its
    locale (`decimal_comma`), thousands grouped by spaces or thin spaces ('1 003 333', '€644 161') to commas."""
    text = re.sub("[\u2212\u2012\u2011\ufe63\uff0d]", "-", text).replace("₤", "£")
    text = no_break_spaces(text)
    text = _APOSTROPHE_GROUPED.sub(lambda m: re.sub("['’]", "", m.group()), text)
    text = _INDIAN_GROUPED.sub(lambda m: m.group().replace(",", ""), text)
    text = _written_out(text)
    if decimal_comma(text) or dot_thousands(text):
        dots_settled = dots_group_thousands(text)
        text = _GROUPED_DECIMAL.sub(lambda m: _as_decimal_point(m, dots_settled), text)
    else:  # '28,79 %' on the answer line of a text that otherwise writes points: no US reading of it exists
        text = _COMMA_DECIMAL.sub(lambda m: _GROUPED_DECIMAL.sub(lambda n: _as_decimal_point(n, True), m.group()),
                                  text)
        text = _DOT_GROUPS.sub(lambda m: m.group().replace(".", ""), text)  # '€10.173.255' has one reading too
    by_spaces = any(" " in m.group() for m in _SPACE_GROUPED.finditer(text))
    text = _SPACE_GROUPED.sub(_join_space_groups, text)
    text = (_ONE_DIGIT_SPACE_GROUP if by_spaces else _SURE_ONE_DIGIT_SPACE_GROUP).sub(_join_space_groups, text)
    # an en/em dash directly before a number is a minus sign unless it joins a range (2019–2020)
    return re.sub(r"(?<![\w)])([–—])(?=\s?[$€£¥]?\d)", "-", text)


# --- number formats beyond US English -------------------------------------------------------------------
# a decimal comma no US text writes: '28,79', '0,2879', '−1,7', '40.082,64', '16 215,64'
_COMMA_DECIMAL = re.compile(
    r"(?<![\d.,])(?<!\w\()(?:0,\d+|\d+,\d{1,2}|\d+,\d{4,}|\d{1,3}(?:[. \u00a0\u202f\u2009]\d{3})+,\d+)(?![\d,])")
# a decimal point no comma-locale text writes: '28.79', '0.288', '1,234.5', '0.776483'
_POINT_DECIMAL = re.compile(r"(?<![\d.,])(?:0\.\d+|\d+\.\d{1,2}(?![\d.])|\d+\.\d{4,}|\d{1,3}(?:,\d{3})+\.\d+)")
# a number in a decimal-comma text: its thousands by dots or spaces, its decimal part after the comma
_GROUPED_DECIMAL = re.compile(
    r"(?<![\d.,])(?P<int>\d{1,3}(?:(?P<sep>[. \u00a0\u202f\u2009])\d{3})(?:(?P=sep)\d{3})*|\d+)"
    r"(?:,(?P<dec>\d+))?(?![\d])")
# a number written one way in every locale's reading: '1,234' in a decimal-comma text is 1.234 or 1234
AMBIGUOUS_GROUP = re.compile(r"(?<![\d.,])[1-9]\d{0,2},\d{3}(?![\d,.])")


# '1.000.000': two dot groups, which no decimal point writes
_DOT_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d,]|\.\d)")
# '900.000' in a text that writes no decimal point elsewhere: 900 or 900,000 (a decimal rarely ends in '.000';
# '3.897%' is read as written)
AMBIGUOUS_POINT = re.compile(r"(?<![\d.,])[1-9]\d{0,2}\.000(?![\d,]|\.\d)")
# '70.906' in a decimal-comma text where no other number groups thousands with dots: a thousands group by the
# text's convention, or an English decimal written on the answer line
AMBIGUOUS_DOT_GROUP = re.compile(r"(?<![\d.,])[1-9]\d{0,2}\.\d{3}(?![\d,]|\.\d)")
# '81.481,48': dots that can only group thousands
_DOT_GROUPED_DECIMAL = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3})+,\d+")


def dots_group_thousands(text: str) -> bool:
    """Some number of the text settles its dots as thousands ('1.000.000', '81.481,48'), or, in a text that writes
    no decimal point, a round '518.000' among other dot groups ('44.580 × 10 = US$ 445.800; 518.000 − 445.800')."""
    return bool(_DOT_GROUPS.search(text) or _DOT_GROUPED_DECIMAL.search(text) or _round_dot_groups(text))


def _round_dot_groups(text: str) -> bool:
    return (len(AMBIGUOUS_DOT_GROUP.findall(text)) >= 2 and bool(AMBIGUOUS_POINT.search(text))
            and not writes_decimal_point(text))


def dot_thousands(text: str) -> bool:
    """The text groups thousands with dots ('1.000.000 USD ... 900.000 USD', or a round '518.000' among other dot
    groups) and writes no decimal point."""
    return bool(_DOT_GROUPS.search(text) or _round_dot_groups(text)) and not writes_decimal_point(text)


@functools.lru_cache(maxsize=1024)  # asked of one text several times while it is graded
def writes_decimal_point(text: str) -> bool:
    """The text writes a decimal with a point somewhere ('28.79', '0.288', '1,234.5')."""
    return bool(_POINT_DECIMAL.search(text))


@functools.lru_cache(maxsize=1024)  # asked of one text several times while it is graded
def writes_decimal_comma(text: str) -> bool:
    """The text writes a decimal with a comma somewhere ('28,79 %', '0,2879', '81.481,48')."""
    return bool(_COMMA_DECIMAL.search(text))


def decimal_comma(text: str) -> bool:
    """The text writes decimals with a comma and never with a point: its dots group thousands."""
    return writes_decimal_comma(text) and not writes_decimal_point(text)


def _as_decimal_point(match: re.Match[str], dots_settled: bool) -> str:
    whole, decimals = match.group("int"), match.group("dec")
    if AMBIGUOUS_GROUP.fullmatch(match.group()) or (not dots_settled and AMBIGUOUS_DOT_GROUP.fullmatch(match.group())):
        return match.group()  # '1,234', '70.906': left as written, `grade_open_answer` defers on it
    if decimals is None and match.group("sep") == " " and not re.fullmatch(r"\d{1,3}(?: \d{3}){2,}|\d{2,3} \d{3}",
                                                                             whole):
        return match.group()  # '1 500' may be two numbers; the US rule for spaces decides
    digits = re.sub(r"\D", "", whole)
    return digits if decimals is None else f"{digits}.{decimals}"


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# '1.6216 × 10⁴', '1.2 × 10^2', '6.6 × 10^{-3}', '4.929285E+06', '2.8785e-01'
_SCIENTIFIC = re.compile(
    r"(?<![\w.,])(?P<m>\d+(?:[.,]\d+)?)(?:\s*[×xX*·]\s*10\s*(?:\^\s*(?P<brace>\{)?\s*(?P<e1>[-+]?\d+)\s*(?(brace)\})|(?P<e2>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
    r"|[eE](?P<e3>[-+]?\d{1,3}))(?![\w.])")
SCALE_NOTE = r"(?:[$€£¥]\s*|(?:USD|EUR|GBP|JPY)\s+)?(?:thousands|millions|billions|['’]?000(?:['’]?s)?)\b"
# '98.27万', '1.5亿', '1億6,990万' (10⁸ and 10⁴ summed), Korean '11만 3,733' and '1억 2,000만' (the units after a
# whole 만 added), read only when nothing else of the form is CJK (千, 천, 兆, 六)
CJK_NUMERALS = "〇一二三四五六七八九十百千万萬億亿兆만억천조"
_CJK_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CJK_SCALE = re.compile(
    rf"(?<![\d.,{CJK_NUMERALS}])(?:(?P<oku>{_CJK_DIGITS})\s*[億亿억](?:\s*(?P<man>{_CJK_DIGITS})\s*[万萬만])?"
    rf"|(?P<man_only>{_CJK_DIGITS})\s*[万萬만])(?:\s*(?P<units>\d,\d{{3}}|\d{{1,4}})(?![\d.,]))?"
    rf"(?![\d{CJK_NUMERALS}])(?!\s*\d[\d,.]*\s*[{CJK_NUMERALS}])")  # '11만 3천': not read in part
# unit, scale and sign words of the languages answers are written in, as the readers know them
_WORDS_ELSEWHERE: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"(?i)(?<=\d)\s*(?:个)?(?:基点|ベーシス・?ポイント|베이시스\s*포인트|basispunkte?n?|points?\s+de\s+base|"
                r"puntos?\s+b[aá]sicos?|pontos?[\s-]+base|pb\b)"), " bps"),
    (re.compile(r"(?i)(?<=\d)\s*(?:prozent|por\s+ciento|pour\s+cent|por\s+cento)\b"), " percent"),
    (re.compile(r"(?i)(?<=\d)\s*(?:millionen|millions|millones|milh[õo]es|milioni|milyon|mio\.|miljoner|miljon|"
                r"millioner|miljoen(?:en)?|milion(?:y|ów)?|juta|triệu|млн\.?|миллион(?:а|ов)?)(?!\w)"), " million"),
    (re.compile(r"(?i)(?<=\d)\s*(?:milliarden|milliards|miliardi|milyar|mrd\.|miljarder|miljard(?:en)?|miliard(?:y|ów)?|"
                r"miliar|tỷ|млрд\.?|миллиард(?:а|ов)?)(?!\w)"), " billion"),
    # a scale note on the label before the value: 'Answer (in USD '000): 113.7', 'FV ($ thousands): 113.7'; read
    # first, so that 'for 2015 (€ 000s): 452.2' is not 2015 thousand
    (re.compile(rf"(?i)\(\s*(?:in\s+)?{SCALE_NOTE}\s*\)(?P<sep>\s*[:：=]\s*)(?P<n>[-+−]?[$€£¥]?\s?\d[\d,]*(?:\.\d+)?)"
                r"(?![\d.,]|\s*(?:thousand|million|billion|[kmb]\b|mn\b|bn\b))"),
     lambda m: f"{m.group('sep')}{m.group('n')} {_scale_word(m.group())}"),
    # the unit or scale right after the number: '169.9 (in $ millions)', '450 in thousands', '28,936 (in $ 000s)',
    # '28,936 ($000s)', '28.79 (in %)'
    (re.compile(rf"(?i)(?<=\d)\s*\(\s*(?:in\s+)?{SCALE_NOTE}\s*\)|(?<=\d)\s+in\s+{SCALE_NOTE}"),
     lambda m: " " + _scale_word(m.group())),
    (re.compile(r"(?<=\d)\s*\(\s*in\s*%\s*\)"), "%"),
    # cents and pence: '78 cents' is $0.78, '45 pence' is £0.45
    (re.compile(r"(?i)(?<![\d.,$€£¥])(?P<n>\d+(?:\.\d+)?)\s*(?:cents?\b|¢)"),
     lambda m: "$" + _plain(Decimal(m.group("n")) / 100)),
    (re.compile(r"(?i)(?<![\d.,$€£¥])(?P<n>\d+(?:\.\d+)?)\s*pence\b"),
     lambda m: "£" + _plain(Decimal(m.group("n")) / 100)),
    # the percent sign before the number (Turkish '%3,49'), not one closing a number ('5% 3')
    (re.compile(r"(?<![\d%])(?<!\d\s)%(?P<n>\d(?:[\d.,]*\d)?)"), lambda m: m.group("n") + "%"),
    # sign words before a number ('baisse de 0,66 %', 'sinkt um 0,66 %', '下降0.66%'): rule 4 in any language
    # ('ein Rückgang des Kurses von etwa 2,87 %': a few words and an approximation between)
    (re.compile(r"(?i)\b(?:baisse|diminution|recul|r[üu]ckgang|disminuci[óo]n|ca[íi]da|queda|redu[çc][ãa]o|calo|"
                r"diminuzione|снижение|падение)\s+(?:[^\W\d_]+\s+){0,3}?(?:de|d['’]|von|um|del|dello|della|di|на)\s*"
                r"(?:environ\s+|rund\s+|etwa\s+|ca\.\s+|aproximadamente\s+|cerca\s+de\s+|circa\s+|около\s+)?"
                r"(?=[-+$€£¥]?\d)"),
     "decline of "),
    (re.compile(r"(?i)\b(?:sinkt|f[äa]llt|diminue|baisse|disminuye|cae|baja|cai|diminui)\s+(?:um|de|en|em)?\s*"
                r"(?:environ\s+|rund\s+|etwa\s+|aproximadamente\s+|cerca\s+de\s+)?(?=[-+$€£¥]?\d)"), "falls by "),
    (re.compile(r"(?:下降|减少|下跌|降低|下落|減少)(?:了)?(?:约|大约|約)?(?=[-+$€£¥]?\d)"), " declines by "),
    # a decline after the number: '%3,49 düşüş', '3,49% снижение', '3.49% 하락', '3.49%の下落'
    (re.compile(r"(?i)(?<=[\d%])[ \t]*(?:(?:d[üu][şs][üu][şs]|azalma|снижени[еяю]|падени[еяю])\b|の?(?:下落|減少)|"
                r"(?:의\s*)?(?:하락|감소))"), " decline "),
    # a loss before or after the number: 'pérdida del 15,4 %', 'Verlust von 15,4 %', '亏损15.4%', '15,4 % de perte'
    (re.compile(r"(?i)\b(?:perte|verlust|p[ée]rdida|perda|perdita|убыток)\s+"
                r"(?:de\s+la|del|du|da|do|de|d['’]|von|um|di|в\s+размере)?\s*"
                r"(?:environ\s+|rund\s+|etwa\s+|aproximadamente\s+|cerca\s+de\s+|circa\s+|около\s+)?"
                r"(?=[-+$€£¥]?\d)"
                r"|(?:亏损|损失|損失|손실)(?:了)?(?:约|大约|約)?\s*(?=[-+$€£¥]?\d)"), " loss of "),
    (re.compile(r"(?i)(?<=[\d%])[ \t]*(?:(?:de\s+|d['’]|di\s+)?"
                r"(?:perte|verlust|p[ée]rdida|perda|perdita|убыток|kay[ıi]p|zarar)\b|の?損失|(?:의\s*)?손실)"),
     " loss "),
]


def _scale_word(note: str) -> str:
    """The scale a note names: '(in $ millions)' is million, '(€ 000s)' thousand."""
    return next((w for w in ("million", "billion") if w in note.lower()), "thousand")


def _written_out(text: str) -> str:
    """Scientific notation as a plain decimal ('2.8785E-01' is 0.28785), 万 and 億/亿 applied ('98.27万' is
    982700, '1億6,990万' is 169900000) and other languages' unit and scale words in English ('66 Basispunkte' is
    '66 bps')."""

    def plain(match: re.Match[str]) -> str:
        exponent = (match.group("e1") or match.group("e2") or match.group("e3")).translate(_SUPERSCRIPT)
        mantissa = match.group("m").replace(",", ".")
        return _plain(Decimal(mantissa).scaleb(int(exponent)))

    text = _SCIENTIFIC.sub(plain, text)
    if not text.isascii():  # 万, 億, 亿: a pass only where such a character can be
        text = _CJK_SCALE.sub(_cjk_value, text)
    for words, english in _WORDS_ELSEWHERE:
        text = words.sub(english, text)
    return text


def _cjk_value(match: re.Match[str]) -> str:
    def part(name: str) -> Decimal:
        return Decimal((match.group(name) or "0").replace(",", ""))

    man = part("man") + part("man_only")
    if match.group("units") and (man != man.to_integral_value() or part("units") >= 10_000):
        return match.group()  # '98.27万 3' or '11만 12,345': not one number; the reader defers on what it cannot read
    return _plain(part("oku") * 10**8 + man * 10_000 + part("units"))


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text
