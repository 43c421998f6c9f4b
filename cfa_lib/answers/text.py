"""Clean-up every answer reader needs first: reasoning blocks out, LaTeX and markup unwrapped."""

from __future__ import annotations

import functools
import re

from cfa_lib.models.thinking import split_thinking

# inline math '$6.6 \times 10^{-3}$', '$RP_{2020} = 0.031$': dollar signs that delimit LaTeX, not amounts
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?P<math>[^$\n]*?(?:\\[A-Za-z]+|[_^]\{)[^$\n]*?)(?<!\\)\$(?![\d$])")


def _unwrap_latex(text: str) -> str:
    text = re.sub(r"\\\\(?=[A-Za-z$%,;:! ])", r"\\", text)  # escaped in a JSON string: '"$45\\,\\text{bps}$"'
    text = _INLINE_MATH.sub(lambda m: m.group("math"), text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(
            r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|operatorname|mbox)\s*\{([^{}]*)\}",
            r"\1",
            text,
        )
    text = re.sub(r"\\[()\[\]]", " ", text)  # inline / display math delimiters
    replacements = {
        "\\$": "$", "\\%": "%", "{,}": ",", "\\approx": "≈", "\\sim": "~", "\\times": "×",
        "\\cdot": "×", "\\div": "÷", "\\euro": "€", "\\pounds": "£", "\\left": "", "\\right": "",
    }  # fmt: skip
    for old, new in replacements.items():
        text = text.replace(old, new)
    text = re.sub(r"(?<=\d)\\[,;:!](?=\d{3})", "", text)  # 113\,733
    previous = None
    while previous != text:  # \frac{3}{20} is 3/20; \frac{a + b}{c} is (a + b)/c
        previous = text
        text = re.sub(r"\^\{([\w.]+)\}", r"^\1", text)  # (1.05)^{52}
        text = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", _fraction, text)
    return re.sub(r"\\[,;:! ]", " ", text)  # \, \; \: \! and "\ " are spaces


def _fraction(match: re.Match[str]) -> str:
    parts = [p if re.fullmatch(r"\s*[\w.,]+\s*", p) else f"({p})" for p in match.groups()]
    return "/".join(p.strip() for p in parts)


# full-width forms of ASCII, as Chinese and Japanese text writes them ('２６．９２％', 'Ａ'), and the ideographic space
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


# vulgar fractions as decimals: '8½%' is 8.5 %, '¾' is 0.75 (thirds to seven places)
_VULGAR = {"½": "5", "¼": "25", "¾": "75", "⅛": "125", "⅜": "375", "⅝": "625", "⅞": "875", "⅕": "2", "⅖": "4",
           "⅗": "6", "⅘": "8", "⅓": "3333333", "⅔": "6666667"}
_VULGAR_AFTER = re.compile(rf"(?:(?P<whole>\d+)[ \t]?)?(?P<part>[{''.join(_VULGAR)}])")


def _vulgar(match: re.Match[str]) -> str:
    return f"{match.group('whole') or '0'}.{_VULGAR[match.group('part')]}"


def without_struck(text: str) -> str:
    """Text struck through in markdown dropped: 'Answer: ~~£3,012~~ £2,997' answers £2,997 (the letter reader reads
    a struck letter itself: '~~B~~ C?' leaves two letters)."""
    return re.sub(r"~~[^~\n]+~~", " ", text)


# pleasantries a chat model closes on ('Hope this helps!', 'Let me know if you have other questions.'): the
# concluding sentence is the one before them
_CLOSER = (r"(?:(?:I\s+)?hope\s+(?:this|that|it)\s+helps|let\s+me\s+know\b|feel\s+free\b|good\s+luck\b|"
           r"(?:happy|glad)\s+to\s+help\b)[^\n.!?\d]*[.!?]*[ \t]*(?:[\U0001F300-\U0001FAFF\u2600-\u27BF][ \t]*)*")
_CLOSERS = re.compile(rf"(?:(?:^|(?<=[.!?\n]))\s*{_CLOSER})+\s*\Z", re.I)


def no_break_spaces(text: str) -> str:
    """A no-break, narrow or thin space is a space, except between digits, where it groups thousands
    ('1\u202f234,56', '$266\u00a0million')."""
    return re.sub(r"(?<!\d)[\u00a0\u202f\u2009\u2007]|[\u00a0\u202f\u2009\u2007](?!\d)", " ", text)


def clean(text: str | None) -> str:
    """The answer part of a response as plain text: one line end, no-break spaces as spaces (between digits they
    group thousands), reasoning blocks, closing pleasantries and a quote around the whole reply dropped, full-width
    characters as their ASCII forms, vulgar fractions as decimals, LaTeX and markup unwrapped, a multiple's sign
    ('10.88×') as 'x'."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")  # Windows and old Mac line ends
    text = split_thinking(no_break_spaces(text))[0].translate(_FULL_WIDTH)
    text = _CLOSERS.sub("", text)
    if text.strip() and all(line.lstrip().startswith(">") for line in text.splitlines() if line.strip()):
        text = re.sub(r"(?m)^[ \t]*>[ \t]?", "", text)  # a reply quoted as a whole ('> ' on every line)
    if not text.isascii():
        text = _VULGAR_AFTER.sub(_vulgar, text)
    text = _unwrap_latex(text)
    text = re.sub(r"</?(?:b|strong|em|i|u|p|br|span|div)\b[^>]*>", " ", text, flags=re.I)
    text = text.replace("**", "").replace("__", "").replace("·", "×").replace("⋅", "×")
    return re.sub(r"(?<=\d)×(?![ \t]*[\d(])", "x", text)  # a multiple, '10.88×', as '10.88x'; '2 × 3' stays


_HEADINGS = re.compile(r"(?m)^[ \t]*#+[ \t][^\n]*$")


def without_headings(text: str) -> str:
    """The text without its markdown headings ('## Solution'): what is left says something, or nothing."""
    return _HEADINGS.sub("", text)


@functools.lru_cache(maxsize=4096)
def _question_sentences(stem: str) -> tuple[str, ...]:
    """The whole question and its sentences of 30 characters or more, each with its words one space apart."""
    sentences = [s for s in re.split(r"(?<=[.?!:])\s+", stem.strip()) if len(s) >= 30]
    return tuple(flat for sentence in [stem, *sentences] if (flat := " ".join(sentence.split())))


def without_question(text: str, stem: str) -> str:
    """The text without the question's sentences copied word for word ('**Question.** A bond ... is closest to:'
    restated before the reply, or its inputs repeated after it), after a 'Question:' label or not, whatever the
    spaces and line ends between their words: they state the question's numbers, not the answer."""
    flat = " ".join(text.split())
    copied = [sentence for sentence in _question_sentences(stem) if sentence in flat]
    if not copied:  # most replies: no pattern to build
        return text
    patterns = [r"\s+".join(map(re.escape, sentence.split())) for sentence in copied]
    return re.sub(r"(?:(?i:question)[ \t]*[.:][ \t]*)?(?:" + "|".join(patterns) + ")", " ", text)
