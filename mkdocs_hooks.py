"""MkDocs hooks: the reference pages written from the code at build time.

A page holding ``<!-- agentcredit:cli -->`` gets every command's options (type, default,
required) from the Typer app, ``<!-- agentcredit:fields MODEL -->`` a table of a record's
fields from its pydantic model, and ``<!-- agentcredit:example FILE -->`` the first lines of
a file the shipped example run writes (run once per build, no model). A new option or field
appears without editing a page.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import types
import typing
from pathlib import Path
from typing import Any


def on_page_markdown(markdown: str, **_: Any) -> str:
    if "<!-- agentcredit:cli -->" in markdown:
        markdown = markdown.replace("<!-- agentcredit:cli -->", _cli())
    markdown = re.sub(r"<!-- agentcredit:fields (\w+) -->", lambda m: _fields(m[1]), markdown)
    markdown = re.sub(r"<!-- agentcredit:example ([\w.]+) -->", lambda m: _example(m[1]),
                      markdown)
    return markdown


def _cli() -> str:
    import typer.main

    from agentcredit.cli.app import app

    root = typer.main.get_command(app)
    parts: list[str] = []

    def walk(command: Any, path: list[str]) -> None:
        if getattr(command, "commands", None):
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])
            return
        parts.append(f"## `agentcredit {' '.join(path)}`\n")
        parts.append(_cell((command.help or "").strip(), table=False) + "\n")
        rows = ["| option | type | default | what it does |", "|---|---|---|---|"]
        for param in command.params:
            if getattr(param, "hidden", False) or param.name == "help":
                continue
            is_flag = getattr(param, "is_flag", False)
            kind = "flag" if is_flag else _type(param)
            mark = " **(required)**" if param.required else ""
            if param.param_type_name == "argument":
                name = f"`{(param.name or '').upper()}`{mark}"
                help_text = getattr(param, "help", "") or ""
            else:
                name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts]) + mark
                help_text = param.help or ""
            default = "" if param.required or param.default in (None, (), []) \
                or (kind == "flag" and param.default is False) else f"`{param.default}`"
            if getattr(param, "envvar", None):
                help_text += f" Environment variable: `{param.envvar}`."
            rows.append(f"| {name} | {kind} | {default} | {_cell(help_text)} |")
        parts.append("\n".join(rows) + "\n")

    walk(root, [])
    return "\n".join(parts)


def _type(param: Any) -> str:
    """The option's value type, as typer names it (``Path``, ``int``, ``list[Path]``...)."""
    bare = param.bare_type() if callable(getattr(param, "bare_type", None)) else "str"
    words = {"Path": "path", "str": "text", "int": "integer", "float": "number",
             "bool": "yes/no"}
    return re.sub(r"\w+", lambda m: words.get(m[0], m[0]), str(bare)).replace("list[", "list of ")\
        .rstrip("]")


def _cell(text: str, *, table: bool = True) -> str:
    """Help text as Markdown: ``<value>`` placeholders kept visible (escaped, not HTML), and
    in a table cell on one line with its pipes escaped."""
    spans = text.replace("\\[", "[").split("`")  # odd spans are code: shown as written
    text = "`".join(s if n % 2 else s.replace("<", "&lt;").replace(">", "&gt;")
                    for n, s in enumerate(spans))
    return " ".join(text.split()).replace("|", "\\|") if table else text


def _fields(name: str) -> str:
    """A table of a record's fields (name, type, meaning) from its pydantic model."""
    from agentcredit import schema

    model = getattr(schema, name)
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for field, info in model.model_fields.items():
        rows.append(f"| `{field}` | {_annotation(info.annotation)} | "
                    f"{_cell(info.description or '')} |")
    return "\n".join(rows) + "\n"


def _annotation(kind: Any) -> str:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _annotation(a) for a in args)
    if origin in (tuple, list, frozenset, set):
        return f"list of {_annotation(args[0])}" if args else "list"
    if origin is dict:
        return "object"
    return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(
        kind, getattr(kind, "__name__", str(kind)))


RUN = "`agentcredit run examples/tasks examples/jobs --out run`"
EXAMPLE = {"scores.csv": f"The first rows of {RUN}", "judgments.jsonl": f"The first lines of {RUN}",
           "summary.json": f"What {RUN} writes",
           "analyze.json": "`agentcredit analyze run --json analyze.json --labels "
                           "examples/labels.csv` (each section cut to its first keys)"}


@functools.cache
def _example_run() -> Path:
    """The shipped example scored without a model (and analyzed), once per build."""
    from typer.testing import CliRunner

    from agentcredit.cli.app import app

    root = Path(__file__).parent / "examples"
    out = Path(tempfile.mkdtemp(prefix="agentcredit-docs-")) / "run"
    for args in (["run", str(root / "tasks"), str(root / "jobs"), "--out", str(out)],
                 ["analyze", str(out), "--json", str(out / "analyze.json"),
                  "--labels", str(root / "labels.csv")]):
        done = CliRunner().invoke(app, args)
        if done.exit_code != 0:
            raise RuntimeError(f"agentcredit {' '.join(args)} failed:\n{done.output}")
    return out


def _example(name: str) -> str:
    """The first lines of a file the example run wrote, as a fenced block."""
    text = (_example_run() / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        data = json.loads(text)
        if name == "analyze.json":  # the top level, each section cut to its first keys
            data = {k: (dict(list(v.items())[:3]) if isinstance(v, dict) else v)
                    for k, v in data.items() if k != "meta"}
        text = json.dumps(data, indent=1, ensure_ascii=False)
        return f"{EXAMPLE[name]}:\n\n```json\n{text}\n```\n"
    lines = text.splitlines()[:3]
    lang = "text" if name.endswith(".csv") else "json"
    return f"{EXAMPLE[name]}:\n\n```{lang}\n" + "\n".join(lines) + "\n```\n"
