"""The bash grammar, parsed once (tree-sitter): what every reader of the agent's shell
commands walks (tool names a skill may mention, what a trial's commands print)."""

from __future__ import annotations

import functools
import re
from typing import Any

# A command line of plain words, lists, pipes and simple redirections: read without the
# parser (no quotes, expansions, here-documents or groups), split into statements and words.
PLAIN_SHELL = re.compile(r"^(?!.*(?:<<|\|&|>\|))[\w./:=,+@%^\s&|;<>~-]*$")
PLAIN_LIST = re.compile(r"&&|\|\||;|\n|(?<![>&\d])&(?![>&])")
PLAIN_WORD = re.compile(r"\d?>>?&\d|&>>?|\d?>>?|<|[^\s<>]+")


def plain_redirects(words: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """A plain stage's words (:data:`PLAIN_WORD`) apart from its redirections, and each
    redirection's operator and file (``2>&1``, one stream into another, names none)."""
    kept: list[str] = []
    redirects: list[tuple[str, str]] = []
    operator = ""
    for word in words:
        if operator:
            redirects.append((operator, word))
            operator = ""
        elif word[0] in "<>&" or (word[0].isdigit() and ">" in word):
            operator = "" if "&" in word[1:] and word[-1].isdigit() else word
        else:
            kept.append(word)
    return kept, redirects


@functools.lru_cache(maxsize=1)
def bash_parser() -> Any:
    """The tree-sitter parser of the bash grammar (built once)."""
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def node_text(node: Any) -> str:
    """The source text of a parse node."""
    return str(node.text.decode("utf-8", "replace"))


def unquoted(node: Any) -> str:
    """A word's text as bash passes it on: outer quotes taken off, the parts of a word
    made of several (``"a "b" c"``) joined, a backslash's escape undone."""
    text = node_text(node)
    if node.type == "concatenation":
        return "".join(unquoted(c) for c in node.children)
    if node.type in ("string", "raw_string") and len(text) >= 2:
        return re.sub(r'\\([$`"\\\n])', r"\1", text[1:-1]) if node.type == "string" else text[1:-1]
    return re.sub(r"\\(.)", r"\1", text) if node.type == "word" else text
