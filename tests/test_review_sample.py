"""The review sample: seeded, stratified by path and verdict, every stratum present, order blind."""

from __future__ import annotations

from collections import Counter

import pytest

from cfa_lib.experiments.registry import load_results
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.review.items import review_items
from cfa_lib.review.sample import allocate, stratified_sample, stratum_sizes


@pytest.fixture(scope="module")
def option_bias_items():
    return review_items(load_results(REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json", keys="original"))


def test_items_of_the_study_file_keep_its_verdicts_and_paths(option_bias_items):
    by_id = {i.item_id: i for i in option_bias_items}
    # easy_0: the study's judge said CORRECT; easy_3: its numbers matched; easy_5: its numbers did not.
    assert (by_id["easy_0|B"].path, by_id["easy_0|B"].verdict) == ("judge", "correct")
    assert (by_id["easy_3|B"].path, by_id["easy_3|B"].verdict) == ("numbers", "correct")
    assert (by_id["easy_5|B"].path, by_id["easy_5|B"].verdict) == ("numbers", "incorrect")
    assert by_id["easy_0|B"].correct_option.startswith("C: ")
    assert not by_id["easy_0|B"].response_whole  # the study stored it cut


def test_sample_is_seeded_sized_and_covers_every_stratum(option_bias_items):
    first = stratified_sample(option_bias_items, 60, seed=3)
    again = stratified_sample(option_bias_items, 60, seed=3)
    other = stratified_sample(option_bias_items, 60, seed=4)
    assert [i.item_id for i in first] == [i.item_id for i in again]
    assert {i.item_id for i in first} != {i.item_id for i in other}
    assert len(first) == 60 == len({i.item_id for i in first})
    assert {i.stratum for i in first} == set(stratum_sizes(option_bias_items))


def test_allocation_gives_the_floor_then_proportions():
    sizes = {("judge", "correct"): 800, ("judge", "incorrect"): 150, ("numbers", "correct"): 48,
             ("heuristic", "no_answer"): 2}
    take = allocate(sizes, 20)
    assert sum(take.values()) == 20
    assert take[("heuristic", "no_answer")] == 2  # the rare stratum is present
    assert take[("judge", "correct")] > take[("judge", "incorrect")] > take[("numbers", "correct")]
    assert allocate(sizes, 5000) == sizes  # asking for more than there is takes everything


def test_order_of_the_sample_does_not_follow_the_strata(option_bias_items):
    sample = stratified_sample(option_bias_items, 60, seed=0)
    runs = sum(1 for a, b in zip(sample, sample[1:], strict=False) if a.stratum != b.stratum)
    assert runs > 20  # shuffled: strata alternate, they are not written in blocks
    assert Counter(i.path for i in sample)["numbers"] >= 2


def test_a_bad_size_is_refused(option_bias_items):
    with pytest.raises(ValueError, match="n=0"):
        stratified_sample(option_bias_items, 0)


def test_a_generated_item_of_our_run_is_keyed_by_level_and_seed(tmp_path):
    import json

    item = {"level": 2, "valid": True, "status": "valid", "question": "A bond pays 5% on $1,000. What is the coupon?",
            "choices": {"A": "$40", "B": "$50", "C": "$60"}, "correct_letter": "B", "source": "template",
            "model_answer": "B", "correct": True}
    broken = {**item, "level": 1, "valid": False, "status": "failed_rederive", "model_answer": None}
    row = {"question_id": "easy_3", "correct_answer": "C", "original": {"answer": "C", "correct": True},
           "perturbations": [item, broken]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"metadata": {"experiment": "counterfactual", "model": "m", "dataset": "easy",
                                             "perturbation_seed": 4, "prompt_version": "t"},
                                "summary": {}, "results": [row]}), encoding="utf-8")
    items = {i.item_id: i for i in review_items(load_results(path))}
    assert set(items) == {"easy_3|L2|s4", "easy_3|L1|s4"}
    valid = items["easy_3|L2|s4"]
    assert (valid.kind, valid.verdict, valid.path, valid.correct_option) == ("item", "valid", "template", "B: $50")
    assert valid.response.startswith("A bond pays 5%") and "C: $60" in valid.response and valid.response_whole
    assert items["easy_3|L1|s4"].verdict == "defective"
