"""`python -m cfa_lib.perturbation verify|items|review`: check the shipped templates, dump items for review,
and rate the review.

* `verify --dataset easy|challenge [--json] [--seeds N]`: the coverage (questions, templated, verified,
  usable, failed), the census of the rest, every failure with its reason, and per template and level how
  many of seeds 0..N-1 (10 by default; 0 skips it) give a valid item. The exit code is 1 when a shipped
  template fails or is never usable, so CI can refuse a templates file that does not hold.
* `items --dataset easy --levels 1 2 3 --seeds 0 1 2 --out items.jsonl [--with-key] [--keys keys.jsonl]`:
  every valid generated item (question id, level, seed, stem, options) without its key, for a blind review.
* `review [--file datasets/templates/review.jsonl] [--json]`: the last round's validity rate and its
  Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from cfa_lib.checks import CommandLine
from cfa_lib.data import DATASET_NAMES
from cfa_lib.perturbation.census import dataset_census
from cfa_lib.perturbation.items import write_items
from cfa_lib.perturbation.review import read_review, review_path, reviewed_rate
from cfa_lib.perturbation.templates import TemplateError, templates_dir


def _print_table(report: dict[str, Any], directory: str) -> None:
    usability = report.get("usability")
    header = ("dataset", "questions", "no number", "not computational", "computational", "templated", "verified",
              "usable", "failed")
    row = (report["dataset"], report["questions"], report["no_number"], report["not_computational"],
           report["computational"], report["templated"], report["verified"],
           usability["usable"] if usability else "-", len(report["failed"]))
    widths = [max(len(str(h)), len(str(v))) for h, v in zip(header, row, strict=True)]
    print(f"templates: {directory}")
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)))
    for reason, n in sorted(report["without_template"].items(), key=lambda item: -item[1]):
        print(f"without a template: {n:>3}  {reason}")
    if report["unreviewed"]:
        print(f"unreviewed (a number but in no census file): {', '.join(report['unreviewed'])}")
    for question_id, reason in report.get("cannot_flip", {}).items():
        print(f"{question_id}: decision cannot flip: {reason}")
    if usability:
        _print_usability(usability, report["verified"])
    for failure in report["failed"]:
        print(f"FAILED {failure['question_id']}: {failure['reason']}")


def _print_usability(usability: dict[str, Any], verified: int) -> None:
    seeds = usability["seeds"]
    for level, usable in usability["usable_per_level"].items():
        print(f"level {level}: {verified} verified, {usable} usable (a valid item at one of seeds 0-{seeds - 1}), "
              f"{usability['valid_at_seed_0'][level]} valid at seed 0")
    print(f"valid seeds of {seeds}, per template and level (0: the commonest reason):")
    for question_id, item in usability["per_template"].items():
        counts = "  ".join(f"L{level} {n:>2}/{seeds}" for level, n in item["valid"].items())
        print(f"  {question_id:<14} {counts}")
        for level, reason in item["reasons"].items():
            print(f"      L{level}: {reason[:150]}")
    for question_id in usability["never_usable"]:
        print(f"NEVER USABLE {question_id}: no valid item at seeds 0-{seeds - 1}; fix or retire it")


def _verify(args: argparse.Namespace) -> int:
    directory = args.templates_dir or str(templates_dir())
    seeds = list(range(args.seeds)) if args.seeds else None
    try:
        report = dataset_census(args.dataset, directory, seeds)
    except TemplateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        _print_table(report, directory)
    never = report.get("usability", {}).get("never_usable")
    return 1 if report["failed"] or never else 0


def _items(args: argparse.Namespace) -> int:
    count = write_items(args.dataset, args.out, args.levels, args.seeds, args.with_key, args.keys, args.templates_dir)
    print(f"{count} items written to {args.out}" + (f", keys to {args.keys}" if args.keys else ""))
    return 0


def _review(args: argparse.Namespace) -> int:
    path = args.file or review_path()
    try:
        rate = reviewed_rate(read_review(path))
    except (TemplateError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rate))
    else:
        print(f"round {rate['round']}: {rate['valid']} of {rate['items']} reviewed items valid, "
              f"{rate['rate']:.1%} (95% Wilson CI {rate['ci_low']:.1%} to {rate['ci_high']:.1%})")
        for flag, what in (("from_memory", "answerable from memory of the original"),
                           ("options_point", "with options that point at the key")):
            if flag in rate:
                f = rate[flag]
                print(f"  {f['flagged']} of {f['items']} {what}, {f['rate']:.1%} "
                      f"(95% Wilson CI {f['ci_low']:.1%} to {f['ci_high']:.1%})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.perturbation", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="check every template of a dataset and print the coverage")
    verify.add_argument("--dataset", required=True, choices=DATASET_NAMES)
    verify.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    verify.add_argument("--seeds", type=int, default=10, help="usability over seeds 0..N-1 (0: skip; default 10)")
    verify.add_argument("--templates-dir", default=None, help="folder of <dataset>.jsonl (default: $CFA_TEMPLATES_DIR)")
    items = commands.add_parser("items", help="write the valid generated items without their keys")
    items.add_argument("--dataset", required=True, choices=DATASET_NAMES)
    items.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3])
    items.add_argument("--seeds", type=int, nargs="+", default=[0])
    items.add_argument("--out", required=True, help="the items file (JSON lines)")
    items.add_argument("--with-key", action="store_true", help="add each item's key (not blind)")
    items.add_argument("--keys", default=None, help="write the keys to this file")
    items.add_argument("--templates-dir", default=None)
    review = commands.add_parser("review", help="the reviewed validity rate of the last round")
    review.add_argument("--file", default=None, help="review rows (default: datasets/templates/review.jsonl)")
    review.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return {"verify": _verify, "items": _items, "review": _review}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
