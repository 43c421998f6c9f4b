"""The named rules that decide, from a question's text alone, whether it can be asked without its options.

`apply_rules` tries `RULES` in order; the first that applies decides, with a one-line reason. A rule that
points at the options gives way when the candidates are in the stem (`candidates_in_stem`) or the options
are numbers computed from the stem's data (`computed_value`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cfa_lib.data import Question


@dataclass(frozen=True)
class Answerability:
    """The verdict for one question: can its stem alone be asked as an open question?"""

    question_id: str
    open_answerable: bool
    reason: str
    rule: str


@dataclass(frozen=True)
class Rule:
    """A named rule: `test(question)` returns a reason when the rule applies, else None."""

    name: str
    open_answerable: bool
    test: Callable[[Question], str | None]
    why: str


# Text helpers -----------------------------------------------------------------------------------------

def question_part(question: Question) -> str:
    """The question itself: for CFA-Challenge the text after 'Question:', else the whole stem."""
    parts = re.split(r"\bQuestion\s*:", question.stem)
    return parts[-1].strip()


def _norm(text: str) -> str:
    text = text.lower().replace("’", "'").replace("–", "-").replace("—", "-")
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"^(?:the|a|an)\s+", "", text).rstrip(".;, ")


# Options that are names of candidates defined elsewhere ("Portfolio 2", "Statement 3", "Fund C").
_LABEL_NOUNS = (
    r"portfolio|fund|bond|stock|share|market|allocation|strategy|company|firm|security|option|project|"
    r"investment|manager|analyst|country|index|statement|scenario|action|asset|plan|proposal|method|model|"
    r"case|client|alternative|item|account|issuer|loan|contract|trader|broker|sector|tranche|class|choice|"
    r"approach|policy|structure|exhibit|equation|regression|test|candidate|mandate|benchmark|comment|"
    r"recommendation|hedge|swap|position|trade|transaction|period|year|quarter"
)
_LABEL_REF = re.compile(rf"\b(?:{_LABEL_NOUNS})s?\s+(?:[A-Z]|\d{{1,2}}|[IVX]{{1,4}})\b", re.I)
_LABEL_ONLY = re.compile(
    rf"^(?:the\s+)?(?:[A-Z][\w&'-]*\s+){{0,2}}(?:{_LABEL_NOUNS})\s+(?:[A-Z]|\d{{1,2}}|[IVX]{{1,4}})\.?$", re.I
)
_CATCH_ALL = re.compile(r"\b(?:both|neither|none|same|all|either)\b", re.I)


def _choice_in_stem(choice: str, stem_norm: str) -> bool:
    """The choice text, or every candidate label it names, appears in the stem."""
    text = _norm(choice)
    if len(text) >= 2 and text in stem_norm:
        return True
    labels = _LABEL_REF.findall(choice)
    return bool(labels) and all(_norm(label) in stem_norm for label in labels)


def candidates_recoverable(question: Question) -> bool:
    """Every option (or the candidate it names) is already in the stem; one catch-all option is allowed."""
    stem_norm = _norm(question.stem)
    missing = [c for c in question.choices.values() if not _choice_in_stem(c, stem_norm)]
    if not missing:
        return True
    return len(missing) == 1 and len(question.choices) >= 3 and bool(_CATCH_ALL.search(missing[0]))


def _stem_rule(name: str, pattern: str, reason: str, why: str) -> Rule:
    """A rule that applies when the question part of the stem matches `pattern` (case-insensitive); its reason
    quotes what the stem says ({!r} in `reason`). Stem rules mark a question option-dependent."""
    search = re.compile(pattern, re.I).search

    def test(q: Question) -> str | None:
        m = search(question_part(q))
        return reason.format(m.group(0).strip()) if m else None

    return Rule(name, False, test, why)


def _rule(name: str, open_answerable: bool, test: Callable[[Question], str | None]) -> Rule:
    """A rule whose test is a function; its docstring says why the rule holds."""
    return Rule(name, open_answerable, test, (test.__doc__ or "").strip())


# The rules with a test of their own ---------------------------------------------------------------------

_CROSS_REF = re.compile(
    r"\b(?:all|none|any) of the above\b|\bboth [A-C] and [A-C]\b|\bneither [A-C] nor [A-C]\b|^[A-C] and [A-C]\.?$",
    re.I).search


def _options_cross_reference(q: Question) -> str | None:
    """An option points at other options ('all of the above', 'both A and B'): meaningless without them."""
    for letter, text in q.choices.items():
        if _CROSS_REF(text):
            return f"option {letter} ({text!r}) refers to the other options"
    return None


_VERDICT = re.compile(r"\b(?:yes|no|correct|incorrect|accurate|inaccurate|true|false|violat\w*)\b", re.I)


def _options_verdict_grid(q: Question) -> str | None:
    """Every option is a grid of verdicts ('X: Yes; Y: No'): the items being judged are named only there."""
    if all(len(_VERDICT.findall(text)) >= 2 and re.search(r"[;:,]", text) for text in q.choices.values()):
        return "each option is a grid of verdicts on items that the stem does not list"
    return None


_THE_FOLLOWING = re.compile(
    r"\b(?:all|each|any|none|one|most|many) of the following\b|\bthe following (?:statements?|is|are|would|will|"
    r"best|most|least|correctly|accurately|describes?|explains?|represents?|activities|items|factors|"
    r"characteristics|reasons|conditions|pieces)\b|\bfollowing statements?\b", re.I).search


def _the_following(q: Question) -> str | None:
    """'All of the following ... except', 'the following statements ...' point at a list that was the options."""
    part = question_part(q)
    m = _THE_FOLLOWING(part)
    if not m:
        return None
    rest = part[m.end() :]
    # "... the following information: <data> ... is closest to:" resolves the reference inside the stem.
    if re.search(r"[:?]\s*\S.{40,}", rest):
        return None
    return f"the stem refers to {m.group(0)!r}, a list that only the options supply"


def _options_name_candidates(q: Question) -> str | None:
    """Options that are only labels ('Portfolio 2', 'Fund C'): the question is about objects defined in the options."""
    if all(_LABEL_ONLY.match(text.strip()) for text in q.choices.values()):
        return "the options are labels of candidates that the stem does not define"
    return None


_BARE_SUBJECT = re.compile(
    r"^(?:(?:an?|the)\s+)?[\w’'()/-]+(?:\s+[\w’'()/-]+){0,4}(?:\s+(?:is|are|was|were))?\s*:$", re.I
)


def _bare_subject_fragment(q: Question) -> str | None:
    """A stem that only names a topic ('A swap is:', 'Corporate governance:') is completed by whichever option holds."""
    last = question_part(q).strip()  # the whole stem: after a scenario, "This agreement is a:" is a real question
    if _BARE_SUBJECT.match(last) and not re.search(r"\b(?:closest|equal|calculated|computed|value)\b", last, re.I):
        return f"the stem {last!r} names a topic, not a question; the options say what is asked"
    return None


_CLOSEST = re.compile(r"\b(?:closest to|approximately|nearest to)\s*:?\s*[?.]?\s*$", re.I).search


def _closest_to(q: Question) -> str | None:
    """'... is closest to:' asks for a number, a perfectly good open question."""
    return "a computed value ('closest to:'), answerable openly" if _CLOSEST(question_part(q)) else None


_NUMBER = re.compile(r"[-+−–]?[$€£¥]?\s?\d[\d,]*(?:\.\d+)?\s?(?:%|bps|million|billion|years?|times|x)?")
_NUMERIC_OPTION = re.compile(rf"^(?:{_NUMBER.pattern})\.?$", re.I)


def computed_value(question: Question) -> bool:
    """Every option is a number and the stem gives numbers: 'which of the following amounts is X' asks for X."""
    return all(_NUMERIC_OPTION.match(t.strip()) for t in question.choices.values()) and (
        len(_NUMBER.findall(question_part(question))) >= 2
    )


def _open_question(q: Question) -> str | None:
    """No rule found a reference to the options: the stem is a question on its own."""
    return "the stem is a complete question without the options"


# The rules, in the order they are tried -------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    _rule("options_cross_reference", False, _options_cross_reference),
    _stem_rule("compared_with_others",
               r"\b(?:compared (?:with|to)|relative to|than) the other (?:two|three|options|choices|alternatives)\b|"
               r"\bthe other two\b",
               "the stem compares against the other options ({!r})",
               "'Compared with the other two ...' ranks the options against each other."),
    _rule("options_verdict_grid", False, _options_verdict_grid),
    _stem_rule("which_of_the_following",
               r"\bwhich (?:one |two )?of (?:the following|these|those)\b|\bof the following\b.*\bwhich\b",
               "the stem asks {!r} and the options are not in the stem",
               "'Which of the following ...' / 'Which of these ...' asks to pick among options that are not shown."),
    _rule("the_following", False, _the_following),
    _stem_rule("which_statement",
               r"\bwhich (?:(?:of )?(?:the |these |those |his |her |their |[\w.]+[’']s? )?)?(?:\w+ )?statements?\b|"
               r"\bthe statement that is (?:most|least) (?:accurate|correct|likely|appropriate)\b|"
               r"\bthe (?:most|least) (?:accurate|correct|appropriate) statement\b",
               "the stem asks {!r} and the statements are the options",
               "'Which statement is most accurate?' asks to pick a statement, and the statements were the options."),
    _stem_rule("least_or_except",
               r"(?<!\bat )\bleast\s+(?:likely|appropriate|accurate|correct|suitable|relevant|consistent|affected|"
               r"important|useful|probable|valid|effective|supported|plausible|beneficial|desirable|justified|"
               r"reasonable|needed|required|helpful|significant)\b|\bexcept(?: for)?\s*:\s*$|"
               r"\bis (?:NOT|not) (?:a|an|one|true|correct)\b|\bis false\b|\bdo(?:es)? not include\b",
               "the stem asks for the odd one out ({!r})",
               "'... least likely ...', '... except:', '... do not include' ask for the odd one out of an open set."),
    _rule("options_name_candidates", False, _options_name_candidates),
    _stem_rule("correct_with_respect_to",
               r"\b(?:correct|incorrect|accurate|inaccurate|right|wrong)\s+(?:with respect to|regarding|about|"
               r"concerning|in (?:his|her|their|the) (?:statement|assessment|comment|conclusion)s?"
               r"(?: about| regarding| on)?)\s*:\s*$",
               "the stem asks which sub-claim is {!r}, and the sub-claims are the options",
               "'... is most likely correct with respect to:' asks which of the options' sub-claims holds."),
    _rule("bare_subject_fragment", False, _bare_subject_fragment),
    _rule("closest_to", True, _closest_to),
    _rule("open_question", True, _open_question),
)
# Rules that mark a question option-dependent, unless its candidates are in the stem.
_REFERENCING_RULES = (
    "which_of_the_following",
    "the_following",
    "which_statement",
    "least_or_except",
    "options_name_candidates",
)
CANDIDATES_IN_STEM = "candidates_in_stem"
COMPUTED_VALUE = "computed_value"
EXCEPTION = "exception"
RULE_NAMES: tuple[str, ...] = (*(r.name for r in RULES), CANDIDATES_IN_STEM, COMPUTED_VALUE, EXCEPTION)


def apply_rules(question: Question) -> Answerability:
    """The verdict of the rules alone (no exceptions): the first rule that applies decides."""
    for rule in RULES:
        reason = rule.test(question)
        if reason is None:
            continue
        overruled = _overruled(question) if rule.name in _REFERENCING_RULES else None
        if overruled is not None:
            why, name = overruled
            return Answerability(question.id, True, f"{reason.split(' and the ')[0]}, but {why}", name)
        return Answerability(question.id, rule.open_answerable, reason, rule.name)
    raise AssertionError("the last rule always applies")  # pragma: no cover


def _overruled(question: Question) -> tuple[str, str] | None:
    """Why a rule that points at the options does not hold here (and the rule that says so), or None."""
    if computed_value(question):
        return "the options are numbers computed from data in the stem", COMPUTED_VALUE
    if candidates_recoverable(question):
        return "every candidate is named in the stem", CANDIDATES_IN_STEM
    return None
