"""Throughput of the TRL reward hook at trainer scale, against a loopback model.

512 completions (each with a tool call and its output) are scored by one
``SkillRubricReward`` whose verifier is an OpenAI-compatible endpoint answering after 200 ms,
with 64 requests in flight. Every completion needs one coarse call and then its fine
calls, so the ideal is the number of waves of 64 calls times the latency. Prints the
elapsed time, the calls made, the client's CPU per call (what decides the ratio: a wave's
64 answers are turned around one after another on one event loop) and the ratio to the
ideal (target <= 1.1, median of 5 passes). ``AGENTCREDIT_HTTP=httpx`` measures the SDK's
own HTTP path.

    python benchmarks/rewards_throughput.py [--completions 512] [--latency 0.2]
        [--concurrency 64] [--gc-freeze]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llm.fake_server import server_process
from tests.rewards import scripted_verifier
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.skills.helpers import make_skill

from agentcredit.llm import ModelClient, make_provider
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.rewards.hooks import SkillRubricReward
from agentcredit.schema import Lineage
from agentcredit.skills.bank import make_bank


def _responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_verifier.answer(body["messages"], schema)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--completions", type=int, default=512)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--gc-freeze", action="store_true",
                        help="gc.freeze() before scoring, as a trainer may after its setup")
    args = parser.parse_args()
    with server_process(latency=args.latency, responder=_responder) as url:
        skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
        bank = make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                         rules_version="r", prompt_version="p")
        client = ModelClient(make_provider("openai/bench", base_url=f"{url}/v1",
                                           api_key="sk-x"),
                             endpoint=EndpointSettings(concurrency=args.concurrency))
        reward = SkillRubricReward(bank=bank, verifier=client, process_weight=0.5)
        n = args.completions
        prompts = [[{"role": "user", "content": f"Sum the numbers of file {i}."}]
                   for i in range(n)]
        reward(prompts[:2], [TOOL_COMPLETION] * 2, ground_truth=["42"] * 2,
               skill_id=["sums"] * 2)  # warm up imports and the connection pool
        calls_before = client.ledger.summary()["calls"]
        if args.gc_freeze:
            import gc

            gc.freeze()
        start, cpu = time.perf_counter(), time.process_time()
        values = reward(prompts, [TOOL_COMPLETION] * n, ground_truth=["42"] * n,
                        skill_id=["sums"] * n)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        calls = client.ledger.summary()["calls"] - calls_before
    scored = sum(v is not None for v in values)
    fine_per = (calls - n) / n
    # The coarse calls of all completions, then their fine calls: waves of `concurrency`.
    ideal = (-(-n // args.concurrency) + -(-(calls - n) // args.concurrency)) * args.latency
    print(f"{scored}/{n} completions scored in {elapsed:.2f} s with {calls} verifier calls "
          f"({fine_per:.1f} fine calls per completion); ideal {ideal:.2f} s")
    print(f"client CPU {cpu:.2f} s = {1000 * cpu / calls:.2f} ms per call "
          f"(HTTP path: {os.environ.get('AGENTCREDIT_HTTP') or 'aiohttp pool'})")
    print(f"ratio elapsed / ideal: {elapsed / ideal:.3f}  (target <= 1.1)")


if __name__ == "__main__":
    main()
