"""What an experiment's notebook (and so its page of the book) says and shows, declared beside the experiment.

A `Page` is plain text: `cfa_lib.publishing.notebooks` turns it into the notebook's cells around what every
experiment notebook shares (the parameters every run takes, the imports, the run cell, the Human check),
so a new experiment gets its notebook, its book page and its place in `_toc.yml` from its declaration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Cell = tuple[Literal["markdown", "code"], str]


def md(text: str) -> Cell:
    """A narrative cell."""
    return "markdown", text


def code(text: str) -> Cell:
    """A cell of calls into cfa_lib (no logic of its own)."""
    return "code", text


@dataclass(frozen=True)
class Page:
    """The experiment's own text: its introduction (the title first), its own notebook parameters (one
    `name = default  # what it is` per line; those that are the experiment's options are passed to the run),
    what its cells import, a note under "Run", and its sections after the run; `blurb` is its line in the
    Results chapter."""

    intro: str
    blurb: str = ""
    parameters: str = ""
    imports: tuple[str, ...] = ()
    run_note: str = ""
    sections: tuple[Cell, ...] = ()

    def parameter_names(self) -> list[str]:
        """The names the parameter lines set, in order."""
        return re.findall(r"^(\w+)\s*=", self.parameters, re.M)
