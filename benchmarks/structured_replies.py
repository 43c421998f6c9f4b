"""How many structured replies of the embedded model fail, and how long they take: the judge's calibration
items of notebooks 01 and 02 and the gold model's replies, on the first questions of CFA-Easy.

Each group is sent twice on one fresh cache; the second pass shows what a rerun sends again (failures that
are not cached). One line per group and pass: requests, sent, failed by kind, seconds, completion tokens.

    .venv/bin/python benchmarks/structured_replies.py [--limit 4] [--model local]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, os.getcwd())  # the checkout the benchmark is run from (a worktree, an older commit)


def groups(limit: int) -> dict[str, list]:
    from cfa_lib.data import load_dataset
    from cfa_lib.experiments import option_bias, three_tier
    from cfa_lib.experiments.judging import calibration_items
    from cfa_lib.gold import from_option, gold_request, text_only

    questions = load_dataset("easy", limit=limit)
    items = calibration_items(questions)
    golds = {q.id: from_option(q) or text_only(q, "benchmark") for q in questions}
    return {
        "judge calibration (01)": [option_bias.judge_request(i.question, i.answer) for i in items],
        "tier calibration (02)": [three_tier.tier_request(i.question, golds[i.question.id], i.answer)
                                  for i in items],
        "gold model (02)": [gold_request(q) for q in questions],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=4, help="questions of CFA-Easy")
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    os.environ["CFA_CACHE_DIR"] = tempfile.mkdtemp(prefix="cfa-replies-")
    from cfa_lib.models import get_client

    client = get_client(args.model)
    client.check()
    print(f"code: {Path.cwd()}  cache: {os.environ['CFA_CACHE_DIR']}")
    for name, requests in groups(args.limit).items():
        for run in (1, 2):
            start = time.perf_counter()
            replies = client.complete_many(requests, desc=name, progress=False)
            seconds = time.perf_counter() - start
            failed = Counter(c.error_kind for c in replies if not c.ok)
            fresh = [c for c in replies if not c.cached]
            tokens = sum(c.completion_tokens or 0 for c in fresh)
            print(f"{name}, run {run}: {len(replies)} requests, {len(fresh)} sent, "
                  f"{sum(failed.values())} failed {dict(failed)}, {seconds:.1f} s, "
                  f"{tokens / max(1, len(fresh)):.0f} completion tokens per reply sent", flush=True)


if __name__ == "__main__":
    main()
