"""The model layer: providers, cache, limits, retries, batch files and redaction."""

from agentcredit.errors import ModelCallError, ProviderError
from agentcredit.llm.cache import ResponseCache, cache_key, default_cache_path
from agentcredit.llm.client import Model, ModelClient, make_client, validate_answer
from agentcredit.llm.limits import RetryPolicy
from agentcredit.llm.providers import make_provider
from agentcredit.llm.providers.scripted import register_script
from agentcredit.llm.redact import Redactor
from agentcredit.llm.types import (
    GenerationConfig,
    ImagePart,
    Message,
    ModelFailure,
    ModelResponse,
    TextPart,
    Usage,
    system,
    user,
)
from agentcredit.llm.usage import Price, UsageLedger, load_prices

__all__ = [
    "GenerationConfig",
    "ImagePart",
    "Message",
    "Model",
    "ModelCallError",
    "ModelClient",
    "ModelFailure",
    "ModelResponse",
    "Price",
    "ProviderError",
    "Redactor",
    "ResponseCache",
    "RetryPolicy",
    "TextPart",
    "Usage",
    "UsageLedger",
    "cache_key",
    "default_cache_path",
    "load_prices",
    "make_client",
    "make_provider",
    "register_script",
    "system",
    "user",
    "validate_answer",
]
