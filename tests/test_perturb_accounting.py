"""Every number of a template accounted for, validity domains, usability, the item dump and the review rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfa_lib.data import questions_by_id
from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.perturbation import load_templates
from cfa_lib.perturbation.__main__ import main
from cfa_lib.perturbation.census import read_reasons
from cfa_lib.perturbation.number_text import find_numbers
from cfa_lib.perturbation.review import read_review, reviewed_rate
from cfa_lib.perturbation.templates import Template, TemplateError, verify_template
from cfa_lib.stats import wilson_interval


@pytest.fixture(scope="module")
def easy():
    return questions_by_id("easy"), load_templates("easy")


def _check(easy, question_id, **changes):
    questions, templates = easy
    changed = Template.model_validate(templates[question_id].model_dump() | changes)
    return verify_template(questions[question_id], changed)


def test_an_unclassified_number_fails_verify_by_name(easy):
    """easy_7's 'five years' is the annuity's term, a literal of the formula: fixed, with a reason."""
    assert _check(easy, "easy_7").ok
    check = _check(easy, "easy_7", fixed=[])
    assert (check.ok, check.check) == (False, "numbers_accounted")
    assert check.reason.startswith("number 'five' in the stem (…stment pays €300 annually for [five] years, with "
                                   "the fir…) is not accounted for: bind it to an input ('also'), derive it, or fix "
                                   "it with a reason")


def test_every_copy_of_an_input_must_state_its_value(easy):
    questions, templates = easy
    raw = templates["easy_58"].model_dump()
    raw["parameters"][0]["also"] = ["X < 6"]  # the upper bound's copy, bound to the lower bound
    check = verify_template(questions["easy_58"], Template.model_validate(raw))
    assert (check.check, check.reason) == (
        "values_match_spans", "'also' text 'X < 6' of parameter 'lo' states its value 3 0 times, not once")


def test_a_fixed_text_must_be_in_the_question(easy):
    fixed = [f.model_dump() for f in easy[1]["easy_7"].fixed] + [{"text": "seven years", "reason": "not there"}]
    check = _check(easy, "easy_7", fixed=fixed)
    assert check.reason == "fixed text 'seven years' is in neither the stem, the options nor the level-3 stem"


def test_a_level_3_stem_may_not_keep_a_copy_of_its_unknown(easy):
    """easy_90's resample count is written five times; removing one copy at level 3 leaves four."""
    level3 = {"unknown": "B", "edits": [
        {"old": "to create 200 resamples", "new": "to create resamples"},
        {"old": "The estimated standard error of the sample mean is closest to:",
         "new": "The estimated standard error of the sample mean is {answer}. The number of resamples is:"}]}
    questions, templates = easy
    raw = templates["easy_90"].model_dump() | {"level3": level3}
    check = verify_template(questions["easy_90"], Template.model_validate(raw))
    leak = "the level-3 stem still states the unknown 'B' ('200')"
    assert (check.check, check.reason) == ("numbers_accounted", "; ".join([leak] * 3) + " (and 1 more)")


def test_a_domain_the_original_values_break_fails_verify(easy):
    broken = _check(easy, "easy_489", domain=[{"condition": "lo > hi", "reason": "inverted"}])
    assert (broken.check, broken.reason) == ("domain", "the original values break the validity domain: lo > hi "
                                             "(inverted)")
    malformed = _check(easy, "easy_489", domain=[{"condition": "lo hi", "reason": "no comparison"}])
    assert (malformed.check, malformed.reason) == (
        "formula_parsed", "formula rejected: domain condition 'lo hi' needs exactly one of <, >, <=, >=")


def test_two_parameters_stating_one_number_cannot_move():
    """challenge_78: both Sharpe ratios are written 0.25, twice; neither may move alone. (The template is
    retired, its narrative contradicting its exhibit; its accounting still shows the rule: a fixture keeps it.)"""
    line = (Path(__file__).parent / "fixtures" / "challenge_78_retired_template.jsonl").read_text(encoding="utf-8")
    check = verify_template(questions_by_id("challenge")["challenge_78"], Template.model_validate_json(line))
    infos = check.verification.parameters
    assert (infos["sr20"].shared, infos["sr21"].shared, infos["s20"].shared) == (True, True, False)


def test_a_number_glued_to_a_currency_code_is_read():
    """easy_580's 'USD96.5 million': unread, its input could change while the reader saw no number there."""
    assert [(n.core, n.number) for n in find_numbers("USD96.5\xa0million and CHF500,000.")] == [
        ("96.5\xa0million", 96.5), ("500,000", 500000.0)]


def test_retired_templates_say_why():
    without = read_reasons(PROJECT_ROOT / "datasets" / "templates" / "easy_without_template.jsonl", categorised=True)
    assert {q: without[q]["category"] for q in ("easy_38", "easy_39", "easy_128", "easy_270", "easy_278",
                                                "easy_639")} == {
        "easy_38": "options", "easy_39": "no valid draw", "easy_128": "no valid draw", "easy_270": "statements",
        "easy_278": "statements", "easy_639": "no valid draw"}


NEVER_USABLE = {  # a625d2e's easy_39 with its count made changeable: 3 to 1 moves only to 2 or 4 to 1
    "question_id": "easy_39", "kind": "value",
    "parameters": [
        {"name": "a", "value": 3, "kind": "count", "span": "are 3", "description": "odds for", "derived_from": ""},
        {"name": "b", "value": 1, "kind": "other", "span": "to 1", "description": "odds against", "derived_from": ""}],
    "formula": "a/(a + b)", "asked_quantity": "probability", "unit": "",
    "fixed": [{"text": "six months", "reason": "elapsed time"}],
}


def test_verify_fails_a_template_that_never_gives_a_valid_item(tmp_path, capsys):
    (tmp_path / "easy.jsonl").write_text(json.dumps(NEVER_USABLE) + "\n", encoding="utf-8")
    assert main(["verify", "--dataset", "easy", "--templates-dir", str(tmp_path), "--seeds", "3", "--json"]) == 1
    usability = json.loads(capsys.readouterr().out)["usability"]
    assert (usability["usable"], usability["never_usable"], usability["valid_at_seed_0"]) == (
        0, ["easy_39"], {"1": 0, "2": 0, "3": 0})
    assert usability["per_template"]["easy_39"]["reasons"]["1"] == (
        "no draw in 60 moved the answer by the option gap (10.7%) with new values not already in the question")
    assert main(["verify", "--dataset", "easy", "--templates-dir", str(tmp_path), "--seeds", "3"]) == 1
    assert "NEVER USABLE easy_39: no valid item at seeds 0-2; fix or retire it" in capsys.readouterr().out


def test_items_are_dumped_without_their_keys(tmp_path, capsys):
    lines = [json.dumps(load_templates("easy")[q].model_dump(exclude_none=True)) for q in ("easy_7", "easy_58")]
    (tmp_path / "easy.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, keys = tmp_path / "items.jsonl", tmp_path / "keys.jsonl"
    assert main(["items", "--dataset", "easy", "--levels", "1", "3", "--seeds", "0", "1", "--out", str(out),
                 "--keys", str(keys), "--templates-dir", str(tmp_path)]) == 0
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    answers = [json.loads(line) for line in keys.read_text(encoding="utf-8").splitlines()]
    assert [(i["question_id"], i["level"], i["seed"]) for i in items] == [
        ("easy_7", 1, 0), ("easy_7", 3, 0), ("easy_58", 1, 0), ("easy_7", 1, 1), ("easy_7", 3, 1), ("easy_58", 1, 1)]
    assert all(set(item) == {"question_id", "dataset", "level", "seed", "stem", "choices"} for item in items)
    assert [(k["question_id"], k["level"], k["seed"]) for k in answers] == [
        (i["question_id"], i["level"], i["seed"]) for i in items]
    assert [k["answer"] for k in answers] == ["C", "C", "A", "C", "C", "A"]  # never the original key B (#32)
    assert f"6 items written to {out}, keys to {keys}" in capsys.readouterr().out


def _row(question_id, round_, verdict, seed=0):
    return json.dumps({"question_id": question_id, "dataset": "easy", "level": 1, "seed": seed, "round": round_,
                       "reviewer_answer": "A", "verdict": verdict, "reason": ""})


def test_the_review_rate_is_the_last_rounds_with_its_wilson_interval(tmp_path, capsys):
    rows = [_row("easy_7", 1, "defective"), _row("easy_7", 1, "defective", seed=1)]
    rows += [_row(f"easy_{i}", 2, "valid" if i >= 6 else "defective") for i in range(150)]
    rows += [_row("easy_0", 2, "valid")]  # reviewed again in the round: its last verdict counts, once
    path = tmp_path / "review.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    rate = reviewed_rate(read_review(path))
    low, high = wilson_interval(145, 150)
    assert rate == {"round": 2, "items": 150, "valid": 145, "defective": 5, "rate": 145 / 150, "ci_low": low,
                    "ci_high": high, "confidence": 0.95}
    assert main(["review", "--file", str(path)]) == 0
    assert capsys.readouterr().out == (f"round 2: 145 of 150 reviewed items valid, 96.7% (95% Wilson CI "
                                       f"{low:.1%} to {high:.1%})\n")
    path.write_text(_row("easy_7", 1, "fine") + "\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"review.jsonl:1: verdict 'fine' is not one of valid, defective"):
        read_review(path)
