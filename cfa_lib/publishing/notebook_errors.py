"""The errors a user acts on, shown in a notebook as their one sentence instead of under a traceback.

A bad parameter, an unknown model name, a server that is down: the message already says what to change, and
a screen of traceback above it (in JupyterLab, and in papermill's error on the command line) buries it. Any
other exception keeps its full traceback: it is a bug to report.
"""

from __future__ import annotations

from typing import Any

from cfa_lib.checks import ParameterError
from cfa_lib.data import DatasetError
from cfa_lib.models.errors import CacheError, ModelSpecError, ModelUnavailableError, RunFailedError, SpendCapReached
from cfa_lib.results import ResultsFileError

USER_ERRORS: tuple[type[BaseException], ...] = (
    ParameterError, ModelSpecError, ModelUnavailableError, CacheError, RunFailedError, SpendCapReached,
    DatasetError, ResultsFileError,
)


def one_sentence(etype: type[BaseException], value: BaseException) -> list[str]:
    """The error as a reader needs it: its name and its message, nothing else."""
    return [f"{etype.__name__}: {value}"]


def show_user_errors_briefly() -> None:
    """In an IPython kernel (a notebook, papermill), print the user errors as one sentence; elsewhere nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def handler(shell: Any, etype: type[BaseException], value: BaseException, _tb: Any,
                tb_offset: int | None = None) -> list[str]:
        lines = one_sentence(etype, value)
        shell._showtraceback(etype, value, lines)  # what the kernel sends as the cell's error (ipykernel's hook)
        return lines

    shell.set_custom_exc(USER_ERRORS, handler)
