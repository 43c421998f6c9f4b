"""The one shape of a bad-value error, and the checks shared by notebook parameters and the engine.

A leaf module (it imports nothing of cfa_lib) so that `params` and `models.run_options` use the same
sentence: "Parameter NAME=VALUE is not valid: accepted values are ...".
"""

from __future__ import annotations

import argparse
from typing import Any


class ParameterError(ValueError):
    """A parameter (notebook, get_client argument, CFA_* variable) with a value the code cannot use."""


def invalid(name: str, value: Any, accepted: str) -> ParameterError:
    return ParameterError(f"Parameter {name}={value!r} is not valid: accepted values are {accepted}.")


def optional_positive_int(value: Any, name: str, accepted: str) -> int | None:
    """None, or a positive integer (a bool is not one)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise invalid(name, value, accepted)
    return value


def check_optional_flag(value: Any, name: str) -> bool | None:
    """None (not given: the environment decides) or True/False."""
    if value is None or isinstance(value, bool):
        return value
    raise invalid(name, value, "None, True or False")


class CommandLine(argparse.ArgumentParser):
    """The toolkit's commands: a bad argument is one sentence first, then where the options are listed, and
    no usage block above it (argparse's default buries the sentence under the usage)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message}\n(`{self.prog} --help` lists every option)\n")
