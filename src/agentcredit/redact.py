"""Removing secrets from text before it leaves the machine.

Each pattern replaces the secret (not its surrounding label) with ``[REDACTED:<kind>]``.
Patterns favour precision: a redaction that eats evidence is also a cost.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

_PATTERNS: list[tuple[str, re.Pattern[str], int]] = [
    ("private_key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), 0),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b"), 0),
    ("aws_secret_access_key", re.compile(
        r"(?i)(aws_secret_access_key|aws_secret_key|secretaccesskey)([\"']?\s*[:=]\s*[\"']?)"
        r"([A-Za-z0-9/+=]{40})"), 3),
    ("github_token",
     re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"), 0),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), 0),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("google_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"), 0),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), 0),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}"), 0),
    ("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), 0),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"), 0),
    ("twilio_key", re.compile(r"\bSK[0-9a-f]{32}\b"), 0),
    ("digitalocean_token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}"), 0),
    ("azure_storage_key", re.compile(r"(AccountKey=)([A-Za-z0-9+/=]{40,})"), 2),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    ("bearer_token", re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/\-]{16,}=*)"), 2),
    ("basic_auth", re.compile(r"(?i)(\bauthorization:\s*basic\s+)([A-Za-z0-9+/]{8,}=*)"), 2),
    ("url_password", re.compile(r"\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]{3,})(@)"), 2),
    ("password_assignment", re.compile(
        r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|"
        r"access[_-]?token|auth[_-]?token|token|secret[_-]?key|private[_-]?key|credentials?)"
        r"\\*[\"']?\s*[:=]\s*\\*[\"']?)(?!\$)(?![^\s\"',;\\]*[(\[{])([^\s\"',;\\]{6,})"),
     2),  # a value, not code that looks one up (os.environ.get(...), ${VAR}, $VAR)
]

# Names of environment variables whose values are secrets, wherever the values appear.
_SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:api_?key|token|secret|password|passwd|pwd|"
                          r"access_?key|private_?key|credentials?|auth)(?:$|_)")
MIN_SECRET_VALUE = 8
"""Characters a secret environment variable's value must hold to be matched verbatim (a
shorter one would be found in ordinary text by chance)."""
_GIVEN: set[str] = set()


def add_secret(value: str | None) -> None:
    """A value to redact verbatim wherever it occurs (a key the product itself was given)."""
    if value and len(value) >= MIN_SECRET_VALUE:
        _GIVEN.add(value)


def url_credentials(url: str | None) -> tuple[str | None, str | None]:
    """``url`` without the ``user:password@`` it may carry, and that credential (the
    password, else the user name) as the key to send in its place: an endpoint address is
    then stored, printed and cached without it, and the key is redacted wherever it shows.

    >>> url_credentials("http://me:s3cret-key-1@127.0.0.1:8080/v1")
    ('http://127.0.0.1:8080/v1', 's3cret-key-1')
    >>> url_credentials("http://127.0.0.1:8080/v1")
    ('http://127.0.0.1:8080/v1', None)
    """
    from urllib.parse import unquote, urlsplit, urlunsplit

    if not url or "@" not in url:
        return url, None
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if "@" not in parts.netloc:
        return url, None
    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
    key = unquote(password or user) or None
    add_secret(key)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])), key


def secret_values() -> tuple[str, ...]:
    """The values of this process's secret environment variables (by name: ``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD``, …) and the keys the product was given,
    longest first."""
    key = (len(os.environ), len(_GIVEN))
    if _VALUES[0] != key:
        found = {v for k, v in os.environ.items()
                 if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_VALUE} | _GIVEN
        _VALUES[:] = [key, tuple(sorted(found, key=len, reverse=True))]
    return _VALUES[1]  # type: ignore[return-value]


_VALUES: list[object] = [None, ()]  # (environment size, secrets given) and the values then


# Cheap substring tests that must succeed before a pattern's regex is worth running:
# (case-sensitive anchors, lower-case anchors searched in the lower-cased text).
_ANCHORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "private_key": (("PRIVATE KEY",), ()),
    "anthropic_key": (("sk-ant-",), ()),
    "openai_key": (("sk-",), ()),
    "aws_access_key_id": (("AKIA", "ASIA", "AIDA", "AROA"), ()),
    "aws_secret_access_key": ((), ("aws_secret", "secretaccesskey")),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    "gitlab_token": (("glpat-",), ()),
    "slack_token": (("xox",), ()),
    "stripe_key": (("_live_", "_test_"), ()),
    "google_api_key": (("AIza",), ()),
    "google_oauth_token": (("ya29.",), ()),
    "huggingface_token": (("hf_",), ()),
    "npm_token": (("npm_",), ()),
    "pypi_token": (("pypi-AgE",), ()),
    "sendgrid_key": (("SG.",), ()),
    "twilio_key": (("SK",), ()),
    "digitalocean_token": (("_v1_",), ()),
    "azure_storage_key": (("AccountKey=",), ()),
    "jwt": (("eyJ",), ()),
    "bearer_token": ((), ("bearer",)),
    "basic_auth": ((), ("basic",)),
    "url_password": (("://",), ()),
    "password_assignment": ((), ("pass", "pwd", "secret", "key", "token", "credential")),
}


_CLEAN_MAX_CHARS = 8_192
"""The longest text :class:`Redactor` remembers as clean."""

# The text of the task being worked on (its instruction and verifier files), when one is.
_TASK_TEXT: ContextVar[str | None] = ContextVar("agentcredit_task_text", default=None)


@contextmanager
def task_owned_values(task_text: str | None) -> Iterator[None]:
    """Within this block, a would-be secret that appears verbatim in ``task_text`` is kept.

    A task that plants fake credentials and checks them (a sanitize-secrets task names its
    tokens in the instruction and the tests) is about those values: redacting them would
    hide the task from the checklist writer and the evidence from the judge. They are test
    data, not leaks. Everything else is redacted as usual. The setting follows asyncio tasks
    started inside the block (a context variable).
    """
    token = _TASK_TEXT.set(task_text or None)
    try:
        yield
    finally:
        _TASK_TEXT.reset(token)


def task_text(instruction: str, verifier_files: dict[str, str]) -> str:
    """The text a task owns: its instruction and its verifier files."""
    return "\n".join([instruction, *verifier_files.values()])


def _may_match(kind: str, text: str, lowered: str) -> bool:
    exact, lower = _ANCHORS[kind]
    return any(a in text for a in exact) or any(a in lowered for a in lower)


@dataclass
class Redactor:
    """Replaces secrets and counts what it replaced, by kind."""

    enabled: bool = True
    counts: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    # Recent texts without anything to redact or keep (most texts; the same system prompts
    # and messages come back in every call of a trial and of a batch): answered unscanned.
    # Not a trial's evidence view (one per trial, tens of KB: 256 of them held 8 MB).
    _clean: set[str] = field(default_factory=set, repr=False)

    def __call__(self, text: str) -> str:
        """Text with every recognised secret replaced by a marker.

        >>> Redactor()("key=AKIAABCDEFGHIJKLMNOP")
        'key=[REDACTED:aws_access_key_id]'
        >>> redact = Redactor()
        >>> with task_owned_values("Remove AKIAABCDEFGHIJKLMNOP from config.py"):
        ...     redact("key=AKIAABCDEFGHIJKLMNOP, other=AKIAZZZZZZZZZZZZZZZZ")
        'key=AKIAABCDEFGHIJKLMNOP, other=[REDACTED:aws_access_key_id]'
        >>> dict(redact.kept), dict(redact.counts)
        ({'aws_access_key_id': 1}, {'aws_access_key_id': 1})
        """
        if not self.enabled or not text:
            return text
        if text in self._clean:
            return text
        before = self.total + self.kept_total
        result = self._redact(text, _TASK_TEXT.get())
        if result == text and self.total + self.kept_total == before and \
                len(text) <= _CLEAN_MAX_CHARS:
            if len(self._clean) >= 256:
                self._clean.clear()
            self._clean.add(text)
        return result

    def _redact(self, text: str, owned: str | None) -> str:
        for value in secret_values():
            if value in text and not (owned is not None and value in owned):
                self.counts["environment_secret"] += text.count(value)
                text = text.replace(value, "[REDACTED:environment_secret]")
        lowered = text.lower()
        for kind, pattern, group in _PATTERNS:
            if _may_match(kind, text, lowered):
                text = pattern.sub(self._replacer(kind, group, owned), text)
        return text

    def _replacer(self, kind: str, group: int, owned: str | None):  # type: ignore[no-untyped-def]
        marker = f"[REDACTED:{kind}]"

        def replace(match: re.Match[str]) -> str:
            if match.group(0).count("[REDACTED:") and kind == "password_assignment":
                return match.group(0)
            if owned is not None and match.group(group) in owned:
                self.kept[kind] += 1
                return match.group(0)
            self.counts[kind] += 1
            if group == 0:
                return marker
            start = match.start(group) - match.start()
            end = match.end(group) - match.start()
            whole = match.group(0)
            return whole[:start] + marker + whole[end:]

        return replace

    @property
    def total(self) -> int:
        """How many secrets were replaced so far."""
        return sum(self.counts.values())

    @property
    def kept_total(self) -> int:
        """How many would-be secrets were kept because their task owns them."""
        return sum(self.kept.values())


KINDS: tuple[str, ...] = (*(kind for kind, _, _ in _PATTERNS), "environment_secret")

_OUTPUT = Redactor()


def redact_text(text: str) -> str:
    """``text`` as every file the product writes holds it: the one redaction (the same
    patterns and secret values as what is sent), for what does not go through a model
    client (the report, the run store's reasons, exports)."""
    return _OUTPUT(text) if text else text
