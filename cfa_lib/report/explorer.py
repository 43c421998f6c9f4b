"""The items explorer: every item of a run, one row per question and condition, one click away.

Each row is an item of `items_frame` with what a referee asks for next to the verdict: the prompt as the
model saw it (the question with or without its options, or the generated item), the whole response as the
results file stores it, the value read, the verdict or why the item is excluded, the path that decided it
and the grader's or judge's reason. `show` draws it as an interactive table (DataTables through itables, its
JavaScript embedded in the page, so the built book needs no network): a search box over every column, a
filter per column (verdict, path, format or level, model), sorting and paging. `disagreements` puts two runs
side by side where their verdicts on the same item differ. Model text is data, escaped, never markup.

A count in a table links to the rows it counts: `link` writes an anchor that, clicked, sets the explorer's
column filters (exact values, as regular expressions) and scrolls to it. `count_table` (or `show(...,
counts=True)`) is a run's items counted by condition and verdict, each count so linked; `linked_questions` shows
a table of question sets (option bias's paired outcomes) as linked counts.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd
from IPython.display import HTML

from cfa_lib.data import Question, questions_by_id
from cfa_lib.experiments.contract import FORMAT_A, FORMAT_B, ORIGINAL, PERTURBED
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.report.items_frame import RunLike, items_frame
from cfa_lib.report.runs import Run

COLUMNS = ["model", "question", "condition", "verdict", "decided by", "value read", "reason", "prompt", "response"]
KEY = ["question", "condition"]  # an item of a run
EXPLORER_CLASS = "items-explorer"  # the table a count's link filters (the first on the page)
ANCHOR = "#every-item"  # the explorer's section ("## Every item" in every experiment notebook)
# The count of rows on top, always (itables drops its default controls from a table that fits on one page).
LAYOUT = {"topStart": "info", "topEnd": "search", "bottomStart": "pageLength", "bottomEnd": "paging"}


def _prompt(question: Question | None, condition: str, item: str | None) -> str:
    """What the model was asked: the generated item, the question with its options, or without them."""
    if condition == PERTURBED:
        return item or ""
    if question is None:
        return ""
    return question.mcq_text() if condition in (FORMAT_A, ORIGINAL) else question.open_text()


def _condition(row: pd.Series) -> str:
    if row["condition"] == PERTURBED:
        return f"perturbed, level {row['perturbation_level']}"
    return {FORMAT_A: "Format A (options)", FORMAT_B: "Format B (no options)"}.get(row["condition"],
                                                                                  row["condition"])


def _verdict(row: pd.Series) -> str:
    """The status in the one outcome vocabulary, with the exclusion's reason; an invalid item was never asked."""
    if pd.isna(row["status"]):
        return "not asked (invalid item)"
    return f"excluded: {row['excluded']}" if row["status"] == "excluded" else str(row["status"])


def items(runs: RunLike | Iterable[RunLike]) -> pd.DataFrame:
    """One row per run × question × condition, with the prompt and the whole response (`COLUMNS`)."""
    frame = items_frame(runs)
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    questions = {dataset: questions_by_id(dataset) for dataset in frame["dataset"].unique()}
    return pd.DataFrame({
        "model": frame["run"],
        "question": frame["question_id"],
        "condition": frame.apply(_condition, axis=1),
        "verdict": frame.apply(_verdict, axis=1),
        "decided by": frame["decided_by"].fillna(""),
        "value read": frame["value"].map(lambda v: "" if v is None or v is pd.NA else str(v)),
        "reason": frame["reason"].fillna(""),
        "prompt": [_prompt(questions[d].get(q), c, i) for d, q, c, i in
                   zip(frame["dataset"], frame["question_id"], frame["condition"], frame["item"], strict=True)],
        "response": frame["response"].fillna(""),
    }, columns=COLUMNS)


def disagreements(first: RunLike, second: RunLike) -> pd.DataFrame:
    """The items two runs both counted and graded differently, side by side (their verdicts and responses)."""
    def counted(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[~frame["verdict"].str.startswith(("excluded", "not asked"))]

    both = counted(items(first)).merge(counted(items(second)), on=KEY, suffixes=(" (1)", " (2)"))
    differ = both[both["verdict (1)"] != both["verdict (2)"]]
    columns = [*KEY, *(f"{name} ({side})" for side in (1, 2) for name in ("model", "verdict", "value read",
                                                                           "response"))]
    return differ[columns].reset_index(drop=True)


def first_two_disagree(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Where the first two option-bias runs of the book (`collect_all`'s {experiment: runs}; re-graded, not as
    published) grade the same item differently; empty with fewer than two runs."""
    shown = [run for run in runs.get(OPTION_BIAS.name, []) if not run.as_published][:2]
    return disagreements(*shown) if len(shown) == 2 else pd.DataFrame(columns=KEY)


def show(frame: pd.DataFrame, caption: str | None = None, counts: bool = False) -> HTML:
    """The interactive table: search, a filter under each column, sorting, 10 rows a page; its JavaScript is
    embedded (offline), and the cells are escaped text. Every row is kept (no downsampling). `counts`: the items
    of `items(...)` counted by condition and verdict above it, each count a link to its rows."""
    from itables import to_html_datatable

    table = to_html_datatable(frame, caption=caption, connected=False, allow_html=False, maxBytes=0,
                              showIndex=False, column_filters="footer", lengthMenu=[10, 25, 100],
                              classes=f"display compact {EXPLORER_CLASS}", layout=LAYOUT)
    tally = count_table(frame).data if counts else ""
    return HTML(tally + _datatables_code() + _FILTER_ON_CLICK + table)


# A click on a count's link (`link`) sets the explorer's column filters to the link's and clears the rest (the
# filter boxes show them, so a reader sees why rows are hidden and can clear them); the anchor then scrolls there.
_FILTER_ON_CLICK = f"""<script>
if (!window._cfaItemsFilter) {{
  window._cfaItemsFilter = true;
  document.addEventListener("click", (event) => {{
    const link = event.target.closest("a.items-filter");
    const table = link && window.$ ? window.$("table.{EXPLORER_CLASS}").first() : null;
    if (!table || !table.length) return;
    const filters = JSON.parse(link.dataset.filter);
    const api = table.DataTable();
    api.columns().every(function (index) {{
      const value = filters[String(index)] || "";
      this.search(value, {{regex: true, smart: false}});
      window.$("input", this.footer()).val(value);
    }});
    api.search("").draw();
  }});
}}
</script>
"""


def _pattern(values: Iterable[str]) -> str:
    """A regular expression matching exactly one of `values` (a cell's whole text)."""
    return "^(?:" + "|".join(re.sub(r"[.*+?^${}()|[\]\\/-]", r"\\\g<0>", str(v)) for v in values) + ")$"


def link(count: int, **columns: str | Sequence[str]) -> str:
    """`count` as a link that filters the page's items explorer to the rows whose `columns` (explorer column
    names, spaces as underscores: `decided_by`) take one of the given values; a zero count is plain text."""
    if not count:
        return str(count)
    filters = {}
    for name, values in columns.items():
        index = COLUMNS.index(name.replace("_", " "))
        filters[str(index)] = _pattern([values] if isinstance(values, str) else values)
    return (f'<a class="items-filter" href="{ANCHOR}" data-filter="{html.escape(json.dumps(filters))}" '
            f'title="show these {count} items below">{count}</a>')


def _html_table(frame: pd.DataFrame, cells: pd.DataFrame, kind: str) -> HTML:
    """`frame`'s layout (index and headers escaped) with `cells` (HTML) as its cells; `kind` names the table."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    index_name = html.escape(str(frame.index.name or ""))
    rows = "".join(f"<tr><th>{html.escape(str(i))}</th>" + "".join(f"<td>{cell}</td>" for cell in cells.loc[i])
                   + "</tr>" for i in frame.index)
    return HTML(f'<table class="dataframe {kind}"><thead><tr><th>{index_name}</th>{head}</tr></thead>'
                f"<tbody>{rows}</tbody></table>")


def count_table(frame: pd.DataFrame) -> HTML:
    """The items of `items(...)` counted by condition and verdict, each count a link to its rows (and the
    total of a condition to all of them)."""
    table = pd.crosstab(frame["condition"], frame["verdict"])
    order = ["correct", "partial", "incorrect", "no_answer"]  # the counted statuses, then why items are excluded
    table = table[[v for v in order if v in table] + sorted(v for v in table if v not in order)]
    table["all"] = table.sum(axis=1)
    cells = pd.DataFrame({verdict: [link(int(table.loc[condition, verdict]), condition=condition,
                                         **({} if verdict == "all" else {"verdict": verdict}))
                                    for condition in table.index] for verdict in table.columns},
                         index=table.index)
    return _html_table(table, cells, "items-counts")


def linked_questions(sets: pd.DataFrame) -> HTML:
    """A table whose cells are sets of question ids, shown as their counts, each a link to those questions'
    rows (every condition of each question)."""
    cells = sets.map(lambda ids: link(len(ids), question=sorted(ids)))
    return _html_table(sets, cells, "items-pairs")


@functools.cache
def _datatables_code() -> str:
    """DataTables' JavaScript and CSS for an offline page (about 1 MB), read once per process."""
    from itables.javascript import generate_init_offline_itables_html
    from itables.options import dt_bundle

    return generate_init_offline_itables_html(dt_bundle)
