"""The reward service: one process holds the bank, the verifier client, its cache and rate
limits, and many trainer workers share it over HTTP (``agentcredit serve``; the ``serve``
extra: Starlette + uvicorn)."""
