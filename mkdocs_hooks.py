"""MkDocs hooks: the reference pages written from the code at build time.

A page holding ``<!-- agentcredit:cli -->`` gets every command's options from the Typer app,
``<!-- agentcredit:schemas -->`` the JSON schemas of the records agentcredit writes (from
their pydantic models), ``<!-- agentcredit:openapi -->`` the reward service's OpenAPI
document. A new option, field or route appears without editing a page.
"""

from __future__ import annotations

import json
from typing import Any


def on_page_markdown(markdown: str, **_: Any) -> str:
    if "<!-- agentcredit:cli -->" in markdown:
        markdown = markdown.replace("<!-- agentcredit:cli -->", _cli())
    if "<!-- agentcredit:schemas -->" in markdown:
        markdown = markdown.replace("<!-- agentcredit:schemas -->", _schemas())
    if "<!-- agentcredit:openapi -->" in markdown:
        markdown = markdown.replace("<!-- agentcredit:openapi -->", _openapi())
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
            kind = "flag" if is_flag else _type(getattr(param, "type", None))
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


def _type(kind: Any) -> str:
    choices = getattr(kind, "choices", None)
    if choices:
        return " \\| ".join(f"`{c}`" for c in choices)
    return {"text": "text", "integer": "integer", "float": "number", "path": "path",
            "boolean": "yes/no"}.get(getattr(kind, "name", ""), getattr(kind, "name", "text"))


def _cell(text: str, *, table: bool = True) -> str:
    """Help text as Markdown: ``<value>`` placeholders kept visible (escaped, not HTML), and
    in a table cell on one line with its pipes escaped."""
    spans = text.replace("\\[", "[").split("`")  # odd spans are code: shown as written
    text = "`".join(s if n % 2 else s.replace("<", "&lt;").replace(">", "&gt;")
                    for n, s in enumerate(spans))
    return " ".join(text.split()).replace("|", "\\|") if table else text


def _schemas() -> str:
    from agentcredit.schema import Checklist, ItemJudgment, SkillBank, TrialVerdict
    from agentcredit.store.scores import SCORE_COLUMNS

    parts = [f"## `scores.csv` columns\n\n{', '.join(f'`{c}`' for c in SCORE_COLUMNS)}\n"]
    for title, model in (("A frozen checklist (`checklists/TASK.json`)", Checklist),
                         ("A judgment (`judgments.jsonl`, one per line)", ItemJudgment),
                         ("A turn-level verdict (`turn_verdicts` in the run store)", TrialVerdict),
                         ("A skill bank (`bank.json`)", SkillBank)):
        schema = json.dumps(model.model_json_schema(), indent=1)
        parts.append(f"## {title}\n\n```json\n{schema}\n```\n")
    return "\n".join(parts)


def _openapi() -> str:
    from agentcredit.serve.models import openapi_document
    from agentcredit.version import __version__

    return f"```json\n{json.dumps(openapi_document(__version__), indent=1)}\n```\n"
