"""The items explorer's table: every item of a run with its prompt, response, verdict and deciding path; two
runs side by side where they disagree; model text escaped. The browser test is in test_book.py."""

from __future__ import annotations

from cfa_lib.experiments.registry import load_results
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report import explorer

# the study's runs as graded against the dataset's keys (the audited keys: tests/test_key_audit.py)
GPT4O_MINI = load_results(REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json", keys="original")
GPT5_MINI = load_results(REFERENCE_DIR / "A5_option_bias_gpt-5-mini.json", keys="original")


def test_every_item_of_a_run_with_what_decided_it():
    items = explorer.items([GPT4O_MINI])
    assert len(items) == 2 * 1032 and list(items.columns) == explorer.COLUMNS
    assert items["verdict"].value_counts().to_dict() == {"correct": 1681, "incorrect": 375, "no_answer": 8}
    assert items["decided by"].value_counts().to_dict() == {"letter reader": 1032, "judge": 883, "numbers": 141,
                                                           "refusal rule": 8}
    a, b = items[items["question"] == "easy_9"].to_dict("records")
    assert (a["condition"], a["verdict"], a["value read"]) == ("Format A (options)", "correct", "C")
    assert a["prompt"].endswith("C: 8.0% compounded semiannually.")  # with its options
    assert (b["condition"], b["verdict"], b["decided by"]) == ("Format B (no options)", "incorrect", "numbers")
    assert b["prompt"].endswith("closest to:") and b["response"].startswith("To find the stated annual interest")


def test_two_runs_side_by_side_where_they_disagree():
    both = explorer.disagreements(GPT4O_MINI, GPT5_MINI)
    assert len(both) == 344 and both["condition"].value_counts().to_dict() == {"Format B (no options)": 200,
                                                                               "Format A (options)": 144}
    first = both.iloc[0]
    assert (first["question"], first["verdict (1)"], first["verdict (2)"]) == ("easy_3", "incorrect", "correct")


def test_model_text_is_escaped_in_the_interactive_table():
    frame = explorer.items([GPT4O_MINI]).head(2).assign(response="<script>window.x = 1</script>")
    html = explorer.show(frame).data
    assert "&lt;script&gt;window.x = 1&lt;/script&gt;" in html and "<script>window.x" not in html
    assert 'src="http' not in html and "from 'https:" not in html  # DataTables is embedded, never fetched


def _shown_by(anchor: str, items) -> int:
    """How many rows of `items` a count's link keeps: its filters applied as DataTables applies them (a regular
    expression per column, on the cell's text)."""
    import html as html_module
    import json
    import re

    filters = json.loads(html_module.unescape(re.search(r'data-filter="([^"]*)"', anchor)[1]))
    keep = items.index == items.index
    for index, pattern in filters.items():
        keep &= items[explorer.COLUMNS[int(index)]].astype(str).map(lambda cell, p=pattern: bool(re.search(p, cell)))
    return int(keep.sum())


def test_each_count_links_to_the_rows_it_counts():
    """#34: a count in a table filters the explorer to its items: the tally by condition and verdict, and option
    bias's paired outcomes (the biased questions: both answers of each of the 150)."""
    import re

    from cfa_lib.report import notebook_tables

    items = explorer.items([GPT4O_MINI])
    tally = explorer.count_table(items).data
    anchors = re.findall(r"<a class=\"items-filter\".*?</a>", tally)
    counts = [int(re.search(r">(\d+)</a>", a)[1]) for a in anchors]
    assert counts == [852, 180, 1032, 829, 195, 8, 1032]  # Format A: correct, incorrect, all; Format B: ... no_answer
    assert [_shown_by(a, items) for a in anchors] == counts

    pairs = notebook_tables.option_bias_pairs(GPT4O_MINI)
    assert pairs.map(len).to_numpy().tolist() == [[702, 150], [127, 53]]  # the summary's contingency
    biased = explorer.linked_questions(pairs).data
    anchor = re.findall(r"<a class=\"items-filter\".*?</a>", biased)[1]
    assert ">150</a>" in anchor and _shown_by(anchor, items) == 300
    assert explorer.link(0, verdict="correct") == "0"  # nothing to show: no link
