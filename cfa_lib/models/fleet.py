"""The models file: where each model of a study is served, so one run reaches many servers (issue #36).

`models.toml` beside the project (or the file `CFA_MODELS_FILE` names) lists models by the name the study uses:

    [models."qwen3:32b"]
    backend = "openai"                       # an OpenAI-compatible server (vLLM, llama.cpp) or "ollama"
    base_url = "http://node1:8000/v1"        # its endpoint
    served_as = "Qwen/Qwen3-32B"             # the name the server knows (default: the study's name)
    api_key_env = "NODE1_KEY"                # the variable that holds its key, never the key
    max_concurrency = 32                     # the ceiling of its adaptive concurrency
    price = "free"                           # or [input, output] USD per million tokens
    deterministic = false                    # its replies vary between calls (true: greedy decoding)
    judge = "llama3.1:70b"                   # judges its answers, writes its perturbations (default: as usual)

A name the file lists is served as it says; any other name keeps the rules of `names.py` (OPENAI_BASE_URL,
OLLAMA_HOST). A bad file is one sentence naming the file, the entry and the field.
"""

from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cfa_lib.paths import PROJECT_ROOT

from .errors import ModelSpecError

MODELS_FILE_ENV = "CFA_MODELS_FILE"
DEFAULT_MODELS_FILE = PROJECT_ROOT / "models.toml"


class ModelEntry(BaseModel):
    """One model of the file: how to reach it, what it may cost, how its replies behave."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["openai", "ollama"]
    base_url: str
    served_as: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    max_concurrency: int | None = Field(default=None, ge=1)
    price: Literal["free"] | tuple[float, float] | None = None
    deterministic: bool | None = None
    judge: str | None = None  # the model that judges its answers and writes its perturbations (else the usual)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("needs an http:// or https:// address with a host")
        if parts.username or parts.password:
            raise ValueError("holds a user or a password: put the key in the variable api_key_env names")
        return value.rstrip("/")

    @property
    def price_per_mtok(self) -> tuple[float, float] | None:
        return (0.0, 0.0) if self.price == "free" else self.price



def endpoint(url: str) -> str:
    """A server's scheme, host and port, as results files record it (never a path, a user or a key)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def models_file() -> Path | None:
    """The models file in force: `CFA_MODELS_FILE`, else `models.toml` beside the project, else none."""
    named = os.environ.get(MODELS_FILE_ENV)
    if named:
        path = Path(named)
        if not path.is_file():
            raise ModelSpecError(f"{MODELS_FILE_ENV}={named}: no such file")
        return path
    return DEFAULT_MODELS_FILE if DEFAULT_MODELS_FILE.is_file() else None


def read_models_file(path: Path) -> dict[str, ModelEntry]:
    """Every entry of a models file by the study's name; the first bad entry or field is named (read again
    when the file changes)."""
    return _read(path, path.stat().st_mtime_ns if path.is_file() else 0)


@functools.cache
def _read(path: Path, _mtime: int) -> dict[str, ModelEntry]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelSpecError(f"{path}: cannot be read as TOML ({exc})") from None
    unknown = set(data) - {"models"}
    if unknown or not isinstance(data.get("models", {}), dict):
        raise ModelSpecError(f"{path}: holds only [models.\"<name>\"] tables, not {sorted(unknown) or 'models'}")
    entries = {}
    for name, fields in data.get("models", {}).items():
        try:
            entries[name] = ModelEntry.model_validate(fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or "(entry)"
            raise ModelSpecError(f'{path}: [models."{name}"] {field}: {error["msg"]}') from None
    return entries


def listed(name: str) -> ModelEntry | None:
    """The models file's entry for the study's model `name`, or None (the name keeps the usual rules)."""
    path = models_file()
    return None if path is None else read_models_file(path.resolve()).get(name)
