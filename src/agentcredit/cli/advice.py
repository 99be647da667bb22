"""What to do about a failed model call, from its kind: one line the commands print."""

from __future__ import annotations


def advice(reason: str) -> str:
    """What to do about a failure, from its kind.

    >>> advice("too_long: the prompt (~9000 tokens) leaves no room")[:28]
    'the trajectory does not fit '
    """
    kind = reason.removeprefix("holistic ").removeprefix("generic ").split(":", 1)[0]
    return {
        "too_long": "the trajectory does not fit the model's window even reduced: serve the "
                    "model with a larger window (or pass --context-tokens if the server's is "
                    "larger than the one used)",
        "timeout": "the server is slower than --timeout: raise --timeout, lower "
                   "--max-tokens or --concurrency",
        "schema_validation": "the model's answers did not fit the JSON schema: try "
                             "--structured json_object or prompt, a larger --max-tokens, "
                             "or a stronger model",
        "bad_request": "the server refused the request: see the message; --structured "
                       "prompt avoids request fields a server may not take",
        "connection": "the server could not be reached: check --base-url and that it runs",
        "auth": "check the API key (OPENAI_API_KEY / ANTHROPIC_API_KEY)",
        "rate_limit": "the provider limited the rate: lower --concurrency or set --rpm/--tpm",
        "server_error": "the server failed: check its log, then run again",
    }.get(kind, "see the message, then run again")
