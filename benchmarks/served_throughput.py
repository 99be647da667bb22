"""Throughput of the served reward: ``POST /turn_rewards`` at trainer scale.

``agentcredit serve``'s app runs on loopback (uvicorn) over a one-skill bank; its verifier is
an OpenAI-compatible endpoint answering after 200 ms with 64 requests in flight. One request
carries 512 trajectories (each a tool call and its output), as a trainer's rollout batch
would. Prints the elapsed time, the verifier calls and the ratio to the ideal (waves of 64
calls times the latency; no target of its own: it must not be worse than the in-process hook,
``rewards_throughput.py``).

    python benchmarks/served_throughput.py [--trajectories 512] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from tests.llm.fake_server import server_process
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.serve.conftest import make_bank_dir, running

from agentcredit.llm import ModelSpec
from agentcredit.llm.endpoint import EndpointSettings


def _calls(served: str) -> int | None:
    """The service's own count of verifier requests (None from a version without it)."""
    usage = httpx.get(f"{served}/health").json().get("usage")
    return usage["calls"] if usage else None


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from rewards_throughput import _responder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=512)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    import tempfile

    from agentcredit.cli.serve_cmd import build_app

    with server_process(latency=args.latency, responder=_responder) as url, \
            tempfile.TemporaryDirectory() as tmp:
        spec = ModelSpec("openai/bench", base_url=f"{url}/v1", no_cache=True,
                         endpoint=EndpointSettings(concurrency=args.concurrency))
        app = build_app(make_bank_dir(Path(tmp)), spec, skill="sums")
        n = args.trajectories
        batch = {"trajectories": [{"prompt": f"Sum the numbers of file {i}.",
                                   "completion": TOOL_COMPLETION, "ground_truth": "42"}
                                  for i in range(n)]}
        with running(app) as served:
            httpx.post(f"{served}/turn_rewards", json={"trajectories": batch["trajectories"][:2]},
                       timeout=600)  # warm up
            before = _calls(served)
            start = time.perf_counter()
            answer = httpx.post(f"{served}/turn_rewards", json=batch, timeout=600).json()
            elapsed = time.perf_counter() - start
            calls = _calls(served) - before if before is not None else 2 * n
    scored = sum(t["reward"] is not None for t in answer["trajectories"])
    ideal = (-(-n // args.concurrency) + -(-(calls - n) // args.concurrency)) * args.latency
    print(f"{scored}/{n} trajectories rewarded in {elapsed:.2f} s with {calls} verifier calls; "
          f"ideal {ideal:.2f} s")
    print(f"ratio elapsed / ideal: {elapsed / ideal:.3f}")


if __name__ == "__main__":
    main()
