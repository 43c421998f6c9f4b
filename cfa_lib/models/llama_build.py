"""Whether the installed llama-cpp-python can run on this CPU, asked before a model is loaded.

pip builds llama-cpp-python with -march=native by default: on an Intel Xeon with AMX the build uses an AMX
kernel that crashes the process (llama.cpp issue 20824), and a build copied to an older CPU stops on an
illegal instruction. `make install` builds it for any x86-64 CPU with AVX2 (Makefile: LLAMA_CMAKE_ARGS);
this module reads what the installed build was compiled with and refuses, in one sentence, what would crash.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

from .errors import ModelUnavailableError

# What llama.cpp's system info calls a compiled-in instruction set, and the flag /proc/cpuinfo gives for it.
CPU_FLAG = {
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c", "FMA": "fma", "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16", "AMX_INT8": "amx_int8",
}
PORTABLE = frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"})  # make install's x86-64 build
REBUILD = "rebuild it for any CPU with `rm -rf .venv && make install` (README: the embedded model)"


def system_info() -> str:
    """llama.cpp's own line on the build: the backends and the instruction sets compiled in."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")


def compiled_features(info: str) -> frozenset[str]:
    """The instruction sets a system-info line says are compiled in ("AVX2 = 1")."""
    return frozenset(name for name, on in re.findall(r"\b([A-Z0-9_]+) = (\d)", info) if on == "1" and name in CPU_FLAG)


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """This CPU's flags (Linux); None where the kernel does not list them."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"^flags\s*:\s*(.*)$", text, re.MULTILINE)
    return frozenset(match.group(1).split()) if match else None


def build_problem(info: str, flags: frozenset[str] | None) -> str | None:
    """Why this build would crash on this CPU, or None: an AMX kernel, or an instruction set the CPU lacks."""
    compiled = compiled_features(info)
    if "AMX_INT8" in compiled:
        return ("llama-cpp-python was compiled with AMX (-march=native on an Intel Xeon), whose kernel crashes the "
                f"process on its first completion (llama.cpp issue 20824); {REBUILD}")
    if flags is not None and (missing := sorted(f for f in compiled if CPU_FLAG[f] not in flags)):
        return (f"llama-cpp-python was compiled for a CPU with {', '.join(missing)}, which this CPU "
                f"({platform.processor() or platform.machine()}) lacks, so it would stop on an illegal "
                f"instruction; {REBUILD}")
    return None


def check_build() -> None:
    """Raise ModelUnavailableError before a model is loaded on a build that would crash here."""
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return
    if (problem := build_problem(system_info(), cpu_flags())) is not None:
        raise ModelUnavailableError(problem)
