"""Validation of notebook parameters, in one place.

Notebooks are run overnight through papermill; a typo must fail in the first cell, before any paid
call, with one sentence naming the parameter, the bad value and what is accepted. Each `check_*` takes
the value and the parameter's name and returns the value as the code uses it; `Parameters` (the base of
`Settings` and of every experiment's options) runs each field's check once, when it is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from cfa_lib.checks import ParameterError as ParameterError
from cfa_lib.checks import check_optional_flag as check_optional_flag
from cfa_lib.checks import invalid, optional_positive_int
from cfa_lib.data import DATASET_NAMES
from cfa_lib.models.run_options import check_concurrency as check_concurrency
from cfa_lib.models.run_options import check_cost_cap as check_cost_cap
from cfa_lib.results import ResultsFileError

if TYPE_CHECKING:
    from cfa_lib.models.names import ModelSpec

PERTURBATION_LEVELS = (1, 2, 3)


T = TypeVar("T")


def checked_by(checker: Callable[[Any, str], Any]) -> BeforeValidator:
    """A field's check, run before pydantic sees the value: `Annotated[int, checked_by(check_count)]`."""
    return BeforeValidator(lambda value, info: checker(value, info.field_name))


class Parameters(BaseModel):
    """Parameters checked once, when built: a bad value raises the check's one-sentence `ParameterError`,
    an unknown name one that lists the accepted names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise self._parameter_error(exc, values) from None

    @classmethod
    def _parameter_error(cls, exc: ValidationError, values: dict[str, Any]) -> ParameterError:
        error = exc.errors()[0]
        raised = (error.get("ctx") or {}).get("error")
        if isinstance(raised, ParameterError):
            return raised
        name = str(error["loc"][0]) if error["loc"] else "?"
        if error["type"] == "extra_forbidden":
            return ParameterError(f"Parameter {name}={values.get(name)!r} is not valid: accepted parameters are "
                                  f"{', '.join(cls.model_fields)}.")
        return invalid(name, values.get(name), error["msg"])


def check_dataset(dataset: Any, name: str = "dataset") -> str:
    if dataset not in DATASET_NAMES:
        raise invalid(name, dataset, " or ".join(repr(d) for d in DATASET_NAMES))
    return dataset


def check_audited(audited: Any, name: str = "audited") -> bool:
    """Grade against the audited answer keys (`cfa_lib.key_audit`), or the dataset's."""
    if not isinstance(audited, bool):
        raise invalid(name, audited, "True (the key audit's corrections, disputed questions set aside) or False "
                                     "(the dataset's keys, as the paper graded)")
    return audited


def check_limit(limit: Any, name: str = "limit") -> int | None:
    return optional_positive_int(limit, name, "a positive integer, or None for the whole dataset")


def check_seed(sample_seed: Any, name: str = "sample_seed") -> int | None:
    if sample_seed is not None and (isinstance(sample_seed, bool) or not isinstance(sample_seed, int)):
        raise invalid(name, sample_seed, "an integer, or None for the first questions in file order")
    return sample_seed


def check_integer(value: Any, name: str) -> int:
    """Any whole number, such as the seed of the perturbations."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(name, value, "an integer")
    return value


def check_count(value: Any, name: str) -> int:
    """A non-negative whole number, such as the size of the judge-agreement sample."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise invalid(name, value, "a whole number of 0 or more")
    return value


def check_tolerance(tolerance: Any, name: str = "tolerance") -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 < tolerance < 1:
        raise invalid(name, tolerance, "a relative tolerance above 0 and below 1, such as 0.02 for ±2%")
    return float(tolerance)


def check_levels(levels: Any, name: str = "perturbation_levels") -> list[int]:
    accepted = "a non-empty list drawn from [1, 2, 3], such as [1] or [1, 2, 3]"
    if isinstance(levels, int) and not isinstance(levels, bool) and levels in PERTURBATION_LEVELS:
        return [levels]  # `papermill -p perturbation_levels 2` passes a bare integer
    if isinstance(levels, str) and re.fullmatch(r"\s*\[?\s*\d+(\s*[,\s]\s*\d+)*\s*\]?\s*", levels):
        levels = [int(n) for n in re.findall(r"\d+", levels)]  # `-p perturbation_levels "[1, 2]"` passes text
    if not isinstance(levels, list | tuple) or not levels:
        raise invalid(name, levels, accepted)
    for level in levels:
        if isinstance(level, bool) or not isinstance(level, int) or level not in PERTURBATION_LEVELS:
            raise invalid(name, levels, accepted)
    return sorted(set(levels))


def check_names(value: Any, name: str, accepted: Sequence[str]) -> list[str]:
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
                raise invalid(name, value, message) from None
        else:
            names = [text]
    if names is None:
        names = []
    if not isinstance(names, list | tuple) or any(not isinstance(n, str) or n not in accepted for n in names):
        raise invalid(name, value, message)
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
        raise invalid(parameter, value, "None, a model name, or a list of different model names")
    return [check_model(name, parameter) for name in names]


def check_optional_model(name: Any, parameter: str) -> str | None:
    """None (a default chosen later, such as the judge deriving gold answers) or a model name."""
    return None if name is None else check_model(name, parameter)


def model_name(name: Any, parameter: str = "model") -> str:
    """A model name's type (the `Settings.model` field's check; `parse_model` reads the name itself)."""
    if not isinstance(name, str):
        raise invalid(parameter, name, "a model name string such as 'local' or 'gpt-4o-mini'")
    return name


def parse_model(name: Any, parameter: str = "model") -> ModelSpec:
    """The name parsed now, so an unknown model stops the notebook before any question is asked; the parsed
    name is what a run hands on (`Settings.spec`), so the name is read once."""
    from cfa_lib.models import ModelSpecError, parse_model_name

    try:
        return parse_model_name(model_name(name, parameter))
    except ModelSpecError as exc:
        raise ParameterError(f"Parameter {parameter}={name!r} is not valid: {exc}") from exc


def check_model(name: Any, parameter: str = "model") -> str:
    """A model name other than the subject's (a judge, the gold or generator model), checked when given."""
    return parse_model(name, parameter).name


def check_results_path(results_path: Any, experiment: str, read: Callable[[Path], T] | None = None
                       ) -> T | Path | None:
    """None (run the experiment), or a results file of `experiment` read by `read` (which raises
    ResultsFileError for a file that is missing, corrupt or of another experiment)."""
    if results_path is None:
        return None
    accepted = f"None (run the experiment) or the path of a results.json of experiment {experiment!r}"
    if not isinstance(results_path, str | Path) or not str(results_path).strip():
        raise invalid("results_path", results_path, accepted)
    try:
        return read(Path(results_path)) if read is not None else Path(results_path)
    except ResultsFileError as exc:
        raise ParameterError(
            f"Parameter results_path={str(results_path)!r} is not valid ({str(exc).rstrip('.')}): "
            f"accepted values are {accepted}."
        ) from exc
