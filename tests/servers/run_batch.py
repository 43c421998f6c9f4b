"""Run a numbered batch of prompts through the engine (a separate process the resume test can kill).

    python -m tests.servers.run_batch --base-url http://127.0.0.1:N/v1 --n 40 --concurrency 4 --out x.json
CFA_CACHE_DIR decides where answers are cached.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cfa_lib.models import Request, get_client


def batch_requests(n: int) -> list[Request]:
    return [Request([{"role": "user", "content": f"question {i}"}]) for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    client = get_client("openai/fake-model", base_url=args.base_url, timeout_s=30, backoff_base_s=0.01)
    results = client.complete_many(batch_requests(args.n), max_concurrency=args.concurrency, progress=False)
    args.out.write_text(json.dumps([c.to_dict() for c in results]))


if __name__ == "__main__":
    main()
