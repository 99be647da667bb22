"""The model layer: providers, cache, limits, retries, batch files and redaction."""

from agentcredit.errors import ModelCallError, ProviderError
from agentcredit.llm.cache import ResponseCache, cache_key, default_cache_path
from agentcredit.llm.client import Model, ModelClient, validate_answer
from agentcredit.llm.limits import RetryPolicy
from agentcredit.llm.providers import make_provider
from agentcredit.llm.providers.scripted import register_script
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for
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
from agentcredit.redact import Redactor

__all__ = [
    "GenerationConfig",
    "ImagePart",
    "Message",
    "Model",
    "ModelCallError",
    "ModelClient",
    "ModelFailure",
    "ModelLike",
    "ModelResponse",
    "ModelSpec",
    "Price",
    "ProviderError",
    "Redactor",
    "ResponseCache",
    "RetryPolicy",
    "TextPart",
    "Usage",
    "UsageLedger",
    "cache_key",
    "client_for",
    "default_cache_path",
    "load_prices",
    "make_provider",
    "register_script",
    "system",
    "user",
    "validate_answer",
]
