"""`python -m cfa_lib.review export RESULTS --n 60 --out review.csv` and `... score RESULTS review.csv`.

export writes a blind review sample of any results file (ours or the study's); score reads the filled
file back and prints agreement with the person, the judge's sensitivity and specificity, and the run's
judge-based accuracies corrected for them. A bad row is named by its line, and the file is left as it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cfa_lib.checks import CommandLine
from cfa_lib.review.sample import DEFAULT_SEED, DEFAULT_SIZE


def main(argv: list[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.review", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write a blind review sample of a results file")
    export.add_argument("results", type=Path)
    export.add_argument("--n", type=int, default=DEFAULT_SIZE, help=f"items to review (default {DEFAULT_SIZE})")
    export.add_argument("--seed", type=int, default=DEFAULT_SEED)
    export.add_argument("--out", type=Path, required=True)
    score = commands.add_parser("score", help="score a filled review file against the run's verdicts")
    score.add_argument("results", type=Path)
    score.add_argument("review", type=Path)
    for command in (export, score):
        command.add_argument("--keys", choices=("audited", "original"), default="audited",
                             help="the answer keys the run is graded against: the audited ones, or the dataset's "
                                  "(a review made before the key audit, such as the shipped ones)")
    args = parser.parse_args(argv)

    from cfa_lib.experiments.registry import load_results
    from cfa_lib.results import ResultsFileError
    from cfa_lib.review import spreadsheet
    from cfa_lib.review.items import review_items
    from cfa_lib.review.sample import stratified_sample

    try:
        run = load_results(args.results, keys=args.keys)
        items = review_items(run)
        if args.command == "export":
            sample = stratified_sample(items, args.n, args.seed)
            spreadsheet.export(sample, args.out)
            print(f"{len(sample)} of {len(items)} items of {args.results} written to {args.out}, verdicts empty.")
            return 0
        from cfa_lib.review.scoring import describe, score_review
        print(describe(score_review(run, args.review)))
        return 0
    except (ResultsFileError, spreadsheet.ReviewFileError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
