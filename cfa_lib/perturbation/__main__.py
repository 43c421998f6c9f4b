"""`python -m cfa_lib.perturbation verify --dataset easy|challenge [--json]`: check every shipped template.

Prints the coverage (questions, templated, verified, failed), the census of the rest (no number, not
computational, computational without a template, by reason) and every failure with its reason; the exit
code is 1 when a shipped template fails, so CI can refuse a templates file that does not hold.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from cfa_lib.data import DATASET_NAMES
from cfa_lib.perturbation.census import dataset_census
from cfa_lib.perturbation.templates import TemplateError, templates_dir


def _print_table(report: dict[str, Any], directory: str) -> None:
    header = ("dataset", "questions", "no number", "not computational", "computational", "templated", "verified",
              "failed")
    row = (report["dataset"], report["questions"], report["no_number"], report["not_computational"],
           report["computational"], report["templated"], report["verified"], len(report["failed"]))
    widths = [max(len(str(h)), len(str(v))) for h, v in zip(header, row, strict=True)]
    print(f"templates: {directory}")
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)))
    for reason, n in sorted(report["without_template"].items(), key=lambda item: -item[1]):
        print(f"without a template: {n:>3}  {reason}")
    if report["unreviewed"]:
        print(f"unreviewed (a number but in no census file): {', '.join(report['unreviewed'])}")
    for failure in report["failed"]:
        print(f"FAILED {failure['question_id']}: {failure['reason']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cfa_lib.perturbation", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="check every template of a dataset and print the coverage")
    verify.add_argument("--dataset", required=True, choices=DATASET_NAMES)
    verify.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    verify.add_argument("--templates-dir", default=None, help="folder of <dataset>.jsonl (default: $CFA_TEMPLATES_DIR)")
    args = parser.parse_args(argv)
    directory = args.templates_dir or str(templates_dir())
    try:
        report = dataset_census(args.dataset, directory)
    except TemplateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        _print_table(report, directory)
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
