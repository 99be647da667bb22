"""The lines a harness adds around what a tool printed, gathered from the formats that know
them: :data:`PROMPT` matches the echo of a command (a shell prompt, ``$``, ``Command:``)
and :data:`STATUS` a whole status line or tag (``Exit Code: 0``, ``<returncode>0</returncode>``,
OpenHands' ``[The command completed with exit code 0.]``). The evidence view
(:mod:`agentcredit.evidence.provenance`) reads them as ``harness`` and ``echo`` lines. A new
format that wraps its outputs declares its shapes in its own module and is added here."""

from __future__ import annotations

import re

from agentcredit.formats import atif, claude_code, openai_messages, terminal

_SOURCES = (terminal, atif, openai_messages, claude_code)
PROMPT = re.compile(r"^\s*(?:" + "|".join(
    shape for module in _SOURCES for shape in getattr(module, "ECHO_PROMPTS", ())) + r")\s?")
STATUS = re.compile("|".join(
    f"^(?:{shape})$" for module in _SOURCES for shape in module.HARNESS_STATUS),
    re.IGNORECASE)
