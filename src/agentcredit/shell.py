"""The bash grammar, parsed once (tree-sitter): what every reader of the agent's shell
commands walks (tool names a skill may mention, what a trial's commands print)."""

from __future__ import annotations

import functools
import re
from typing import Any

# A command line of plain words, lists, pipes and simple redirections: read without the
# parser (no quotes, expansions, here-documents or groups), split into statements and words.
_PLAIN_SHELL = re.compile(r"^(?!.*(?:<<|\|&|>\|))[\w./:=,+@%^\s&|;<>~-]*$")
_PLAIN_LIST = re.compile(r"&&|\|\||;|\n|(?<![>&\d])&(?![>&])")
_PLAIN_WORD = re.compile(r"\d?>>?&\d|&>>?|\d?>>?|<|[^\s<>]+")
Stage = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


@functools.lru_cache(maxsize=4096)
def plain_line(text: str) -> tuple[tuple[Stage, ...], ...] | None:
    """A plain command line (:data:`_PLAIN_SHELL`) as its statements, each the stages of its
    pipeline: a stage's words and its redirections (operator, file; ``2>&1``, one stream
    into another, names none). None: a line the parser reads. Cached: the walk and the
    rigging pass read a line once between them.

    >>> plain_line("cd /app && ls -l 2>&1 | head > out.txt")
    (((('cd', '/app'), ()),), ((('ls', '-l'), ()), (('head',), (('>', 'out.txt'),))))
    >>> plain_line("echo \'quoted\'") is None
    True
    """
    if not _PLAIN_SHELL.match(text):
        return None
    return tuple(tuple(_stage(stage) for stage in statement.split("|"))
                 for statement in _PLAIN_LIST.split(text))


def _stage(stage: str) -> Stage:
    if ">" not in stage and "<" not in stage:
        return tuple(stage.split()), ()
    kept: list[str] = []
    redirects: list[tuple[str, str]] = []
    operator = ""
    for word in _PLAIN_WORD.findall(stage):
        if operator:
            redirects.append((operator, word))
            operator = ""
        elif word[0] in "<>&" or (word[0].isdigit() and ">" in word):
            operator = "" if "&" in word[1:] and word[-1].isdigit() else word
        else:
            kept.append(word)
    return tuple(kept), tuple(redirects)


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
