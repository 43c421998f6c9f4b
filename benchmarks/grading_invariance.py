"""How often a grading decision changes when a response is rewritten in a way that changes nothing a grader reads.

Every row of the hand-labelled corpora is graded as written and again after each rewrite below (Windows line ends,
no-break spaces, a closing pleasantry, the answer line in another common form or language, the question restated
before the reply or its numbers after it, the reply repeated in a reasoning block, ...). A careful grader gives both
the same verdict; each change the reader makes is counted, split into changes to or from `judge` or `truncated`
(a deferral: a judge call more or less) and changes of a decided verdict, letter or value (one of the two is
wrong).

    PYTHONPATH=. .venv/bin/python benchmarks/grading_invariance.py [CORPUS_DIR ...]
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks.grading import DEFAULT_CORPORA, corpus_question, corpus_rows
from cfa_lib.answers import grade_choice, grade_open_answer

_ANSWER = re.compile(r"(?m)^ANSWER: ([ABC])\s*$")
_FINAL = "FINAL ANSWER:"
_FINAL_VALUE = re.compile(r"(?m)^FINAL ANSWER: *(\S[^\n]*?) *$")


def _when(found: bool, text: str) -> str | None:
    return text if found else None


_STEM_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?%?")


def _stem_numbers(stem: str) -> str | None:
    """The question's own numbers, listed as a reply that restates its inputs after the answer would."""
    numbers = _STEM_NUMBER.findall(stem)
    return ", ".join(numbers) if numbers else None


def _final_as(form: str | Callable[[re.Match[str]], str], text: str) -> str | None:
    """The text with its 'FINAL ANSWER: v' line in another form, or None when it has no such line."""
    return _when(bool(_FINAL_VALUE.search(text)), _FINAL_VALUE.sub(form, text))


# name: rewrite of a text (None when it does not apply to it)
TEXT_REWRITES: dict[str, Callable[[str], str | None]] = {
    "Windows line ends": lambda t: t.replace("\n", "\r\n"),
    "no-break spaces": lambda t: t.replace(" ", "\u00a0"),
    "narrow no-break spaces": lambda t: t.replace(" ", "\u202f"),
    "a closing pleasantry": lambda t: t.rstrip() + "\n\nHope this helps! Let me know if you have other questions.",
    "trailing spaces on every line": lambda t: t.replace("\n", "  \n"),
    "curly apostrophes": lambda t: _when("'" in t, t.replace("'", "\u2019")),
    "an ellipsis character": lambda t: _when("..." in t, t.replace("...", "\u2026")),
    "two spaces after a sentence": lambda t: re.sub(r"([.!?]) (?=[A-Z])", r"\1  ", t),
    "'final answer:' in lower case": lambda t: _when(_FINAL in t, t.replace(_FINAL, "final answer:")),
    "'### Final Answer' as a heading": lambda t: _when(_FINAL in t, t.replace(_FINAL, "### Final Answer\n")),
    "'**Final answer:** v'": lambda t: _when(_FINAL in t, t.replace(_FINAL, "**Final answer:**")),
    "'Endgültige Antwort:'": lambda t: _when(_FINAL in t, t.replace(_FINAL, "Endgültige Antwort:")),
    "'Réponse finale :'": lambda t: _when(_FINAL in t, t.replace(_FINAL, "Réponse finale :")),
    "'### Answer' as a heading": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r"### Answer\n\n**\1**", t)),
    "'The answer is **(X)**.'": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r"The answer is **(\1)**.", t)),
    "'Final answer: X'": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r"Final answer: \1", t)),
    "a heading first": lambda t: "## Solution\n\n" + t,
    "'FINAL ANSWER: $\\boxed{v}$'": lambda t: _final_as(r"FINAL ANSWER: $\\boxed{\1}$", t),
    "'**FINAL ANSWER: v**'": lambda t: _final_as(r"**FINAL ANSWER: \1**", t),
    "the answer line as JSON": lambda t: _final_as(
        lambda m: "```json\n" + json.dumps({"final_answer": m.group(1)}, ensure_ascii=False) + "\n```", t),
    "'\\boxed{X}'": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r"$\\boxed{\1}$", t)),
    "'Option X is correct.'": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r"Option \1 is correct.", t)),
    "'{\"answer\": \"X\"}'": lambda t: _when(bool(_ANSWER.search(t)), _ANSWER.sub(r'{"answer": "\1"}', t)),
    "every line quoted ('> ')": lambda t: "\n".join("> " + line for line in t.split("\n")),
}


def _on_text(rewrite: Callable[[str], str | None]) -> Callable[[str, str, bool], str | None]:
    return lambda text, stem, cut: rewrite(text)


def _inputs_listed_last(text: str, stem: str, cut: bool) -> str | None:
    numbers = _stem_numbers(stem)
    return None if cut or numbers is None else f"{text.rstrip()}\n\n(Inputs from the question: {numbers}.)"


# name: rewrite of (a text, the question's stem, cut by the token limit)
REWRITES: dict[str, Callable[[str, str, bool], str | None]] = {
    **{name: _on_text(rewrite) for name, rewrite in TEXT_REWRITES.items()},
    "the question restated first": lambda t, stem, cut: f"**Question.** {stem}\n\n{t}",
    "the question's numbers listed last": _inputs_listed_last,
    "a think block repeating the reply": lambda t, stem, cut: _when(not cut, f"<think>\n{t}\n</think>\n\n{t}"),
}


def main(corpora: list[Path]) -> None:
    changed: Counter[tuple[str, str]] = Counter()
    applied: Counter[str] = Counter()
    for corpus in corpora:
        for kind, row in corpus_rows(corpus):
            question = corpus_question(row)
            grade = grade_open_answer if kind == "open" else grade_choice
            text = row["response"] or ""
            before = grade(question, text, row["finish_reason"])
            for name, rewrite in REWRITES.items():
                rewritten = rewrite(text, question.stem, row["finish_reason"] == "length")
                if rewritten is None or rewritten == text:
                    continue
                applied[name] += 1
                after = grade(question, rewritten, row["finish_reason"])
                if (after.verdict, after.letter, after.value) == (before.verdict, before.letter, before.value):
                    continue
                deferral = bool({"judge", "truncated"} & {before.verdict, after.verdict})
                changed[(name, "deferral or truncation" if deferral else "decided verdict or value")] += 1
    print(f"{'rewrite':34} {'rows':>6} {'to/from judge':>14} {'decided changed':>16}")
    for name in REWRITES:
        print(f"{name:34} {applied[name]:>6} {changed[(name, 'deferral or truncation')]:>14} "
              f"{changed[(name, 'decided verdict or value')]:>16}")


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or DEFAULT_CORPORA)
