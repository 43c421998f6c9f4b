"""Which questions can be asked openly (Format B, choices removed) and which only make sense with their options.

About a quarter of CFA-Easy stems refer to the options ("Which of the following ...", "... all of the
following except:", "... is least likely to:"). With the choices removed such a stem is not a question,
and the open format would measure the model's refusal rather than its knowledge. `classify` labels every
question open-answerable or option-dependent by a short list of named rules (`RULES`, applied in order,
first match wins; each with a one-line reason), then applies a reviewed list of exceptions
(datasets/answerability/exceptions.jsonl) for the questions where the rules get it wrong.

A reference to the options is harmless when the candidates are in the stem itself: "Which of Pai's
statements is most appropriate?" after a scenario quoting Statements 1-3, or "For which portfolio ...?"
after an exhibit listing Portfolios 1-3. Such questions stay open-answerable (rule `candidates_in_stem`).
"... is closest to:" and other completions that a knowledgeable reader can supply are open-answerable.

The shipped classification is datasets/answerability/{easy,challenge}.jsonl, regenerated with
`python -m cfa_lib.answerability write`; a test checks the files equal what this module produces.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from cfa_lib.data import DATASET_NAMES, Question, dataset_of, load_dataset
from cfa_lib.paths import DATASETS_DIR

__all__ = [
    "ANSWERABILITY_DIR",
    "EXCEPTIONS_FILE",
    "RULES",
    "Answerability",
    "Rule",
    "answerability_table",
    "apply_rules",
    "classify",
    "counts",
    "load_exceptions",
    "shipped_path",
    "write_shipped",
]

ANSWERABILITY_DIR = DATASETS_DIR / "answerability"
EXCEPTIONS_FILE = ANSWERABILITY_DIR / "exceptions.jsonl"


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


# ---------------------------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------------------------


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


def _search(pattern: str, flags: int = re.I) -> Callable[[str], re.Match | None]:
    compiled = re.compile(pattern, flags)
    return compiled.search


def _stem_says(search: Callable[[str], re.Match | None], q: Question, reason: str) -> str | None:
    """A stem rule's reason, quoting what the stem says ({!r} in `reason`), or None when it says nothing of it."""
    m = search(question_part(q))
    return reason.format(m.group(0).strip()) if m else None


# ---------------------------------------------------------------------------------------------
# The rules, in the order they are tried
# ---------------------------------------------------------------------------------------------

_CROSS_REF = _search(
    r"\b(?:all|none|any) of the above\b|\bboth [A-C] and [A-C]\b|\bneither [A-C] nor [A-C]\b|^[A-C] and [A-C]\.?$"
)


def _options_cross_reference(q: Question) -> str | None:
    """An option points at other options ('all of the above', 'both A and B'): meaningless without them."""
    for letter, text in q.choices.items():
        if _CROSS_REF(text):
            return f"option {letter} ({text!r}) refers to the other options"
    return None


_COMPARED = _search(
    r"\b(?:compared (?:with|to)|relative to|than) the other (?:two|three|options|choices|alternatives)\b|"
    r"\bthe other two\b"
)


def _compared_with_others(q: Question) -> str | None:
    """'Compared with the other two ...' ranks the options against each other."""
    return _stem_says(_COMPARED, q, "the stem compares against the other options ({!r})")


_VERDICT = re.compile(r"\b(?:yes|no|correct|incorrect|accurate|inaccurate|true|false|violat\w*)\b", re.I)


def _options_verdict_grid(q: Question) -> str | None:
    """Every option is a grid of verdicts ('X: Yes; Y: No'): the items being judged are named only there."""
    if all(len(_VERDICT.findall(text)) >= 2 and re.search(r"[;:,]", text) for text in q.choices.values()):
        return "each option is a grid of verdicts on items that the stem does not list"
    return None


_WHICH_FOLLOWING = _search(r"\bwhich (?:one |two )?of (?:the following|these|those)\b|\bof the following\b.*\bwhich\b")


def _which_of_the_following(q: Question) -> str | None:
    """'Which of the following ...' / 'Which of these ...' asks to pick among options that are not shown."""
    return _stem_says(_WHICH_FOLLOWING, q, "the stem asks {!r} and the options are not in the stem")


_THE_FOLLOWING = _search(
    r"\b(?:all|each|any|none|one|most|many) of the following\b|\bthe following (?:statements?|is|are|would|will|"
    r"best|most|least|correctly|accurately|describes?|explains?|represents?|activities|items|factors|"
    r"characteristics|reasons|conditions|pieces)\b|\bfollowing statements?\b"
)


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


_WHICH_STATEMENT = _search(
    r"\bwhich (?:(?:of )?(?:the |these |those |his |her |their |[\w.]+[’']s? )?)?(?:\w+ )?statements?\b|"
    r"\bthe statement that is (?:most|least) (?:accurate|correct|likely|appropriate)\b|"
    r"\bthe (?:most|least) (?:accurate|correct|appropriate) statement\b"
)


def _which_statement(q: Question) -> str | None:
    """'Which statement is most accurate?' asks to pick a statement, and the statements were the options."""
    return _stem_says(_WHICH_STATEMENT, q, "the stem asks {!r} and the statements are the options")


_LEAST = _search(
    r"(?<!\bat )\bleast\s+(?:likely|appropriate|accurate|correct|suitable|relevant|consistent|affected|important|"
    r"useful|probable|valid|effective|supported|plausible|beneficial|desirable|justified|reasonable|needed|"
    r"required|helpful|significant)\b|\bexcept(?: for)?\s*:\s*$|\bis (?:NOT|not) (?:a|an|one|true|correct)\b|"
    r"\bis false\b|\bdo(?:es)? not include\b"
)


def _least_or_except(q: Question) -> str | None:
    """'... least likely ...', '... except:', '... do not include' ask for the odd one out of an open set."""
    return _stem_says(_LEAST, q, "the stem asks for the odd one out ({!r})")


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


_ABOUT_SUBCLAIMS = _search(
    r"\b(?:correct|incorrect|accurate|inaccurate|right|wrong)\s+(?:with respect to|regarding|about|concerning|"
    r"in (?:his|her|their|the) (?:statement|assessment|comment|conclusion)s?(?: about| regarding| on)?)\s*:\s*$"
)


def _correct_with_respect_to(q: Question) -> str | None:
    """'... is most likely correct with respect to:' asks which of the options' sub-claims holds."""
    return _stem_says(_ABOUT_SUBCLAIMS, q, "the stem asks which sub-claim is {!r}, and the sub-claims are the options")


_CLOSEST = _search(r"\b(?:closest to|approximately|nearest to)\s*:?\s*[?.]?\s*$")


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


# Rules that mark a question option-dependent, unless its candidates are in the stem.
_REFERENCING_RULES = (
    "which_of_the_following",
    "the_following",
    "which_statement",
    "least_or_except",
    "options_name_candidates",
)

RULES: tuple[Rule, ...] = tuple(
    Rule(name, answerable, test, (test.__doc__ or "").strip())
    for name, answerable, test in (
        ("options_cross_reference", False, _options_cross_reference),
        ("compared_with_others", False, _compared_with_others),
        ("options_verdict_grid", False, _options_verdict_grid),
        ("which_of_the_following", False, _which_of_the_following),
        ("the_following", False, _the_following),
        ("which_statement", False, _which_statement),
        ("least_or_except", False, _least_or_except),
        ("options_name_candidates", False, _options_name_candidates),
        ("correct_with_respect_to", False, _correct_with_respect_to),
        ("bare_subject_fragment", False, _bare_subject_fragment),
        ("closest_to", True, _closest_to),
        ("open_question", True, _open_question),
    )
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
        if rule.name in _REFERENCING_RULES and computed_value(question):
            return Answerability(
                question.id,
                True,
                f"{reason.split(' and the ')[0]}, but the options are numbers computed from data in the stem",
                COMPUTED_VALUE,
            )
        if rule.name in _REFERENCING_RULES and candidates_recoverable(question):
            return Answerability(
                question.id,
                True,
                f"{reason.split(' and the ')[0]}, but every candidate is named in the stem",
                CANDIDATES_IN_STEM,
            )
        return Answerability(question.id, rule.open_answerable, reason, rule.name)
    raise AssertionError("the last rule always applies")  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------------------------


def load_exceptions(path: Path | str | None = None) -> dict[str, Answerability]:
    """The reviewed overrides, by question id; raises ValueError on a malformed or duplicated line."""
    path = Path(path) if path is not None else EXCEPTIONS_FILE
    if path == EXCEPTIONS_FILE:
        return dict(_load_default_exceptions())
    return _read_exceptions(path)


@cache
def _load_default_exceptions() -> tuple[tuple[str, Answerability], ...]:
    return tuple(_read_exceptions(EXCEPTIONS_FILE).items())


def _read_exceptions(path: Path) -> dict[str, Answerability]:
    out: dict[str, Answerability] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON: {exc}") from None
        if set(row) != {"question_id", "open_answerable", "reason"}:
            raise ValueError(f"{where}: keys must be question_id, open_answerable, reason; got {sorted(row)}")
        qid, answerable, reason = row["question_id"], row["open_answerable"], row["reason"]
        if not isinstance(qid, str) or not re.fullmatch(r"(?:easy|challenge)_\d+", qid):
            raise ValueError(f"{where}: question_id {qid!r} is not a question id")
        if not isinstance(answerable, bool) or not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{where}: open_answerable must be true/false and reason a non-empty string")
        if qid in out:
            raise ValueError(f"{where}: {qid} is listed twice")
        out[qid] = Answerability(qid, answerable, reason.strip(), EXCEPTION)
    return out


def classify(question: Question, exceptions: Mapping[str, Answerability] | None = None) -> Answerability:
    """The rules' verdict, unless the reviewed exceptions (default: the shipped file) override it for this id."""
    exceptions = load_exceptions() if exceptions is None else exceptions
    override = exceptions.get(question.id)
    if override is not None:
        return override
    return apply_rules(question)


# ---------------------------------------------------------------------------------------------
# Tables, counts and the shipped files
# ---------------------------------------------------------------------------------------------


def _questions(dataset: str | Iterable[Question]) -> list[Question]:
    return load_dataset(dataset) if isinstance(dataset, str) else list(dataset)


def answerability_table(
    dataset: str | Iterable[Question], exceptions: Mapping[str, Answerability] | None = None
) -> dict[str, Answerability]:
    """Question id -> verdict for a dataset name ("easy", "challenge") or a list of questions."""
    exceptions = load_exceptions() if exceptions is None else exceptions
    return {q.id: classify(q, exceptions) for q in _questions(dataset)}


def counts(dataset: str | Iterable[Question], exceptions: Mapping[str, Answerability] | None = None) -> dict:
    """{"questions", "open_answerable", "option_dependent", "by_rule": {rule: n}} (rules in RULE_NAMES order)."""
    table = answerability_table(dataset, exceptions)
    answerable = sum(a.open_answerable for a in table.values())
    by_rule = Counter(a.rule for a in table.values())
    return {
        "questions": len(table),
        "open_answerable": answerable,
        "option_dependent": len(table) - answerable,
        "by_rule": {name: by_rule[name] for name in RULE_NAMES if by_rule[name]},
    }


def shipped_path(name: str) -> Path:
    return ANSWERABILITY_DIR / f"{name}.jsonl"


@functools.cache
def _shipped(name: str) -> dict[str, bool]:
    lines = shipped_path(name).read_text(encoding="utf-8").splitlines()
    return {item["question_id"]: bool(item["open_answerable"]) for item in map(json.loads, lines)}


def is_open_answerable(question_id: str) -> bool | None:
    """The shipped classification of a question (`easy_12`, `challenge_3`), or None for an unknown id:
    how rows of the original study's files, which never recorded it, are put in their subset."""
    dataset = dataset_of(question_id)
    return _shipped(dataset).get(question_id) if dataset else None


def shipped_lines(name: str) -> list[str]:
    """The lines of datasets/answerability/<name>.jsonl as this code produces them."""
    keys = ("question_id", "open_answerable", "rule", "reason")
    return [json.dumps({k: asdict(a)[k] for k in keys}, ensure_ascii=False) for a in answerability_table(name).values()]


def write_shipped() -> dict[str, dict]:
    """Regenerate datasets/answerability/{easy,challenge}.jsonl; returns the counts per dataset."""
    out = {}
    for name in DATASET_NAMES:
        shipped_path(name).write_text("\n".join(shipped_lines(name)) + "\n", encoding="utf-8")
        out[name] = counts(name)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["write"]:
        print(json.dumps(write_shipped(), indent=2))
        return 0
    if argv == ["counts"]:
        print(json.dumps({name: counts(name) for name in DATASET_NAMES}, indent=2))
        return 0
    if argv == ["rules"]:
        for rule in RULES:
            print(f"{rule.name} ({'answerable' if rule.open_answerable else 'option-dependent'}): {rule.why}")
        return 0
    print("usage: python -m cfa_lib.answerability write|counts|rules", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
