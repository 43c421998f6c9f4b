"""`python -m cfa_lib.key_audit candidates|census [--dataset easy|challenge]`: the questions whose key a signal
points at, with the evidence (strongest first), or the shipped audit's census."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from cfa_lib.checks import CommandLine
from cfa_lib.data import DATASET_NAMES
from cfa_lib.key_audit.census import census
from cfa_lib.key_audit.signals import candidates


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.key_audit", description=__doc__)
    parser.add_argument("command", choices=["candidates", "census"])
    parser.add_argument("--dataset", choices=DATASET_NAMES, action="append",
                        help="easy or challenge (default: both)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for dataset in args.dataset or DATASET_NAMES:
        if args.command == "census":
            print(json.dumps(census(dataset), indent=2))
            continue
        found = candidates(dataset)
        print(f"{dataset}: {len(found)} candidates")
        for candidate in found:
            q = candidate.question
            pointed = f", the models name {candidate.pointed}" if candidate.pointed else ""
            print(f"  {q.id} (key {q.answer}{pointed})")
            for signal, evidence in candidate.signals.items():
                print(f"    {signal}: {evidence}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
