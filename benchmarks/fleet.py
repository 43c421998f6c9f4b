"""Three models on three servers: side by side against one after another (issue #36).

    PYTHONPATH=. .venv/bin/python benchmarks/fleet.py [--limit 4]

Starts three loopback server processes serving the embedded GGUF: two llama.cpp servers (OpenAI protocol, each
behind a counting proxy) and the stand-in Ollama (tests/servers/fake_ollama.py), each model judged by another name
at its own server. Then runs the pipeline's four experiments for the three models (no reference runs, no book
build) twice, each time on an empty cache: once side by side (one pipeline run, one lane per model, the models file
listing each at its own endpoint), once one model after another (one pipeline run per model, as a user did before
the models file: each of these also runs the figures notebook). Prints each way's wall time and the chat requests
each server answered. On this machine's two cores the three single-threaded servers share the CPU, so side by
side gains at most what the spare core gives; on a fleet each server has its own node.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cfa_lib.publishing import pipeline  # noqa: E402
from tests.servers.counting_proxy import start_counting_proxy  # noqa: E402
from tests.servers.processes import ollama_counts, start_fake_ollama, start_llama_server  # noqa: E402
from tests.test_models_fleet import FLEET  # noqa: E402

MODELS = ("smollm-a", "smollm-b", "smollm-c")
CHAT = "POST /v1/chat/completions"


def run(models: list[str], limit: int, work: Path) -> float:
    """Wall seconds of one pipeline run of `models` on an empty cache (its printout kept out of the report)."""
    os.environ["CFA_CACHE_DIR"] = str(work / "cache")
    started = time.monotonic()
    with redirect_stdout(StringIO()):
        code = pipeline.main(["--models", " ".join(models), "--limit", str(limit), "--no-reference",
                              "--book-root", str(work / "book"), "--results-dir", str(work / "results")])
    if code != 0:
        raise SystemExit(f"the pipeline failed for {models}: see {work}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=4, help="questions per experiment")
    limit = parser.parse_args().limit
    llama_a, llama_b = start_llama_server(), start_llama_server()
    ollama = start_fake_ollama(["smollm-c", "judge-c"])
    (proxy_a, count_a), (proxy_b, count_b) = start_counting_proxy(llama_a.url), start_counting_proxy(llama_b.url)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            models_file = root / "models.toml"
            models_file.write_text(FLEET.format(a=f"{proxy_a.url}/v1", b=f"{proxy_b.url}/v1", c=ollama.url))
            os.environ["CFA_MODELS_FILE"] = str(models_file)
            side_by_side = run(list(MODELS), limit, root / "side_by_side")
            counted = (count_a.counts[CHAT], count_b.counts[CHAT], ollama_counts(ollama).get("POST /api/chat", 0))
            one_by_one = sum(run([model], limit, root / model) for model in MODELS)
    finally:
        for server in (proxy_a, proxy_b, llama_a, llama_b, ollama):
            server.stop()
    print(f"three models, four experiments each, {limit} questions per experiment, empty caches")
    print(f"side by side:        {side_by_side:6.0f} s")
    print(f"one after another:   {one_by_one:6.0f} s  ({one_by_one / side_by_side:.2f} x the side-by-side time)")
    print("chat requests each server answered in the side-by-side run: "
          f"llama.cpp A {counted[0]}, llama.cpp B {counted[1]}, stand-in Ollama C {counted[2]}")


if __name__ == "__main__":
    main()
