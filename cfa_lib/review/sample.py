"""A seeded review sample, stratified by the path that decided each verdict and by the verdict.

A plain random sample of a run would be almost all of its largest stratum (say, judge-correct), so the
rare paths a referee worries about (the heuristic reader, a no-answer rule, a defective item) would go
unreviewed. Every stratum gets at least `floor` items (or all it has), the rest of the budget goes to the
strata in proportion to their size (largest remainders), and the sample is shuffled so that the order of
the rows says nothing about their verdicts. Estimates that must speak for the whole run weight each
stratum by its size (`stratum_sizes`), so the over-sampling of small strata biases nothing.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from cfa_lib.review.items import ReviewItem

DEFAULT_SIZE = 60
DEFAULT_SEED = 0


def check_size(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n={n!r} is not valid: the sample size must be a positive whole number.")
    return n


def allocate(sizes: dict[tuple[str, str], int], n: int, floor: int = 2) -> dict[tuple[str, str], int]:
    """How many items each stratum gets: `floor` (or all it has) first, then the rest in proportion."""
    check_size(n)
    if n >= sum(sizes.values()):
        return dict(sizes)
    order = sorted(sizes)
    take = {s: min(sizes[s], floor) for s in order}
    while sum(take.values()) > n:  # more strata than budget: the largest strata keep their floor
        smallest = min((s for s in order if take[s]), key=lambda s: (sizes[s], s))
        take[smallest] -= 1
    left = n - sum(take.values())
    room = {s: sizes[s] - take[s] for s in order}
    total_room = sum(room.values())
    if left and total_room:
        shares = {s: left * room[s] / total_room for s in order}
        extra = {s: min(room[s], int(shares[s])) for s in order}
        by_remainder = sorted(order, key=lambda s: (-(shares[s] - int(shares[s])), s))
        while sum(extra.values()) < left:
            grown = False
            for s in by_remainder:
                if sum(extra.values()) < left and extra[s] < room[s]:
                    extra[s] += 1
                    grown = True
            if not grown:
                break
        take = {s: take[s] + extra[s] for s in order}
    return take


def stratified_sample(items: Sequence[ReviewItem], n: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED,
                      floor: int = 2) -> list[ReviewItem]:
    """`n` items (all, if there are fewer), every stratum present, in a seeded shuffled order."""
    check_size(n)
    by_stratum: dict[tuple[str, str], list[ReviewItem]] = defaultdict(list)
    for item in items:
        by_stratum[item.stratum].append(item)
    take = allocate({s: len(group) for s, group in by_stratum.items()}, n, floor)
    rng = random.Random(seed)
    chosen = [item for s in sorted(by_stratum) for item in rng.sample(by_stratum[s], take[s])]
    rng.shuffle(chosen)
    return chosen


def stratum_sizes(items: Sequence[ReviewItem]) -> Counter[tuple[str, str]]:
    """How many items of the whole run each stratum holds: the weights of stratified estimates."""
    return Counter(item.stratum for item in items)
