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
        parts.append((command.help or "").strip() + "\n")
        rows = ["| option | what it does |", "|---|---|"]
        for param in command.params:
            if param.param_type_name == "argument":
                rows.append(f"| `{(param.name or '').upper()}` (argument) | "
                            f"{_cell(getattr(param, 'help', '') or '')} |")
            elif param.param_type_name == "option" and not getattr(param, "hidden", False):
                names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                default = "" if param.default in (None, False, ()) or param.is_flag \
                    else f" (default: `{param.default}`)"
                rows.append(f"| {names} | {_cell(param.help or '')}{default} |")
        parts.append("\n".join(rows) + "\n")

    walk(root, [])
    return "\n".join(parts)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("\\[", "[")


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
