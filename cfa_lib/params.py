"""Validation of notebook parameters.

Notebooks are run overnight through papermill; a typo must fail in the first cell, before any paid
call, with one sentence naming the parameter, the bad value and what is accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfa_lib.data import DATASET_NAMES

PERTURBATION_LEVELS = (1, 2, 3)


class ParameterError(ValueError):
    """A notebook parameter with a value the experiment cannot use."""


def _fail(name: str, value: Any, accepted: str) -> ParameterError:
    return ParameterError(f"Parameter {name}={value!r} is not valid: accepted values are {accepted}.")


def check_dataset(dataset: Any) -> str:
    if dataset not in DATASET_NAMES:
        raise _fail("dataset", dataset, " or ".join(repr(d) for d in DATASET_NAMES))
    return dataset


def check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise _fail("limit", limit, "a positive integer, or None for the whole dataset")
    return limit


def check_seed(sample_seed: Any) -> int | None:
    if sample_seed is not None and (isinstance(sample_seed, bool) or not isinstance(sample_seed, int)):
        raise _fail("sample_seed", sample_seed, "an integer, or None for the first questions in file order")
    return sample_seed


def check_count(name: str, value: Any) -> int:
    """A non-negative whole number, such as the size of the judge-agreement sample."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(name, value, "a whole number of 0 or more")
    return value


def check_tolerance(tolerance: Any) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 < tolerance < 1:
        raise _fail("tolerance", tolerance, "a relative tolerance above 0 and below 1, such as 0.02 for ±2%")
    return float(tolerance)


def check_cost_cap(max_cost_usd: Any) -> float | None:
    if max_cost_usd is None:
        return None
    if isinstance(max_cost_usd, bool) or not isinstance(max_cost_usd, int | float) or not max_cost_usd > 0 \
            or max_cost_usd == float("inf"):
        raise _fail("max_cost_usd", max_cost_usd, "None or a positive number of US dollars, such as 5.0")
    return float(max_cost_usd)


def check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(name, value, "True, False")
    return value


def check_concurrency(max_concurrency: Any) -> int:
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency <= 0:
        raise _fail("max_concurrency", max_concurrency, "a positive integer, such as 8")
    return max_concurrency


def check_levels(levels: Any) -> list[int]:
    accepted = "a non-empty list drawn from [1, 2, 3], such as [1] or [1, 2, 3]"
    if isinstance(levels, int) and not isinstance(levels, bool) and levels in PERTURBATION_LEVELS:
        return [levels]  # `papermill -p perturbation_levels 2` passes a bare integer
    if isinstance(levels, str) and re.fullmatch(r"\s*\[?\s*\d+(\s*[,\s]\s*\d+)*\s*\]?\s*", levels):
        levels = [int(n) for n in re.findall(r"\d+", levels)]  # `-p perturbation_levels "[1, 2]"` passes text
    if not isinstance(levels, list | tuple) or not levels:
        raise _fail("perturbation_levels", levels, accepted)
    for level in levels:
        if isinstance(level, bool) or not isinstance(level, int) or level not in PERTURBATION_LEVELS:
            raise _fail("perturbation_levels", levels, accepted)
    return sorted(set(levels))


def check_names(name: str, value: Any, accepted: Sequence[str]) -> list[str]:
    """A list of names drawn from `accepted` (possibly empty), in the accepted order without repeats;
    papermill's `-p variants '["a", "b"]'` passes the list as text, and a bare name counts as a list of one."""
    listed = ", ".join(repr(a) for a in accepted)
    message = f"a list drawn from {listed} (or [] for none)"
    names: Any = value
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                names = json.loads(text.replace("'", '"'))
            except json.JSONDecodeError:
                raise _fail(name, value, message) from None
        else:
            names = [text]
    if names is None:
        names = []
    if not isinstance(names, list | tuple) or any(not isinstance(n, str) or n not in accepted for n in names):
        raise _fail(name, value, message)
    return [a for a in accepted if a in names]


def check_judges(value: Any, parameter: str = "judge_model") -> list[str] | None:
    """None, one model name, or a panel: a list of names (papermill's `-p judge_model '["a", "b"]'` passes
    the list as text)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().startswith("["):
        value = re.findall(r"['\"]([^'\"]+)['\"]", value) or value
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names or len(set(names)) != len(names):
        raise _fail(parameter, value, "None, a model name, or a list of different model names")
    return [check_model(name, parameter) for name in names]


def check_model(name: Any, parameter: str = "model") -> str:
    """Parse the name now, so an unknown model stops the notebook before any question is asked."""
    from cfa_lib.models import ModelSpecError, parse_model_name

    if not isinstance(name, str):
        raise _fail(parameter, name, "a model name string such as 'local' or 'gpt-4o-mini'")
    try:
        parse_model_name(name)
    except ModelSpecError as exc:
        raise ParameterError(f"Parameter {parameter}={name!r} is not valid: {exc}") from exc
    return name


def check_results_path(results_path: Any, experiment: str) -> Path | None:
    """A results file of `experiment` that reads back cleanly, or None to run the experiment."""
    from cfa_lib.results import ResultsFileError, load_results

    if results_path is None:
        return None
    accepted = f"None (run the experiment) or the path of a results.json of experiment {experiment!r}"
    if not isinstance(results_path, str | Path) or not str(results_path).strip():
        raise _fail("results_path", results_path, accepted)
    try:
        load_results(results_path, experiment)
    except ResultsFileError as exc:
        raise ParameterError(
            f"Parameter results_path={str(results_path)!r} is not valid ({str(exc).rstrip('.')}): "
            f"accepted values are {accepted}."
        ) from exc
    return Path(results_path)
