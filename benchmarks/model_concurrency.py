"""Throughput of the model layer against the loopback fake server.

320 requests, 200 ms server latency, 32 concurrent requests: the ideal is 10 waves of
200 ms = 2.0 s. Prints the elapsed time and its ratio to the ideal (target <= 1.1).

    python benchmarks/model_concurrency.py [--requests 320] [--latency 0.2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llm.fake_server import server_process

from agentcredit.llm import ModelClient, ModelResponse, make_provider, user
from agentcredit.llm.endpoint import EndpointSettings


async def run(client: ModelClient, n: int) -> int:
    try:
        results = await asyncio.gather(*(client.generate([user(f"request {i}")])
                                         for i in range(n)))
    finally:
        await client.aclose()
    return sum(isinstance(r, ModelResponse) for r in results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=320)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with server_process(latency=args.latency) as url:
        provider = make_provider("openai/bench", base_url=f"{url}/v1", api_key="sk-x")
        client = ModelClient(provider, endpoint=EndpointSettings(concurrency=args.concurrency))
        asyncio.run(run(client, 4))  # warm up imports
        start = time.perf_counter()
        answered = asyncio.run(run(client, args.requests))
        elapsed = time.perf_counter() - start
    ideal = -(-args.requests // args.concurrency) * args.latency
    print(f"{answered}/{args.requests} answered in {elapsed:.2f} s; ideal {ideal:.2f} s")
    print(f"ratio elapsed / ideal: {elapsed / ideal:.3f}  (target <= 1.1)")


if __name__ == "__main__":
    main()
