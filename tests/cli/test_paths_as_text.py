"""Issue 61, item 4: every library function that takes a path takes it as ``str`` too."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from agentcredit.checklists import load_checklists
from agentcredit.llm import ModelSpec, register_script
from agentcredit.skills.bank import freeze_bank, load_bank
from agentcredit.store import RunStore, write_rows
from tests.conftest import EXAMPLES
from tests.serve.conftest import make_bank_dir

PUBLIC = ("agentcredit", "agentcredit.skills", "agentcredit.rewards", "agentcredit.evolve",
          "agentcredit.checklists", "agentcredit.llm", "agentcredit.formats", "agentcredit.store",
          "agentcredit.skills.bank")


def _inputs_typed_path_only() -> list[str]:
    found = []
    for name in PUBLIC:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", None) or dir(module):
            obj = getattr(module, attr, None)
            if not inspect.isfunction(obj) or attr.startswith("_") or \
                    not obj.__module__.startswith(name) or "lock" in attr:
                continue  # imported helpers and the lock files' own readers are not API
            for param in inspect.signature(obj).parameters.values():
                kind = str(param.annotation)
                if "Path" in kind and "str" not in kind.lower():
                    found.append(f"{name}.{attr}({param.name}: {kind})")
    return found


def test_no_public_function_takes_a_path_it_would_refuse_as_text() -> None:
    assert _inputs_typed_path_only() == []


def test_text_paths_work_where_the_readme_uses_them(tmp_path: Path) -> None:
    bank_dir = make_bank_dir(tmp_path)
    bank = load_bank(str(bank_dir))
    assert freeze_bank(bank, str(tmp_path / "copy")).exists()
    assert load_bank(str(tmp_path / "copy")).hash == bank.hash
    assert load_checklists(str(tmp_path / "none")) == {}
    store = RunStore(str(tmp_path / "run"))
    store.close()
    assert write_rows([{"a": 1}], str(tmp_path / "rows.csv"), "csv").read_text() == "a\n1\n"
    register_script("as-text", lambda messages, schema: "{}")
    spec = ModelSpec("scripted/as-text", cache=str(tmp_path / "cache.sqlite"))
    assert spec.client().cache is not None and isinstance(spec.cache, Path)
    import agentcredit

    result = agentcredit.score(str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               str(tmp_path / "scored"), rules=None)
    assert result.trials == 8
