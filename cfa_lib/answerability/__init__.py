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
`python -m cfa_lib.answerability write`; a test checks the files equal what this package produces.

Modules: `rules` (the named rules, `apply_rules`), `reviewed` (the reviewed exceptions, `classify`), `shipped`
(the shipped files, `is_open_answerable`, counts), `__main__` (the command line).
"""

from cfa_lib.answerability.reviewed import EXCEPTIONS_FILE, classify, load_exceptions
from cfa_lib.answerability.rules import RULE_NAMES, RULES, Answerability, Rule, apply_rules
from cfa_lib.answerability.shipped import (
    answerability_table,
    counts,
    is_open_answerable,
    shipped_lines,
    shipped_path,
    write_shipped,
)

__all__ = [
    "EXCEPTIONS_FILE",
    "RULES",
    "RULE_NAMES",
    "Answerability",
    "Rule",
    "answerability_table",
    "apply_rules",
    "classify",
    "counts",
    "is_open_answerable",
    "load_exceptions",
    "shipped_lines",
    "shipped_path",
    "write_shipped",
]
