"""Simulated studies with a known per-model effect and question difficulty, to check `models.compare`.

Question q has a difficulty u_q ~ N(0, σ²) shared by every model (the hard question counts against all);
model m answers the control condition right with probability expit(a_m + u_q) and the treated one with
expit(a_m + u_q − b_m). The true population-averaged effect, the estimand of `models.compare`, is
E_u[expit(a_m + u)] − E_u[expit(a_m + u − b_m)], computed by Gauss–Hermite quadrature.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit


@dataclass(frozen=True)
class Design:
    intercepts: Sequence[float] = (1.2, 0.6, 0.0)  # a_m: log-odds of a right answer on an average question
    drops: Sequence[float] = (0.1, 0.5, 0.9)  # b_m: log-odds lost in the treated condition
    difficulty_sd: float = 1.5  # σ of the questions' difficulty
    n_questions: int = 300

    @property
    def subjects(self) -> list[str]:
        return [f"model {i + 1}" for i in range(len(self.intercepts))]


def true_effects(design: Design) -> dict[str, float]:
    """Each model's population-averaged effect (a difference of probabilities)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    u = design.difficulty_sd * nodes
    return {s: float(weights @ (expit(a + u) - expit(a + u - b)))
            for s, a, b in zip(design.subjects, design.intercepts, design.drops, strict=True)}


def simulate_study(design: Design, rng: np.random.Generator) -> pd.DataFrame:
    """One study's paired items (subject, question_id, treated, correct), the shape `paired_items` gives."""
    u = rng.normal(0, design.difficulty_sd, design.n_questions)
    frames = []
    for subject, a, b in zip(design.subjects, design.intercepts, design.drops, strict=True):
        for treated in (0, 1):
            p = expit(a + u - b * treated)
            frames.append(pd.DataFrame({"subject": subject, "question_id": [f"q{i}" for i in range(len(u))],
                                        "treated": treated, "correct": (rng.random(len(u)) < p).astype(int)}))
    return pd.concat(frames, ignore_index=True)
