"""`python -m cfa_lib.answerability write|counts|rules`: regenerate the shipped files, count them, or list the
rules."""

from __future__ import annotations

import json
import sys

from cfa_lib.answerability.rules import RULES
from cfa_lib.answerability.shipped import counts, write_shipped
from cfa_lib.data import DATASET_NAMES


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
