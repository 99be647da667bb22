"""Model providers, chosen by a ``provider/model`` string."""

from __future__ import annotations

import difflib
from typing import Any

from agentcredit.errors import ConfigError, ProviderError
from agentcredit.llm.providers.base import Provider, RawAnswer

PROVIDERS = ("openai", "anthropic", "scripted")


def make_provider(spec: str, **options: Any) -> Provider:
    """A provider from ``provider/model``; unknown providers get a "did you mean".

    >>> try:
    ...     make_provider("opneai/gpt-4o")
    ... except ConfigError as exc:
    ...     print(str(exc).split(";")[1].split("?")[0])
     did you mean 'openai'
    """
    provider, sep, model = spec.partition("/")
    if not sep or not model:
        raise ConfigError(f"model {spec!r} must look like provider/model, e.g. openai/gpt-4o-mini")
    if provider == "openai":
        from agentcredit.llm.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(model, **options)
    if provider == "anthropic":
        from agentcredit.llm.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model, **options)
    if provider == "scripted":
        from agentcredit.llm.providers.scripted import ScriptedProvider

        return ScriptedProvider(model)  # endpoint options do not apply to a script
    close = difflib.get_close_matches(provider, PROVIDERS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown provider {provider!r} in {spec!r}{hint} "
                      f"(known: {', '.join(PROVIDERS)})")


__all__ = ["PROVIDERS", "Provider", "ProviderError", "RawAnswer", "make_provider"]
