"""Comparing models the way a referee asks: per-question models across runs, and rankings.

`paired` (the paired items of one measure, from `cfa_lib.items_frame`), `models` (a GEE with the question
as the cluster: each model's effect, the interaction test, pairwise differences with Holm's correction),
`rankings` (ranks in Format A and Format B, Kendall's τ with a bootstrap interval over questions).
"""
