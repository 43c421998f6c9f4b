"""Blind labelling in JupyterLab: one item at a time, each label saved at once, the verdict shown after.

`ReviewSession` is the state machine (testable without a browser): it opens the review file (or writes
a new sample), shows the first item this reviewer has not labelled, takes a verdict from the allowed
ones ("cannot_tell" included), rewrites the file atomically with it, and only then reveals what the
toolkit decided and which path decided it. Reopening the file resumes where the reviewer stopped;
other reviewers' rows are kept as they are. `ReviewWidget` is the thin ipywidgets view over it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib.experiments.loading import LoadedRun
from cfa_lib.review import spreadsheet
from cfa_lib.review.items import VERDICTS, ReviewItem, review_items
from cfa_lib.review.sample import DEFAULT_SEED, DEFAULT_SIZE, stratified_sample


@dataclass(frozen=True)
class Revealed:
    """What the toolkit decided on the item just labelled, shown only after the reviewer's verdict."""

    item_id: str
    yours: str
    toolkit: str
    path: str

    @property
    def agree(self) -> bool:
        return self.yours == self.toolkit


class ReviewSession:
    """One reviewer's pass over a review file: show, label (saved at once), reveal, next."""

    def __init__(self, run: LoadedRun, path: Path | str, reviewer: str, n: int = DEFAULT_SIZE,
                 seed: int = DEFAULT_SEED) -> None:
        if not reviewer.strip():
            raise ValueError("reviewer='' is not valid: give the reviewer's name, so several can be scored.")
        self.run, self.path, self.reviewer = run, Path(path), reviewer.strip()
        self.items: dict[str, ReviewItem] = {item.item_id: item for item in review_items(run)}
        if not self.path.exists():
            spreadsheet.export(stratified_sample(list(self.items.values()), n, seed), self.path)
        self.rows = [row for _, row in spreadsheet.read_rows(self.path)]
        spreadsheet.read_labels(self.path, self.items)  # every row must fit before anything is added
        self._claim_rows()
        self.revealed: Revealed | None = None
        self.position = self._next_open(0)

    def _claim_rows(self) -> None:
        """This reviewer's rows: blank ones are claimed; items labelled only by others are added for them."""
        mine = {row["item_id"] for row in self.rows if row.get("reviewer", "").strip() == self.reviewer}
        for row in self.rows:
            if not row.get("reviewer", "").strip() and row["item_id"] not in mine:
                row["reviewer"] = self.reviewer
                mine.add(row["item_id"])
        order = list(dict.fromkeys(row["item_id"] for row in self.rows))
        for item_id in order:
            if item_id not in mine:
                self.rows.append(spreadsheet.export_row(self.items[item_id], self.reviewer))
                mine.add(item_id)
        self.mine = [row for row in self.rows if row.get("reviewer", "").strip() == self.reviewer]

    def _next_open(self, start: int) -> int:
        for i in range(start, len(self.mine)):
            if not self.mine[i]["verdict"].strip():
                return i
        return len(self.mine)

    @property
    def done(self) -> bool:
        return self.position >= len(self.mine)

    @property
    def progress(self) -> tuple[int, int]:
        """(labelled, total) for this reviewer."""
        return sum(bool(row["verdict"].strip()) for row in self.mine), len(self.mine)

    @property
    def current(self) -> ReviewItem | None:
        return None if self.done else self.items[self.mine[self.position]["item_id"]]

    def shown(self) -> dict[str, str]:
        """What the reviewer sees of the current item: never the toolkit's verdict before answering."""
        item = self.current
        if item is None:
            return {}
        return {"item_id": item.item_id, "question": item.question, "correct_option": item.correct_option,
                "response": item.response, "response_stored": spreadsheet.STORED[item.response_whole],
                "allowed": " | ".join(VERDICTS[item.kind])}

    def label(self, verdict: str, note: str = "") -> Revealed:
        """Record the reviewer's verdict on the current item, save the file, and reveal the toolkit's."""
        item = self.current
        if item is None:
            raise ValueError("every item of this review is labelled: nothing to label.")
        if self.revealed is not None and self.revealed.item_id == item.item_id:
            raise ValueError(f"{item.item_id} is labelled already: call next() first.")
        if verdict not in VERDICTS[item.kind]:
            raise ValueError(f"verdict={verdict!r} is not valid for {item.item_id}: "
                             f"accepted values are {', '.join(VERDICTS[item.kind])}.")
        row = self.mine[self.position]
        row["verdict"], row["note"] = verdict, note
        spreadsheet.write_review(self.rows, self.path)
        self.revealed = Revealed(item.item_id, verdict, item.verdict, item.path)
        return self.revealed

    def next(self) -> ReviewItem | None:
        """Move on to the next item this reviewer has not labelled."""
        self.revealed = None
        self.position = self._next_open(self.position + 1 if not self.done else self.position)
        return self.current


def _block(title: str, text: str) -> str:
    return (f"<div style='margin:4px 0'><b>{html.escape(title)}</b><pre style='white-space:pre-wrap;"
            f"max-height:22em;overflow:auto;background:#f6f6f6;padding:6px'>{html.escape(text)}</pre></div>")


class ReviewWidget:
    """The ipywidgets view: the item, a button per verdict (or its number typed, then Enter; "n" for the next
    item), a note, the reveal, and Next."""

    def __init__(self, session: ReviewSession) -> None:
        import ipywidgets as w

        self.session, self.w = session, w
        self.header, self.body, self.result = w.HTML(), w.HTML(), w.HTML()
        self.note = w.Text(placeholder="note (optional)", layout=w.Layout(width="60%"))
        self.keys = w.Text(placeholder="or type the verdict's number and press Enter", continuous_update=False,
                           layout=w.Layout(width="60%"))
        self.keys.observe(self._typed, names="value")
        self.buttons = w.HBox()
        self.next_button = w.Button(description="Next item", disabled=True)
        self.next_button.on_click(lambda _: self._next())
        self.view = w.VBox([self.header, self.body, self.buttons, self.keys, self.note, self.result,
                            self.next_button])
        self._render()

    def _header(self) -> None:
        done, total = self.session.progress
        self.header.value = (f"<h4>Blind review by {html.escape(self.session.reviewer)}: {done} of {total} "
                             "labelled</h4>")

    def _render(self) -> None:
        s, w = self.session, self.w
        self._header()
        shown = s.shown()
        if not shown:
            self.body.value, self.buttons.children = "<p>Every item is labelled. Score the file.</p>", ()
            self.next_button.disabled = True
            return
        self.body.value = (f"<p><code>{html.escape(shown['item_id'])}</code> (response "
                           f"{html.escape(shown['response_stored'])})</p>" + _block("Question", shown["question"])
                           + _block("Key", shown["correct_option"]) + _block("Response", shown["response"]))
        buttons = []
        for number, verdict in enumerate(shown["allowed"].split(" | "), start=1):
            button = w.Button(description=f"{number} {verdict.replace('_', ' ')}", button_style="info")
            button.on_click(lambda _, v=verdict: self._label(v))
            buttons.append(button)
        self.buttons.children = tuple(buttons)
        self.result.value, self.note.value, self.next_button.disabled = "", "", True

    def _typed(self, change: dict) -> None:
        """A verdict by its number (1, 2, 3...) typed and entered; anything else is ignored."""
        typed = str(change["new"]).strip()
        if not typed:
            return
        self.keys.value = ""
        allowed = self.session.shown().get("allowed", "").split(" | ")
        if typed.isdigit() and 1 <= int(typed) <= len(allowed) and self.session.revealed is None:
            self._label(allowed[int(typed) - 1])
        elif typed.lower() in ("n", "next") and self.session.revealed is not None:
            self._next()

    def _label(self, verdict: str) -> None:
        revealed = self.session.label(verdict, self.note.value)
        self._header()
        for button in self.buttons.children:
            button.disabled = True
        mark = "agrees with" if revealed.agree else "differs from"
        self.result.value = (f"<p>Saved. Your verdict <b>{html.escape(revealed.yours)}</b> {mark} the toolkit's "
                             f"<b>{html.escape(revealed.toolkit)}</b> (decided by {html.escape(revealed.path)}).</p>")
        self.next_button.disabled = False

    def _next(self) -> None:
        self.session.next()
        self._render()

    def _ipython_display_(self) -> Any:
        from IPython.display import display

        return display(self.view)


def review_widget(run: LoadedRun, path: Path | str, reviewer: str, **sample: Any) -> ReviewWidget:
    """`review_widget(load_results(path), "review.csv", "Ada")` in a notebook cell: label one item at a time."""
    return ReviewWidget(ReviewSession(run, path, reviewer, **sample))
