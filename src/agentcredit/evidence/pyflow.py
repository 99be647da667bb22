"""What a Python program the agent wrote prints, from the flow of values through it.

A value is ``literal`` (a constant printed as written), ``pure`` (computed from constants
only: ``len()`` of its own list, arithmetic, an f-string of its own numbers, a decoder run
on its own string) or ``real`` (it depends on something outside the program: a file, a
process, the network, the environment, the clock, an argument, a name the program never
bound). Printing is ``print``, ``sys.stdout.write``, ``logging``/``logger`` calls and
``json.dump`` to stdout. Pure; code that does not parse is None (the caller decides).
"""

from __future__ import annotations

import ast
import builtins
import threading
from collections.abc import Callable
from typing import Literal

Taint = Literal["none", "literal", "pure", "real", "rewritten"]

_BUILTINS = frozenset(dir(builtins)) - {"open", "input", "exec", "eval", "compile",
                                        "__import__", "globals", "locals", "vars", "id",
                                        "hash", "breakpoint", "memoryview"}
# Modules whose functions compute from their arguments alone.
_PURE_MODULES = frozenset({"math", "string", "itertools", "functools", "decimal", "fractions",
                           "statistics", "operator", "textwrap", "json", "re", "codecs",
                           "base64", "binascii", "zlib", "collections", "dataclasses",
                           "typing", "enum", "copy", "heapq", "bisect", "unicodedata",
                           "html", "struct", "pprint", "array", "numbers", "logging",
                           "sys", "__future__"})
_PRINTERS = frozenset({"print", "write", "info", "debug", "warning", "warn", "error",
                       "critical", "exception", "log", "dump", "pprint", "echo", "success"})
_REAL_ATTRIBUTES = frozenset({"stdin", "argv", "environ", "path", "load", "loads_file",
                              "read", "readline", "readlines", "read_text", "read_bytes",
                              "listdir", "walk", "glob", "iterdir", "getenv", "time",
                              "now", "today", "random", "urandom", "system", "popen",
                              "run", "check_output", "Popen", "get", "post", "urlopen",
                              "connect", "execute", "fetchall", "fetchone", "read_csv",
                              "read_json", "read_excel", "load_workbook", "scandir"})


_ORDER: tuple[Taint, ...] = ("rewritten", "real", "pure", "literal")


def join_taints(*taints: Taint) -> Taint:
    """The taint of text made of parts of these taints (``none`` parts add nothing).

    >>> join_taints("literal", "pure"), join_taints("literal", "real"), join_taints("none")
    ('pure', 'real', 'none')
    """
    found = set(taints)
    for taint in _ORDER:
        if taint in found:
            return taint
    return "none"


_join = join_taints
_PARSING = threading.Lock()


Modules = Callable[[str], "str | None"]
"""The source of a module the agent wrote, by its dotted name ("" when its text is not
known; None: not the agent's)."""


class _Flow:
    def __init__(self, tree: ast.Module, own: Modules | None = None, depth: int = 0,
                 unbound: Taint = "real") -> None:
        self.own = own
        self.depth = depth
        self.unbound = unbound  # what a parameter no call here binds holds
        self.owned: dict[str, dict[str, Taint]] = {}  # import mod (the agent's): its names
        self.computed: set[str] = set()  # names bound to a computed value
        self.continued = False
        self.names: dict[str, Taint] = {}
        self.modules: dict[str, str] = {}
        self.params: dict[str, Taint] = {}
        self.printed: set[Taint] = set()
        self.written: dict[str, Taint] = {}  # file path -> what the program wrote there
        self.handles: dict[str, str] = {}  # with open(path, "w") as name
        self.tree = tree

    def run(self) -> set[Taint]:
        for _ in range(3):  # to a fixed point: a name bound later, used in a loop earlier
            self.printed = set()
            self.continued = False
            self._calls()
            for node in ast.walk(self.tree):
                self.visit(node)
        if self.continued and {"pure", "real"} <= self.printed:
            self.printed.add("rewritten")  # lines put together from both
        return self.printed

    def _calls(self) -> None:
        """Each function's parameters take the values it is called with (real when it is
        never called here: a callback, an entry point)."""
        found: dict[str, list[Taint]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                args = [self.value(a) for a in node.args] + \
                       [self.value(k.value) for k in node.keywords]
                found.setdefault(node.func.id, []).append(_join("literal", *args))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                calls = found.get(getattr(node, "name", ""), [])
                taint = _join(*calls) if calls else self.unbound
                for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs,
                            *filter(None, [node.args.vararg, node.args.kwarg])]:
                    self.names[arg.arg] = taint

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            module = getattr(node, "module", None)
            if self._imports_own(node, module):
                return
            for alias in node.names:
                root = (module or alias.name).split(".")[0]
                self.modules[alias.asname or alias.name.split(".")[0]] = root
                if module is not None:
                    self.names[alias.asname or alias.name] = \
                        "literal" if root in _PURE_MODULES else "real"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            value = getattr(node, "value", None)
            taint = self.value(value) if value is not None else "literal"
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and value is not None and \
                            self._computed(value):
                        self.computed.add(name.id)
                    if isinstance(name, ast.Name):
                        old = self.names.get(name.id, "none")
                        self.names[name.id] = _join(old, taint) if isinstance(
                            node, ast.AugAssign) else _join(taint, self._kept(name.id, old))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            taint = self.value(node.iter)
            counts = [n.target for n in ast.walk(node) if isinstance(n, ast.AugAssign)] \
                if taint in ("real", "rewritten") else []  # a count kept over real values
            for name in (n for t in [node.target, *counts] for n in ast.walk(t)):
                if isinstance(name, ast.Name):
                    self.names[name.id] = _join(taint, self.names.get(name.id, "none"))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                path = _opened_for_writing(item.context_expr)
                if path is not None and isinstance(item.optional_vars, ast.Name):
                    self.handles[item.optional_vars.id] = path
                if item.optional_vars is not None:
                    for name in ast.walk(item.optional_vars):
                        if isinstance(name, ast.Name):
                            self.names[name.id] = self.value(item.context_expr)
        elif isinstance(node, ast.Call) and self._writes(node):
            pass
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("exec", "eval"):
            self.printed.add(_join("pure", *map(self.value, node.args)))  # code it made
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and not self._prints(node):
            owner = node.func.value.id  # rows.append(x): what rows holds now includes x
            if owner in self.names:
                self.names[owner] = _join(self.names[owner], *(
                    self.value(a) for a in [*node.args, *(k.value for k in node.keywords)]))
        elif isinstance(node, ast.Call) and self._prints(node):
            self._print(node)

    def _print(self, node: ast.Call) -> None:
        """What one print call puts out, and whether the next one continues its line."""
        args = [a for a in node.args if not (isinstance(node.func, ast.Attribute)
                                             and node.func.attr == "dump" and a is
                                             node.args[-1] and len(node.args) > 1)]
        shown = [p for a in args for p in (
            [v.value for v in a.values if isinstance(v, ast.FormattedValue)]
            if isinstance(a, ast.JoinedStr) else [a])]
        parts = [self.value(p) for p in shown]
        mixed = "real" in parts and any(  # its count beside a real timer
            taint == "pure" and self._computed(p) for p, taint in zip(shown, parts,
                                                                      strict=True))
        self.printed.add("rewritten" if mixed else _join("literal", *parts))
        ends = next((k.value for k in node.keywords if k.arg == "end"), None)
        if ends is not None and not (isinstance(ends, ast.Constant) and "\n" in str(
                ends.value)):
            self.continued = True  # the next print goes on the same line

    def _imports_own(self, node: ast.Import | ast.ImportFrom, module: str | None) -> bool:
        """Names imported from a module the agent wrote hold what they hold there (a
        module whose text is not known holds the agent's values: deny by default)."""
        if self.own is None or (isinstance(node, ast.ImportFrom) and node.level) or self.depth > 3:
            return False
        for alias in node.names:
            source = self.own(module or alias.name)
            if source is None:
                return False
            names = _names_of(source, self.own, self.depth + 1)
            if module is not None:
                self.names[alias.asname or alias.name] = names.get(alias.name, "pure")
            else:
                self.owned[alias.asname or alias.name.split(".")[0]] = names
        return True

    def _computed(self, node: ast.expr) -> bool:
        """Whether an expression computes a value (a count, a sum) rather than picks one
        of the program's constants (a label)."""
        if isinstance(node, ast.Name):
            return node.id in self.computed
        return isinstance(node, ast.Call | ast.BinOp | ast.UnaryOp | ast.BoolOp) and not (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id in ("str", "repr", "format"))

    def _writes(self, node: ast.Call) -> bool:
        """``json.dump(x, f)``, ``f.write(x)``, ``Path(p).write_text(x)`` to a named file:
        the file holds what ``x`` is (re-serialised: computed from it)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or not node.args:
            return False
        target: ast.expr | None = None
        if func.attr in ("dump",) and len(node.args) > 1:
            target = node.args[1]
        elif func.attr in ("write", "write_text", "writelines"):
            target = func.value
        if target is None:
            return False
        path = _opened_for_writing(target)
        if path is None and isinstance(target, ast.Name):
            path = self.handles.get(target.id)
        if path is None:
            return False
        taint = self.value(node.args[0])
        if func.attr == "dump" and taint == "literal":
            taint = "pure"  # the literal as the library writes it, not as it was typed
        self.written[path] = _join(self.written.get(path, "none"), taint)
        return True

    def _kept(self, name: str, old: Taint) -> Taint:
        """A name bound twice keeps the worse of its values (any order of execution)."""
        return old if old in ("real", "rewritten") else "none"

    def _prints(self, node: ast.Call) -> bool:
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in ("print", "pprint")
        if isinstance(func, ast.Attribute) and func.attr in _PRINTERS:
            base = ast.unparse(func.value)
            return func.attr != "write" or base in ("sys.stdout", "sys.stderr") or \
                base.endswith(("logger", "logging", "log", "console")) or \
                (func.attr in ("dump",) and "stdout" in ast.unparse(node))
        return False

    def value(self, node: ast.AST | None) -> Taint:
        """The taint of an expression's value."""
        if node is None:
            return "none"
        if isinstance(node, ast.Constant):
            return "literal"
        if isinstance(node, ast.Name):
            if node.id in self.names:
                taint = self.names[node.id]
                return "pure" if taint == "literal" else taint
            if node.id in self.modules:
                return "literal" if self.modules[node.id] in _PURE_MODULES else "real"
            return "pure" if node.id in _BUILTINS else "real"
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.owned:
                return self.owned[node.value.id].get(node.attr, "pure").replace(
                    "literal", "pure")  # type: ignore[return-value]
            if node.attr in _REAL_ATTRIBUTES:
                return "real"
            return self.value(node.value)
        if isinstance(node, ast.Call):
            parts = [self.value(node.func), *(self.value(a) for a in node.args),
                     *(self.value(k.value) for k in node.keywords)]
            taint = _join(*parts)
            return "pure" if taint == "literal" else taint
        if isinstance(node, ast.Lambda):
            return "pure"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and any(
                isinstance(side, ast.Constant) and isinstance(side.value, str)
                for side in (node.left, node.right)):
            return _join("literal", self.value(node.left), self.value(node.right)).replace(
                "pure", "literal")  # type: ignore[return-value]  # "=" * 60: a rule line
        children = [self.value(c) for c in ast.iter_child_nodes(node)
                    if isinstance(c, ast.expr)]
        taint = _join("literal", *children)
        if isinstance(node, ast.JoinedStr | ast.List | ast.Tuple | ast.Dict | ast.Set) and \
                taint == "literal":
            return "pure" if isinstance(node, ast.JoinedStr) and node.values and any(
                isinstance(v, ast.FormattedValue) for v in node.values) else "literal"
        return "pure" if taint == "literal" else taint


def _opened_for_writing(node: ast.expr) -> str | None:
    """The constant path of ``open(path, "w")`` or ``Path(path)`` (None otherwise)."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    name = node.func.id if isinstance(node.func, ast.Name) else \
        node.func.attr if isinstance(node.func, ast.Attribute) else ""
    first = node.args[0]
    if not isinstance(first, ast.Constant) or not isinstance(first.value, str):
        return None
    if name == "open":
        mode = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "mode"), None)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and \
                any(c in mode.value for c in "wax"):
            return first.value
        return None
    return first.value if name in ("Path", "PurePath") else None


def _parse(code: str) -> ast.Module | None:
    try:
        with _PARSING:  # CPython 3.11's parser keeps a recursion count that threads share
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, SystemError):
        return None


def _names_of(source: str, own: Modules, depth: int) -> dict[str, Taint]:
    """What each top-level name of a module the agent wrote holds (a function: what it
    returns from what it is given)."""
    tree = _parse(source)
    if tree is None:
        return {}
    flow = _Flow(tree, own, depth, unbound="literal")
    flow.run()
    names = dict(flow.names)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = _join("pure", *(flow.value(r.value) for r in ast.walk(node)
                                               if isinstance(r, ast.Return)))
    return names


def python_flow(code: str, own: Modules | None = None
                ) -> tuple[set[Taint], dict[str, Taint]] | None:
    """What a Python program prints, and what it writes to each file it names (None: it
    does not parse); ``own`` finds the modules the agent wrote, which its imports follow."""
    found = _FLOWS.get(code)
    if found is not None:
        return found
    tree = _parse(code)
    if tree is None:
        return None
    followed: list[str] = []

    def mine(name: str) -> str | None:
        source = own(name) if own is not None else None
        if source is not None:
            followed.append(name)
        return source

    flow = _Flow(tree, mine)
    found = flow.run(), flow.written
    if not followed:  # the same code, run again, prints the same (a loop's one-liner)
        if len(_FLOWS) >= 1024:
            _FLOWS.clear()
        _FLOWS[code] = found
    return found


_FLOWS: dict[str, tuple[set[Taint], dict[str, Taint]]] = {}
