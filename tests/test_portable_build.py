"""The embedded model's engine runs on any x86-64 CPU with AVX2, whatever CPU compiled it.

`make install` builds llama-cpp-python with GGML_NATIVE=OFF and AVX2 as the ceiling (Makefile). These tests
check the installed build itself (what llama.cpp says was compiled in, and its machine code), and run a
real completion with a JSON schema in a child process, so that a crash is a failed test with a sentence,
never a dead pytest worker.
"""

from __future__ import annotations

import json
import platform
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cfa_lib.models.errors import ModelUnavailableError
from cfa_lib.models.llama_build import PORTABLE, build_problem, compiled_features, cpu_flags, system_info

ROOT = Path(__file__).resolve().parents[1]
X86 = platform.machine().lower() in {"x86_64", "amd64"}
# What llama.cpp 0.3.36 printed for a pip build with -march=native on a Xeon with AMX (Sapphire Rapids).
AMX_XEON = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
            "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | "
            "OPENMP = 1 | REPACK = 1 | ")
PORTABLE_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | "
                 "OPENMP = 1 | REPACK = 1 | ")
HASWELL = frozenset("fpu sse sse2 pni ssse3 sse4_1 sse4_2 avx avx2 f16c fma bmi2".split())
SANDY_BRIDGE = frozenset("fpu sse sse2 pni ssse3 sse4_1 sse4_2 avx".split())


@pytest.mark.skipif(not X86, reason="the AVX2 build is the x86-64 one")
def test_the_installed_build_is_the_portable_one() -> None:
    info = system_info()
    assert compiled_features(info) == PORTABLE, info  # AVX2 and below: no AVX-512, no AMX, whatever this CPU has
    assert build_problem(info, cpu_flags()) is None


@pytest.mark.skipif(not X86 or shutil.which("objdump") is None, reason="needs binutils' objdump on x86-64")
def test_the_machine_code_uses_no_avx512_register_and_no_amx_tile() -> None:
    """-march=native on a CPU with AVX-512 or AMX leaves zmm registers or tile instructions in libggml-cpu."""
    import llama_cpp

    library = next((Path(llama_cpp.__file__).parent / "lib").glob("libggml-cpu.so*"))
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True,
                          check=True).stdout
    assert len(code) > 100_000
    assert "%zmm" not in code and "ldtilecfg" not in code and "tdpb" not in code


def test_a_build_with_amx_or_beyond_the_cpu_is_refused_in_one_sentence() -> None:
    assert "compiled with AMX" in build_problem(AMX_XEON, HASWELL | {"amx_int8", "avx512f"})
    assert "issue 20824" in build_problem(AMX_XEON, HASWELL | {"amx_int8", "avx512f"})
    lacking = build_problem(PORTABLE_INFO, SANDY_BRIDGE)
    assert "compiled for a CPU with AVX2, BMI2, F16C, FMA, which this CPU" in lacking and "make install" in lacking
    assert build_problem(PORTABLE_INFO, HASWELL) is None
    assert build_problem(PORTABLE_INFO, None) is None  # no /proc/cpuinfo: nothing to compare against


def test_the_local_backend_checks_the_build_before_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    from cfa_lib.models import llama_build, local_backend

    monkeypatch.setattr(llama_build, "system_info", lambda: AMX_XEON)
    monkeypatch.setattr(llama_build, "platform", type("P", (), {"machine": staticmethod(lambda: "x86_64")}))
    with pytest.raises(ModelUnavailableError, match="compiled with AMX"):
        local_backend._llama_class()


CHILD = textwrap.dedent("""
    import json, sys
    from typing import Literal
    from pydantic import BaseModel
    from cfa_lib.models import get_client

    class Pick(BaseModel):
        answer: Literal["A", "B", "C"]

    client = get_client("local", cache_dir=sys.argv[1])
    client.check()
    c = client.complete([{"role": "user", "content": "Which is a currency? A: Euro B: Paris C: Apple. Reply in JSON."}],
                        schema=Pick, max_tokens=24)
    print(json.dumps({"ok": c.ok, "parsed": c.parsed, "error": c.error}))
""")


@pytest.mark.slow
def test_a_real_completion_with_a_json_schema_in_a_child_process(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, str(tmp_path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    if done.returncode < 0:
        pytest.fail(f"the embedded model crashed the process ({signal.Signals(-done.returncode).name}): a build that "
                    f"does not run on this CPU; its last words:\n{done.stderr[-1500:]}")
    assert done.returncode == 0, done.stderr[-1500:]
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply["ok"], reply["error"]
    assert reply["parsed"]["answer"] in {"A", "B", "C"}
