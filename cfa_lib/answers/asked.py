"""The quantity a question asks for, and the statements of a response that commit a value to it.

A grader reads the sentence that answers the question ("The Macaulay duration is 2.83 years."), not the
last number printed: a modified duration, an operating profit, or "$4,000 more than the lump sum" that
follows is another quantity. `asked_quantity` names what the stem asks ("the bond's Macaulay duration is
closest to:" → Macaulay duration); `statements` finds the sentences whose subject is that quantity and
reads the value equated to it (`equated_value`): the number after the last `=` of its chain ("D = 1(0.0586)
+ 2(0.0542) + 3(0.8872) = 2.83"), a fraction as one number ("= 3/20"), nothing when the chain ends in an
expression ("FV = 75,000 × (1.0175)^24").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from cfa_lib.answers.commitment import apply_sign_words, is_aside, restates, sentence_spans
from cfa_lib.answers.final_number import Reading
from cfa_lib.answers.numbers import Found, scan_values

# the usual short names of measures a stem spells out
_TERMS = {
    "net present value": "NPV", "present value": "PV", "future value": "FV", "internal rate of return": "IRR",
    "weighted average cost of capital": "WACC", "earnings per share": "EPS", "yield to maturity": "YTM",
    "yield-to-maturity": "YTM", "effective annual rate": "EAR", "bond equivalent yield": "BEY",
    "holding period return": "HPR", "marginal revenue": "MR", "macaulay duration": "MacDur",
    "modified duration": "ModDur", "cost of goods sold": "COGS", "payment": "PMT", "cost of capital": None,
    "cost of equity": None,
    "cost of debt": None, "rate of return": None, "standard error": None, "standard deviation": None,
}  # fmt: skip
# words that qualify the asked quantity without telling two measures apart ("approximate modified duration")
_LOOSE = frozenset(
    "approximate approximately expected estimated estimate annual annualized current total appropriate implied "
    "resulting new final overall best likely most minimum maximum possible closest required".split()
)
# heads that name no measure on their own: "the value in six years of ...", "the number of months"
_GENERIC = frozenset("value amount number difference change result answer figure level sum total".split())
_CUT = (
    r"in|for|from|on|at|using|under|that|which|if|when|given|associated|earned|needed|reported|reflected|priced|"
    r"recorded|recognized|shown|calculated|computed|to|with|as|by|after|over|between|would|will|should|must|is|are|"
    r"excluding|including|today|now|currently|and|or|"
    r"was|were|be|can|could|did|does|do|has|have|had|it|they|he|she|we|you|closest|of|per"
)
_ASK_VERB = re.compile(
    r"(?i)^(?P<np>.+?)\s+(?:is|are|was|were|will\s+be|would\s+be|should\s+be|must\s+be)\s*(?:closest\s+to|"
    r"equal\s+to|most\s+likely|approximately|best\s+(?:estimated|described)\s+as|at\s+least)?\s*[:?]?\s*$"
)
# "Which of the following amounts is most likely the loss on the sale?": the noun after the verb is asked
_WHICH_IS = re.compile(
    r"(?i)\bwhich\s+of\s+the\s+following(?:\s+[a-z]+){0,2}\s+(?:is|are|would\s+be)\s+(?:most\s+likely\s+|closest\s+to\s+|"
    r"best\s+described\s+as\s+)?(?P<np>the\s+[^?:]+?)\s*[?:.]?\s*$"
)
_ASK_WHAT = re.compile(
    r"(?i)\b(?:what|how\s+much|how\s+many)\s+(?:is|are|was|were|will\s+be|would\s+be)?\s*(?P<np>.+)$"
)


@dataclass(frozen=True)
class Asked:
    """The asked quantity: its head noun, the modifiers that tell it from other measures, a short name."""

    head: str
    modifiers: tuple[str, ...] = ()
    acronym: str | None = None
    counted: bool = False  # "the number of months", "how many futures": stated as "555 months"

    @property
    def specific(self) -> bool:
        """Named precisely enough that another measure cannot pass for it ('Macaulay duration', 'NPV')."""
        return bool(self.modifiers) or self.acronym is not None or self.counted


def question_sentence(stem: str) -> str:
    """The sentence of the stem that asks (after 'Question:' in Challenge scenarios)."""
    question = " ".join(stem.rsplit("Question:", 1)[-1].split())  # a line break inside the question is a space
    return re.split(r"(?<=[.?!])\s*(?=[A-Za-z])(?<!\b[A-Z]\.)", question)[-1]


@functools.lru_cache(maxsize=2048)
def asked_quantity(stem: str) -> Asked | None:
    """'The bond's Macaulay duration is closest to:' → Asked('duration', ('macaulay',), 'MacDur'); None when
    the question names no measure ('the value in six years of ...', 'which of the following ...')."""
    return _quantity(asked_phrase(stem))


_MODIFIER_SEGMENT = re.compile(
    r"(?i)\s*(?:using|given|based|assuming|as|with|under|in|for|at|on|by|from|after|before|excluding|including)\b")
_SET_AT = re.compile(
    r"(?i)\b(?:set|charge|quote|fix)\s+(?:its|the|their|his|her)\s+(?P<np>[\w\s-]{3,40}?)\s+at\s*:?\s*$")


def asked_phrase(stem: str) -> str:
    """The noun phrase the question sentence asks about ('the maximum possible loss that White can have')."""
    sentence = re.sub(r"(\w)- (\w)", r"\1-\2", question_sentence(stem))  # "yield- to-maturity"
    verb = _ASK_VERB.match(sentence)
    if verb:  # "..., the present value of the perpetuity is:", "... if total revenue is at least:"
        segments = re.split(r"[,;](?!\d)\s*", verb.group("np"))
        # not a trailing participle or prepositional phrase: "the minimum cost of ..., using strike prices of $490"
        nouns = [s for s in segments if re.search(r"[A-Za-z]{3}", s) and not _MODIFIER_SEGMENT.match(s)]
        phrase = nouns[-1] if nouns else next((s for s in reversed(segments) if re.search(r"[A-Za-z]{3}", s)), "")
        phrase = re.split(r"(?i)\b(?:if|when|whether|unless|because|once)\b", phrase)[-1]
    elif _SET_AT.search(sentence):  # "The company will most likely set its price at:"
        phrase = _SET_AT.search(sentence).group("np")
    elif which := _WHICH_IS.search(sentence):
        phrase = which.group("np")
    else:  # "what is the probability that ...", "how many unique covariance terms, excluding variances, ..."
        what = _ASK_WHAT.search(sentence)
        phrase = re.split(r"[,;(]", what.group("np"))[0] if what else ""
        if what and re.match(r"(?i)how\s+many", what.group()):
            phrase = f"number of {phrase}"
    return phrase


def _quantity(phrase: str) -> Asked | None:
    """The measure a noun phrase names: a known term ('net present value', with the words before it), or
    the words before the first preposition or verb ('the euro index futures are needed ...')."""
    words = [m.group().lower() for m in re.finditer(r"(?<![\w-])[A-Za-z][\w-]*", phrase)
             if not re.match(r"['’]", phrase[m.end() : m.end() + 1])]  # "Denali's", "the Garcias'"
    text = " ".join(w for w in words if len(w) > 1 and w not in ("the", "an", "its", "this", "their"))
    counted = re.match(r"number of ([a-z-]+(?: [a-z-]+){0,2}?)(?: (?:" + _CUT + r")\b|$)", text)
    if counted:
        return Asked(counted.group(1).split()[-1], counted=True)
    first_cut = re.search(rf"\b(?:{_CUT})\b", text)
    for term, acronym in _TERMS.items():
        found = re.search(rf"\b{re.escape(term)}\b", text)
        if found and (first_cut is None or found.start() <= first_cut.start()):
            before = [w for w in text[: found.start()].split() if w not in _LOOSE][-2:]
            *modifiers, head = term.replace("-", " ").split()
            return Asked(head, tuple(before + [m for m in modifiers if m not in ("of", "to", "per")]), acronym)
    kept = [w for w in text[: first_cut.start() if first_cut else len(text)].split() if w not in _LOOSE][-4:]
    if not kept or (kept[-1] in _GENERIC and len(kept) == 1):
        return None
    acronym = kept[0].upper() if len(kept) == 1 and kept[0].upper() in _TERMS.values() else None
    return Asked(kept[-1], tuple(kept[:-1]), acronym)


# a word after the head that carries the noun phrase on: "the convexity adjustment" is not the convexity
_NOUN_AFTER = re.compile(
    r"(?i)-[A-Za-z]|[ \t]+(?!(?:is|are|was|were|be|been|of|for|in|at|on|per|to|from|with|under|using|after|before|by|"
    r"equals?|comes?|works?|would|will|should|must|can|could|falls?|drops?|rises?|declines?|increases?|"
    r"reach(?:es)?|totals?|amounts?|and|or|but|so|then|thus|which|that|as|approximately|about|roughly|"
    r"around|nearly|close|today|now|here|becomes?|stands?|gives?|yields?|"
    # a participle opening a reduced relative clause: 'cash paid for salaries', 'the months needed to double'
    r"paid|received|needed|required|owed|earned|generated|used|invested|spent|collected|raised|borrowed|"
    r"deposited|withdrawn|saved|lent)\b)[A-Za-z]{2,}"
)


def mentions(asked: Asked, text: str) -> list[re.Match[str]]:
    """Where `text` names the asked quantity: its head with every modifier in the four words before it
    ('the bond's Macaulay duration', 'ApproxConvexity'), its last modifier standing alone ('Breakeven = ...'),
    or its short name ('NPV', 'MacDur'); never the first words of a longer noun ('the convexity adjustment')."""
    named, alone, short = _mention_patterns(asked)
    found = [m for m in named.finditer(text) if all(re.search(rf"\b{re.escape(w)}", m.group().lower())
                                                     for w in asked.modifiers)]
    found += [m for m in (alone.finditer(text) if alone else ())
              if not re.search(r"\b(?!(?:the|a|an|its|this)\b)[A-Za-z][\w'’-]*\s+$", text[: m.start()], re.I)]
    found += short.finditer(text) if short else ()
    return sorted((m for m in found if not _NOUN_AFTER.match(text, m.end())), key=lambda m: m.start())


@functools.lru_cache(maxsize=256)
def _mention_patterns(asked: Asked) -> tuple[re.Pattern[str], re.Pattern[str] | None, re.Pattern[str] | None]:
    head = re.escape(asked.head[:-1]) + r"\w{0,3}" if len(asked.head) > 4 else re.escape(asked.head)
    start = r"(?:\b|(?-i:(?<=[a-z])(?=[A-Z])))"  # "ApproxConvexity"
    named = re.compile(rf"(?i){start}(?:[\w'’-]+[\s/-]+){{0,4}}?(?P<head>{head})\b")
    alone = re.compile(rf"(?i)\b(?P<head>{re.escape(asked.modifiers[-1])})\b") if asked.modifiers else None
    short = re.compile(rf"\b(?P<head>{re.escape(asked.acronym)})(?![A-Za-z])") if asked.acronym else None
    return named, alone, short


# from the mention to its value: "is", "=", "of", "falls to"; the value right after a verb ("must deposit $64,341")
# a cue that equates what precedes it with the value right after it: "is", "=", ":", "|" (a table), "falls to";
# "of" and "at" only right after the mention ("a duration of 2.62", "priced at 98.11", not "instead of 200 units")
_CUE = re.compile(
    r"(?i)(?:[=≈≅:|]|^\s*(?:on\s+(?:the\s+)?[a-z]+\s+)?(?:of|at)\b|\b(?:is|are|was|were|equals?|comes\s+(?:out\s+)?to|works\s+out\s+to|be|(?:falls?|drops?|"
    r"rises?|declines?|increases?|climbs?|amounts?)\s+to|reach(?:es)?|totals?)\b)[\s*]*(?:(?:approximately|about|"
    r"roughly|around|nearly|close\s+to|then|only|just|equal\s+to|therefore|thus|hence)\s+)*"
    r"(?=(?:[A-Z]{3}\s?)?[$€£¥(+-]?\s?\d|\()"
)
_AS_VERB = re.compile(r"(?i)\b(?:must|should|will|would|to|can)\s+$")
_CLAUSE_END = re.compile(
    r"(?i)[;!?]|\.(?:\s|$)|,\s+(?=[A-Za-z])|\s[–—]\s|\s(?:and|but|so|which|while|whereas)\s|\s\((?=[a-z]{3})"
)


def equated_value(text: str) -> Found | None:
    """The value after the last `=`/`≈` of the chain that opens `text` (its first number when it has no
    `=`): the chain runs on through operators and `=` and ends at the first number followed by anything
    else ('$1,000,000 leaves $500,000 ...' ends at $1,000,000); None when it ends in an expression."""
    end = _CLAUSE_END.search(text)
    chain = text[: end.start()] if end else text
    found = scan_values(chain)
    last = next((f for f in found if not _CONTINUES.match(chain, f.end)), None)
    if last is None or _QUALIFIED.match(chain, last.end):
        return None
    chain = chain[: last.end]
    last_equal = max(chain.rfind("="), chain.rfind("≈"), chain.rfind("≅"))
    after = [f for f in found if last_equal < f.start and f.end <= last.end]
    if len(after) != 1 or re.search(r"[×*/÷+^(]", chain[last_equal + 1 : after[0].start]):
        return None
    return None if _operand(chain, after[0]) or _LABELLED_TERM.match(text, after[0].end) else after[0]


# what follows a number inside an equation chain: an operator, '=', a closing bracket, an opening one
_CONTINUES = re.compile(r"[)\]}²³¹⁰⁴-⁹%]*[(\[]|[\s)\]}²³¹⁰⁴-⁹%]*(?:[×*/÷+^=≈≅−-]|[(\[]\s*[-\d(\[]|\d)")
# a value stated for a case only: "0.2592 for exactly four", "$94.36 at 10%", "2.62 if ..."
_QUALIFIED = re.compile(r"(?i)\s*(?:%\s*)?(?:for|at|under|if|when|assuming|with|using)\b")


# a term named after its number: '= $20 million expense + $2 million reduction ...'
_LABELLED_TERM = re.compile(r"(?:[ \t]+[A-Za-z][\w'’-]*){1,3}[ \t]+[+×][ \t]")


def _operand(text: str, found: Found) -> bool:
    """The number stands next to an operator: a term of an expression, not its value."""
    after = re.match(r"\s*(?:[×*/÷+^(]|-\s*\d)", text[found.end :])
    return bool(after or re.search(r"[×*/÷+^]\s*$", text[: found.start]))


def _counted_value(asked: Asked, clause: str) -> Found | None:
    """'about 555 months', 'buy 263 Euro index futures': the last number followed by the counted noun."""
    head = re.escape(asked.head[:-1]) + r"\w{0,3}"
    found = [f for f in scan_values(clause) if not _operand(clause, f)
             and re.match(rf"(?i)\s*(?:[\w-]+\s+){{0,2}}?{head}\b", clause[f.end :])]
    return found[-1] if found else None


_METHOD_LEAD = re.compile(
    r"(?i)^[\s>*#\-•]*(?:dividing|multiplying|discounting|summing|adding|rounding|rounded)\b[^:.;]*:\s*")

_RESTATED = re.compile(r"(?i)^[\s>*#\-•]*(?:that\s+is|in\s+other\s+words|equivalently)\b,?\s*")


def statements(body: str, asked: Asked | None, stem: str = "") -> list[Reading]:
    """Every clause, in order, whose subject is the asked quantity and which equates a value to it; asides
    ('If ...', 'For comparison ...', '... would be') and the quantity inside a formula ('= MacDur / 1.08')
    are not statements."""
    if asked is None:
        return []
    out: list[Reading] = []
    body = re.sub(r"\n(?=\s*[=≈])|\n(?=\s*\n\s*[=≈])", " ", body)  # an equation continued on the next line
    for at, sentence in sentence_spans(body):
        if is_aside(sentence, stem):
            # "Dividing by par (100): Macaulay duration ≈ 2.68 years.": the method, then the statement;
            # "That is about 555 months": a count restated in the unit the question asks for
            method = _METHOD_LEAD.match(sentence) or (_RESTATED.match(sentence) if asked.counted else None)
            if method is None or is_aside(sentence[method.end() :], stem):
                continue
            at, sentence = at + method.end(), sentence[method.end() :]
        for clause_at, clause in _clauses(sentence):
            if re.search(r"(?i)\b(?:would|could|if)\b", clause):
                continue
            found = _counted_value(asked, clause) if asked.counted else _stated_value(asked, clause, stem)
            if found is not None:
                number = apply_sign_words(clause, found)
                out.append(Reading(number, clause, found, at + clause_at))
    return out


def _stated_value(asked: Asked, clause: str, stem: str) -> Found | None:
    """'<the asked quantity> is|=|of <value>': the value of the first mention that is a subject, read at
    the first cue whose value does not restate the stem ('the rate of return from t = 0 to t = 1 is ...')."""
    for mention in mentions(asked, clause):
        if re.search(r"[=≈×*/+]", clause[: mention.start()]):
            continue
        window = re.split(r"[.;](?:\s|$)", clause[mention.end() : mention.end() + 90])[0]
        cues = [c.end() for c in _CUE.finditer(window)]
        if _AS_VERB.search(clause[: mention.start("head")]):  # "must deposit $64,341"
            cues.insert(0, len(window) - len(window.lstrip()))
        for cue in cues:
            value_at = mention.end() + cue
            found = equated_value(clause[value_at:])
            if found is not None:
                found = Found(found.number, found.start + value_at, found.end + value_at)
                if not restates(stem, clause, found):
                    return found
            elif "=" in window[:cue]:
                break  # past the first '=' of its chain the mention is no longer the subject
    return None


# what a quantity is said to be when it is no number: "White's maximum possible loss is unlimited"
_WORD_VALUE = re.compile(
    r"(?i)^\s*(?:is|are|was|were|becomes?|(?:would|will)\s+be|[:=])\s*(?:therefore\s+|thus\s+|then\s+|effectively\s+|"
    r"theoretically\s+|potentially\s+|in\s+principle\s+)?(?:unlimited|infinite|unbounded|uncapped|limitless|"
    r"undefined|indeterminate|not\s+(?:limited|capped|bounded|defined|determinable))\b"
)


def worded(body: str, asked: Asked | None, stem: str = "") -> int | None:
    """Where the last clause stands that gives the asked quantity a value in words ('the maximum possible loss
    is unlimited'), with no number after it in the clause; None when there is none."""
    return _last_mention(body, asked, stem, lambda clause, end: bool(
        _WORD_VALUE.match(clause[end:]) and not re.search(r"\d", clause[end:])))


# '... its price per 100 of par is above 100', 'the intrinsic value comes out well below the undiscounted total', 'the
# average terminal stock price will end up slightly above the current $111.00 price': a comparison, not a value
_WORD_COMPARISON = re.compile(
    r"(?i)[^.;:=\n]{0,30}?\b(?:is|are|was|were|comes?\s+out|ends?\s+up|lies|sits|stays|(?:will|would|must|should)"
    r"(?:\s+(?:be|end\s+up|come\s+out|trade|lie|sit|stay))?)\s+(?:[a-z-]+\s+){0,3}?(?:above|below|under|over|beneath"
    r"|(?:more|less|greater|higher|lower|smaller|larger)\s+than|at\s+a\s+(?:premium|discount))\b"
    r"(?P<rest>[^.;\n]*)"
)
# '... above par at $106.38', '... just above it — around 10.5%': the comparison goes on to state a value
_STATES_VALUE = re.compile(r"(?i)(?:\bat|\bof|\babout|\baround|\bapprox\w*\.?|\broughly|\bnearly|\bclose\s+to|[:=,—–]"
                           r"|i\.e\.)[\s~≈]*[-+$€£¥]?\d")


def compared_in_words(body: str, asked: Asked | None, stem: str = "") -> int | None:
    """Where the last clause stands that only compares the asked quantity with something ('its price per 100 of par
    is above 100'): a bound in words, with no value stated after the comparison; None when there is none."""
    def compares(clause: str, end: int) -> bool:
        compared = _WORD_COMPARISON.match(clause, end)
        return bool(compared) and not _STATES_VALUE.search(compared["rest"])
    return _last_mention(body, asked, stem, compares)


def _last_mention(body: str, asked: Asked | None, stem: str, says: Callable[[str, int], bool]) -> int | None:
    """Where the last mention of the asked quantity stands (outside asides) after which its clause `says` something
    (given the clause and where the mention ends); None when there is none."""
    if asked is None:
        return None
    last = None
    for at, sentence in sentence_spans(body):
        if is_aside(sentence, stem):
            continue
        for clause_at, clause in _clauses(sentence):
            for mention in mentions(asked, clause):
                if says(clause, mention.end()):
                    last = at + clause_at + mention.start()
    return last


def _clauses(sentence: str) -> list[tuple[int, str]]:
    """A sentence cut at ';' and at ', and' / ', so': one statement each."""
    cuts = [0] + [m.end() for m in re.finditer(r";\s*|,\s+(?:and|so|then|while)\s+", sentence)]
    return [(start, sentence[start:end]) for start, end in zip(cuts, cuts[1:] + [len(sentence)], strict=True)]


# 'zero', 'none', 'unlimited': a value in words, which a question may write too
_VALUE_WORD = re.compile(r"(?i)\b(?:zero|nil|none|nothing|half|one|two|three|four|five|six|seven|eight|nine|ten|"
                         r"hundred|thousand|million|billion|unlimited|infinite|unbounded)\b")
_LABEL_FILLER = frozenset("the a an answer answers is are final result so thus therefore it this that value".split())


def names_only_the_question(line: str, stem: str) -> bool:
    """An answer line with no number whose every word is the question's own or a label's ('FINAL ANSWER: The
    required rate of return', 'Answer: The answer is'): it names what is asked and answers nothing."""
    if re.search(r"\d", line) or _VALUE_WORD.search(line):
        return False
    stem_words = {w.lower() for w in re.findall(r"[^\W\d_]+", stem)}
    return all(w.lower() in _LABEL_FILLER or w.lower() in stem_words for w in re.findall(r"[^\W\d_]+", line))
