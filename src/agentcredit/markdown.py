"""The one markdown parser (``markdown-it-py``, CommonMark with tables) and what its users
read from it: the instruction's structure for requirement units, the code of a skill's
guidance for the tools it invokes."""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

MD = MarkdownIt("commonmark", {"html": False}).enable("table")


def parse(text: str) -> list[Token]:
    """The block tokens of a markdown text (each with its source line ``map``)."""
    return MD.parse(text)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: its language (the info string's first word, lower case) and
    its text."""

    lang: str
    body: str


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced code blocks of a markdown text, in order.

    >>> code_blocks("Run:\\n\\n```Bash title\\nls -l\\n```\\n~~~\\nx\\n~~~\\n")
    [CodeBlock(lang='bash', body='ls -l\\n'), CodeBlock(lang='', body='x\\n')]
    """
    return [CodeBlock((t.info.split() or [""])[0].lower(), t.content)
            for t in parse(text) if t.type == "fence"]


def inline_code(text: str, max_chars: int = 200) -> list[str]:
    """The inline code spans of a markdown text's prose (not of its code blocks), each at
    most ``max_chars`` long.

    >>> inline_code("Use `jq .a f` or ``a`b``.\\n\\n```\\n`not this`\\n```\\n")
    ['jq .a f', 'a`b']
    """
    return [child.content for block in parse(text) if block.type == "inline"
            for child in block.children or () if child.type == "code_inline"
            and len(child.content) <= max_chars]
