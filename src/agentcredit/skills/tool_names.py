"""What a tool is, and when a rubric criterion names one: the two halves of S-TOOL.

A *tool* is something an agent invokes: a harness tool-call function (``bash``,
``run_shell_command``, Claude Code's ``Skill``), the command word of a shell segment
(``qpdf``, ``python3``), a package it installs (``pip install pdfplumber``) or a module its
Python or JavaScript code imports (``openpyxl``, ``openpyxl.load_workbook``), also inside the
here-documents and ``python -c`` strings of a shell command, or a function an API reference
documents (``load-problem(domain, problem)``, ``load_problem(...)`` called in its examples).
Tools come from what the agents of the trials ran (:func:`seen_tools`) or, for an imported
skill, from the *code* of its guidance only (:func:`guidance_tools`): shell blocks, imports,
install lines, called functions, API signatures and dotted module paths in inline code.
Prose, assignment targets, dictionary keys and comments never make a tool.

A criterion *names* a tool (:func:`named_tools`) when the tool's name appears as a token,
and, for a name that is also an everyday word ("read", "sort", "skill", "find"), only in a
tool-reference position: in backticks, right after an invocation verb ("ran sort"), right
before a tool noun ("the Skill tool", "the find command"), before an option ("sort -n")
or after "built on"/"relies on". After a preposition ("with", "through", "using"), a name
that is an English word at all is that word, not the tool, when it modifies the prose word
after it ("scholarly sources", "with rich detail"; a plural such as "pandas appear" never
does) or is joined by "and"/"or" to a plain word ("with skill and care").
Whether a word is an everyday one is decided by an English frequency lexicon (the
``pyspellchecker`` word list: 160k words with their counts in subtitles) plus file-format
names, which describe outputs, not tools.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from agentcredit.markdown import code_blocks, inline_code
from agentcredit.schema import Trial
from agentcredit.shell import bash_parser, unquoted
from agentcredit.text import STOP

ToolKind = Literal["call", "command", "package", "module", "function"]

COMMON_WORD_COUNT = 1000
"""A word seen at least this often in the lexicon is an everyday word (``grep`` 0,
``pandas`` 706, ``export`` 2,664, ``sort`` 339,579)."""
ENGLISH_WORD_COUNT = 100
"""A word seen at least this often in the lexicon is an English word at all (``scholarly``
634, ``databases`` 921, ``ssh`` 50): after a name, such a word can be what the name
modifies."""
FORMATS = frozenset({
    "csv", "tsv", "json", "jsonl", "ndjson", "xml", "html", "htm", "yaml", "yml", "toml", "ini",
    "pdf", "doc", "docx", "xls", "xlsx", "xlsm", "ppt", "pptx", "odt", "ods", "md", "markdown",
    "txt", "rtf", "png", "jpg", "jpeg", "gif", "svg", "bmp", "tif", "tiff", "webp", "mp3",
    "mp4", "wav", "sql", "parquet", "bib", "tex", "epub", "log", "zip", "tar", "gz", "utf-8",
    "ascii", "http", "https", "url", "api", "regex", "eof",
})
# Command names that are also ordinary English words (kept beside the lexicon: shell words
# a subtitle corpus rarely has).
ENGLISH_COMMANDS = frozenset({
    "a", "an", "as", "at", "be", "by", "cat", "cut", "date", "diff", "do", "echo", "env",
    "exit", "expand", "false", "file", "find", "fold", "for", "head", "help", "if", "in",
    "join", "kill", "less", "let", "list", "make", "man", "more", "move", "open", "paste",
    "print", "printf", "read", "rename", "reset", "return", "run", "set", "shift", "sort",
    "source", "split", "start", "stat", "sum", "tail", "tee", "test", "time", "top",
    "touch", "tr", "true", "type", "unique", "update", "wait", "watch", "which", "while",
    "yes", "done", "fi", "esac", "then", "else", "elif", "case", "local", "export", "eval",
    "exec", "trap", "wc", "od", "ls",
})
_INVOKE = frozenset({
    "run", "runs", "ran", "running", "rerun", "reruns", "call", "calls", "called", "calling",
    "invoke", "invokes", "invoked", "invoking", "execute", "executes", "executed",
    "executing", "use", "uses", "used", "using", "via", "through", "with",
})
_TOOL_NOUNS = frozenset({
    "tool", "tools", "command", "commands", "cli", "utility", "utilities", "library",
    "libraries", "module", "modules", "package", "packages", "binary", "binaries", "program",
    "function", "functions", "call", "calls", "invocation", "invocations", "subcommand",
    "method", "methods", "api", "executable",
})
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session",
                          "terminal", "shellsession", "sh-session"})
_PY_LANGS = frozenset({"python", "py", "python3", "ipython", "pycon"})
_JS_LANGS = frozenset({"javascript", "js", "typescript", "ts", "node", "jsx", "tsx", "mjs"})
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[^A-Za-z`\n]{0,2}$")
_WORD_AFTER = re.compile(r"^[\s`'\"]{0,2}(-{1,2}[A-Za-z]|[A-Za-z]+)")
# "built on click", "relies on pandas": the object of these is what the work stands on.
_STANDS_ON = re.compile(r"\b(?:built|based|relies|rely|relying|depends|depend|depending)"
                        r"\s+on\s*$", re.IGNORECASE)
# Positions after a preposition, where a plain word reads as often as a tool ("with rich
# detail", "through scholarly databases"); after "ran"/"calls" a name is the tool.
_WEAK = frozenset(f"after {word!r}" for word in ("with", "through", "via", "using", "on"))
# "with skill and care": a name joined to a plain word is that word.
_JOINED = re.compile(r" (?:and|or) ([a-z]+)\b(?![-_(`/]|\.\w)")
_COMMAND = re.compile(r"^[a-z][a-z0-9_.+-]{1,30}$")
_PACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{1,60}")
# An API entry in inline code: `load-problem(domain_path, problem_path)`.
_SIGNATURE = re.compile(r"^([A-Za-z_][\w.-]*[A-Za-z0-9_])\s*\([^()]*\)$")
# A dotted Python path in inline code: `unified_planning.shortcuts.OneshotPlanner`.
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}$")
# A call of a name in Python code (not a method, not a definition).
_BARE_CALL = re.compile(r"(?<![\w.])(?<!def )([A-Za-z_]\w*)\s*\(")
_NEXT_WORD = re.compile(r" ([A-Za-z]+)\b(?![-_(`/]|\.\w)")
# Words after which a name reads as the object of an action, not as a modifier.
_LINKS = frozenset({
    "over", "across", "against", "after", "before", "then", "via", "through", "inside",
    "under", "until", "while", "when", "where", "which", "who", "whose", "instead", "again",
    "first", "once", "only", "here", "also", "directly", "alone", "too", "like", "about",
    "without", "within", "onto", "up", "out", "off", "down", "per", "rather", "but", "nor",
})
_ARG_KEYS = ("command", "cmd", "keystrokes", "script", "input", "code")
_PYTHON = re.compile(r"^(?:python|python3|python3\.\d+|ipython|pypy3?)$")
_PY_FILE_HEREDOC = re.compile(r"\S+\.py\b[^\n]*<<|<<[^\n]*>\s*\S+\.py\b")
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", ":=", "==", "|=", "<-"})
_PREFIXES = frozenset({"sudo", "then", "do", "else", "exec", "nohup", "time", "!", "{",
                       "env", "xargs", "timeout", "command", "export", "local", "readonly",
                       "declare"})
_INSTALLERS = {"pip": "install", "pip3": "install", "uv": "add", "apt": "install",
               "apt-get": "install", "npm": "install", "yarn": "add", "brew": "install",
               "conda": "install", "pipx": "install", "cargo": "install"}
_VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--optional", "--group",
    "--extra", "--git", "--branch", "--tag", "--rev", "--path", "--python", "-p", "--prefix",
    "--root", "--platform", "--python-version", "--only-binary", "--no-binary", "--version",
})
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+?)[ \t]*(?:#.*)?$", re.MULTILINE)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w, \t]+)",
                      re.MULTILINE)
_JS_MODULE = re.compile(r"""require\(\s*['"]([^'"./][^'"]*)['"]\s*\)|"""
                        r"""\bfrom\s+['"]([^'"./][^'"]*)['"]""")
_SUBPROCESS = re.compile(r"""subprocess\.\w+\(\s*\[\s*['"]([\w.+-]+)['"]""")


@dataclass(frozen=True)
class ToolOrigin:
    """Where a tool name came from: its kind and a short, readable place."""

    kind: ToolKind
    where: str

    def __str__(self) -> str:
        return f"{_KIND_WORDS[self.kind]} {self.where}"


_KIND_WORDS = {"call": "a tool call", "command": "a command", "package": "a package installed",
               "module": "a module imported", "function": "a function documented"}
ToolSet = Mapping[str, ToolOrigin]


@functools.lru_cache(maxsize=1)
def _lexicon() -> Mapping[str, int]:
    from spellchecker import SpellChecker  # 0.3 s to load: only when a gate needs it

    counts: Mapping[str, int] = SpellChecker(language="en", distance=1).word_frequency.dictionary
    return counts


def common_word(word: str) -> bool:
    """Whether ``word`` is an everyday English word (or a file format's name).

    >>> [common_word(w) for w in ("sort", "Skill", "csv", "grep", "pdfplumber")]
    [True, True, True, False, False]
    """
    lower = word.lower()
    return lower in FORMATS or lower in ENGLISH_COMMANDS or \
        _lexicon().get(lower, 0) >= COMMON_WORD_COUNT


def tool_shaped(name: str) -> bool:
    """Names no prose word has: digits, dots, underscores, hyphens or inner capitals.

    >>> [tool_shaped(n) for n in ("python3", "openpyxl.load_workbook", "TodoWrite", "grep")]
    [True, True, True, False]
    """
    return bool(re.search(r"[0-9._-]|[a-z][A-Z]", name))


def _add(out: dict[str, ToolOrigin], name: str, kind: ToolKind, where: str) -> None:
    lower = name.lower().strip(".-")
    if len(lower) >= 2 and lower not in STOP and lower not in out:
        out[lower] = ToolOrigin(kind, where)


def seen_tools(trials: Iterable[Trial]) -> dict[str, ToolOrigin]:
    """Tool-call names, and the commands, packages and Python modules run through them, in
    the trials.

    Each name is kept with the first trial (and step) it was seen in.
    """
    out: dict[str, ToolOrigin] = {}
    for trial in trials:
        for number, step in enumerate(trial.steps, 1):
            where = f"in trial {trial.id} (step {number})"
            for call in step.tool_calls:
                _add(out, call.name, "call", where)
                for key in _ARG_KEYS:
                    value = call.arguments.get(key)
                    if isinstance(value, str):
                        found = shell_tools(value)
                        for name, kind in found:
                            _add(out, name, kind, where)
                        for name in shell_python_tools(value, found, code=key == "code"):
                            _add(out, name, "module", where)
    return out


def shell_python_tools(shell: str, found: list[tuple[str, ToolKind]], *,
                       code: bool = False) -> set[str]:
    """Python modules (and their functions) a command text runs: the imports of its
    here-documents and ``-c`` strings when it runs Python or writes a ``.py`` file, or of
    the whole text when it is a code argument.

    >>> sorted(shell_python_tools("python3 - <<'EOF'\\nimport pandas as pd\\nEOF",
    ...                           [("python3", "command")]))
    ['pandas']
    >>> sorted(shell_python_tools('python -c "import json, sys; print(json.dumps(1))"',
    ...                           [("python", "command")]))
    ['json', 'json.dumps', 'sys']
    >>> shell_python_tools('echo "import os"', [("echo", "command")])
    set()
    """
    if code:
        return python_tools(shell)
    runs_python = any(kind == "command" and _PYTHON.match(name) for name, kind in found)
    if not runs_python and not _PY_FILE_HEREDOC.search(shell):
        return set()
    # One-line programs (`-c "import a; b()"`): quotes and semicolons end statements.
    return python_tools(re.sub(r"""[;"']""", "\n", shell))


def guidance_tools(text: str) -> dict[str, ToolOrigin]:
    """Tools the *code* of a guidance text invokes, each with where it was written.

    >>> sorted(guidance_tools(
    ...     "```bash\\npip install pdfplumber\\nqpdf --check in.pdf\\n```\\n"
    ...     "```python\\nimport openpyxl\\nwb = openpyxl.load_workbook(p)\\n"
    ...     "title = wb.title  # the page title\\n```\\nRun `pdftotext -layout a.pdf out.txt`."))
    ['openpyxl', 'openpyxl.load_workbook', 'pdfplumber', 'pdftotext', 'pip', 'qpdf']
    """
    out: dict[str, ToolOrigin] = {}
    for block in code_blocks(text):
        lang, body = block.lang, block.body
        where = f"in the guidance's {lang or 'unlabelled'} code block"
        if lang in _SHELL_LANGS or (not lang and "$ " in body):
            for name, kind in shell_tools(_prompted(body)):
                _add(out, name, kind, where)
        elif lang in _PY_LANGS:
            for name in python_tools(body):
                _add(out, name, "module", where)
            for name in python_calls(body):
                _add(out, name, "function", where)
        elif lang in _JS_LANGS:
            for found in _JS_MODULE.finditer(body):
                _add(out, found.group(1) or found.group(2), "module", where)
    for span in inline_code(text):
        signature = _SIGNATURE.match(span.strip())
        if signature is not None and tool_shaped(signature.group(1)):
            _add(out, signature.group(1), "function", "in the guidance's API reference")
            continue
        if _DOTTED.match(span.strip()) and span.strip().rsplit(".", 1)[1] not in FORMATS:
            for name in _module_names(span.strip()):
                _add(out, name, "module", "in the guidance's inline code")
            continue
        words = span.split()
        if re.search(r"\s=|=\s|\(", span):
            continue  # an expression of code (`diff = abs(a - b)`), not a command line
        if len(words) > 1 and any(re.match(r"-{1,2}[A-Za-z]", w) or "/" in w or
                                  re.search(r"\.\w+$", w) for w in words[1:]):
            for name, kind in shell_tools(span):
                _add(out, name, kind, "in the guidance's inline code")
    return out


def _prompted(body: str) -> str:
    """The command lines of a console transcript (``$ cmd``), or the body when it has none."""
    lines = [line.split("$ ", 1)[1] for line in body.splitlines()
             if line.lstrip().startswith("$ ")]
    return "\n".join(lines) if lines else body


def python_tools(code: str) -> set[str]:
    """Modules a Python text imports, and the functions it calls or imports from them.

    >>> sorted(python_tools("import pandas as pd\\nfrom docx import Document\\n"
    ...                     "df = pd.read_excel(p)\\nsubprocess.run(['qpdf', x])"))
    ['docx', 'docx.Document', 'pandas', 'pandas.read_excel', 'pd.read_excel', 'qpdf']
    """
    names: set[str] = set()
    aliases: dict[str, str] = {}
    for match in _PY_IMPORT.finditer(code):
        for part in match.group(1).split(","):
            pieces = part.split()
            if not pieces:
                continue
            module = pieces[0]
            names |= _module_names(module)
            aliases[pieces[2] if len(pieces) == 3 and pieces[1] == "as" else module] = module
    for match in _PY_FROM.finditer(code):
        module = match.group(1)
        if module.startswith("."):
            continue
        names |= _module_names(module)
        for imported in match.group(2).split(","):
            pieces = imported.split()
            if pieces:
                names.add(f"{module}.{pieces[0]}")
                if tool_shaped(pieces[0]):
                    names.add(pieces[0])
    for alias, module in aliases.items():
        for call in re.finditer(rf"(?<![\w.]){re.escape(alias)}\.([A-Za-z_]\w*)\s*\(", code):
            names |= {f"{module}.{call.group(1)}", f"{alias}.{call.group(1)}"}
    names |= set(_SUBPROCESS.findall(code))
    return names


def python_calls(code: str) -> set[str]:
    """Functions a Python example calls by name (not methods, not builtins), when their
    names are tool-shaped: the API a skill documents (``load_problem(...)``).

    >>> sorted(python_calls("p = load_problem(a, b)\\nplan = generatePlan(p)\\n"
    ...                     "df.to_csv(x)\\nprint(len(plan))\\nraise ValueError(p)"))
    ['generatePlan', 'load_problem']
    """
    return {name for name in _BARE_CALL.findall(code)
            if tool_shaped(name) and not hasattr(builtins, name)}


def _module_names(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:n]) for n in range(1, len(parts) + 1)}


def shell_tools(shell: str) -> list[tuple[str, ToolKind]]:
    """Command words of a shell text, and the packages its install commands name.

    >>> shell_tools("pip install -q pdfplumber==0.11 && rows = 3; qpdf --check x")
    [('pip', 'command'), ('pdfplumber', 'package'), ('qpdf', 'command')]
    >>> shell_tools("function f { ls; }\\nfor x in a; do wc -l $x; done")
    [('ls', 'command'), ('wc', 'command')]
    """
    out: list[tuple[str, ToolKind]] = []
    for words in command_words(shell):
        while words and ("=" in words[0] or words[0] in _PREFIXES):
            words = words[1:]  # sudo, env, xargs, ...
        if not words or words[0] != words[0].lower() or \
                (len(words) > 1 and words[1] in _ASSIGN):
            continue  # commands are lower case; `rows = 3` is code typed into a REPL
        if "/" in words[0] and len(words) == 1 and not words[0].startswith("./"):
            continue  # a path on a line of its own: a location, not a command
        name = words[0].rsplit("/", 1)[-1]
        if not _COMMAND.match(name) or name in STOP:
            continue
        out.append((name, "command"))
        verb = _INSTALLERS.get(name)
        rest = words[1:]
        if name == "uv" and rest[:1] == ["pip"]:
            verb, rest = "install", rest[1:]
        if verb is not None and rest[:1] == [verb]:
            out += [(package, "package") for package in _packages(rest[1:])]
    return out


def command_words(shell: str) -> list[list[str]]:
    """The words of every simple command of a shell text, in order, as the bash grammar
    parses it (tree-sitter): the name, then its arguments (quotes taken off); functions,
    loops, ``case`` arms, subshells, pipelines and ``$(...)`` are entered, here-document
    bodies, comments and quoted text are not commands.

    >>> command_words("case $1 in a) grep -c x y;; esac && cat > a.py <<'EOF'\\nrows = 1\\nEOF")
    [['grep', '-c', 'x', 'y'], ['cat']]
    """
    source = shell.encode("utf-8", "surrogatepass")
    found: list[list[str]] = []
    stack = [bash_parser().parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            name = node.child_by_field_name("name")
            if name is not None:
                found.append([unquoted(name), *(unquoted(a) for a in
                                             node.children_by_field_name("argument"))])
        stack.extend(reversed(node.children))
    return found


def _packages(words: list[str]) -> list[str]:
    """Package names among an install command's arguments (option values, URLs, paths and
    PLACEHOLDERS are not packages)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUE_OPTIONS
            continue
        package = _PACKAGE.match(word)
        if package is None or "://" in word or "/" in word or word.isupper():
            continue
        out.append(re.split(r"[=<>!~\[]", package.group())[0])
    return out


@dataclass(frozen=True)
class NamedTool:
    """A tool a text names: the token as written, the tool, where the tool came from."""

    token: str
    name: str
    origin: ToolOrigin
    position: str

    def describe(self) -> str:
        return f"{self.token!r} ({self.position}; {self.origin})"


def named_tools(text: str, tools: ToolSet) -> list[NamedTool]:
    """The tools of ``tools`` that ``text`` names (see the module docstring for the rule).

    >>> tools = {"skill": ToolOrigin("call", "in trial t1"), "grep": ToolOrigin("command", "")}
    >>> [n.name for n in named_tools("The skill was applied to every page.", tools)]
    []
    >>> [n.position for n in named_tools("Uses the Skill tool, then grep.", tools)]
    ['before a tool noun', 'as a word']
    >>> api = {"rise_time": ToolOrigin("function", "in the guidance's API reference")}
    >>> [n.position for n in named_tools("`rise_time` in metrics.json is under 5 s.", api)]
    []
    >>> [n.position for n in named_tools("The agent calls rise_time on the trace.", api)]
    ["after 'calls'"]
    >>> [n.position for n in named_tools("Its `rise_time(trace)` result is logged.", api)]
    ['as a call']
    """
    found: list[NamedTool] = []
    seen: set[str] = set()
    if not tools:
        return found
    for match in _TOKEN.finditer(text):
        token = match.group().rstrip(".-+")
        lower = token.lower()
        for name in dict.fromkeys((lower, lower.split(".", 1)[0])):
            origin = tools.get(name)
            if origin is None or name in seen:
                continue
            end = match.start() + len(token)
            position = _position(text, match.start(), end)
            if origin.kind == "function":
                # A documented function's name is often an output's field name too
                # (`rise_time`): only a call or an invocation names the function.
                if text[end:end + 1] == "(":
                    position = "as a call"
                elif position == "in backticks":
                    position = None
            elif position is None and not _everyday(token, name, origin) and \
                    not (_lexicon().get(name, 0) and _modifies(text, end)):
                position = "as a word"
            elif position in _WEAK and (_lexicon().get(name, 0) or name in FORMATS) and \
                    not tool_shaped(name) and (_modifies(text, end, title=name in FORMATS)
                                               or _joined_to_prose(text, end, tools)):
                position = None  # "with rich detail", "with skill and care", "with JSON body"
            if position is not None and _not_a_use(text, match.start(), end, name, origin,
                                                   position):
                position = None
            if position is not None:
                seen.add(name)
                found.append(NamedTool(token, name, origin, position))
            break
    return found


_LIBRARY_NOUNS = frozenset({"module", "modules", "library", "libraries", "package", "packages",
                            "method", "methods", "function", "functions", "api"})
_SPAN = re.compile(r"`([^`\n]*)`")


def _not_a_use(text: str, start: int, end: int, name: str, origin: ToolOrigin,
               position: str) -> bool:
    """Whether a name in a tool-reference position is still not used as a tool there: a
    file extension or attribute (``*.json``, ``df.head``) or a folder of a path or URL; a
    field name defined in a list (`` `warnings`: …``); an option's value (`` `-of json` ``);
    one of a list of backticked values that no tool noun follows (`` `ash`, `echo` ``); or a
    harness call or command named like an everyday word before a library noun ("skill
    module", "Replace Method"): a harness tool or a command is not a module.

    >>> call = ToolOrigin("call", "in trial t1")
    >>> [_not_a_use(t, t.index(w), t.index(w) + len(w), w.lower(), call, p) for t, w, p in (
    ...     ("read any helper or skill module", "skill", "before a tool noun"),
    ...     ("uses the Skill tool", "Skill", "before a tool noun"),
    ...     ("voices `ash`, `echo`, `fable`", "echo", "in backticks"),
    ...     ("with `sed`, `echo`, or similar tools", "echo", "in backticks"))]
    [True, False, True, False]
    """
    if start and (text[start - 1] == "." or text[start - 1] == "/" == text[end:end + 1]):
        return True  # an extension or attribute (`*.json`, `df.head`), a URL's or path's part
    if position == "before a tool noun":
        noun = _WORD_AFTER.match(text[end:end + 40])
        return bool(noun and noun.group(1).lower() in _LIBRARY_NOUNS and
                    origin.kind in ("call", "command") and not tool_shaped(name) and
                    _lexicon().get(name, 0) >= ENGLISH_WORD_COUNT)
    if position != "in backticks":
        return False
    span = next((m for m in _SPAN.finditer(text) if m.start() < start < m.end()), None)
    if span is None:
        return False
    inside = span.group(1)
    if inside.strip().lower() == name and text[span.end():span.end() + 1] == ":":
        return True  # `warnings`: what the field holds
    if re.search(r"(?:^|\s)-{1,2}[A-Za-z][\w-]*\s+$", text[span.start() + 1:start]):
        return True  # `-of json`: the option's value
    listed = text[span.end():span.end() + 3].startswith(", `") or \
        text[max(0, span.start() - 3):span.start()].endswith(", ")
    if inside.strip().lower() != name or not listed or tool_shaped(name):
        return False
    tail = re.match(r"(?:[,\s]*(?:and |or )?`[^`\n]*`)*[,\s]*(?:and |or )?(?:\w+ ){0,2}(\w+)",
                    text[span.end():span.end() + 200])
    return not (tail and tail.group(1).lower() in _TOOL_NOUNS)


LANGUAGES = frozenset({"python", "ruby", "perl", "node", "php", "julia", "java", "scala",
                       "rust", "go", "lua", "kotlin", "swift", "haskell", "elixir", "erlang"})
"""Programming languages named like their interpreters: "Python to Scala translation" or
"symbolic mathematics in Python" names the language (a subject), not a run of ``python``."""


def _everyday(token: str, name: str, origin: ToolOrigin) -> bool:
    """Names that count only in a tool-reference position: everyday words, harness tool
    calls named like words (``Skill``, ``Read``), languages named like their interpreters
    (``Python``), and acronyms written in capitals (``SSH`` the protocol, not ``ssh``).

    >>> command = ToolOrigin("command", "")
    >>> [_everyday(t, t.lower(), command) for t in ("jq", "sort", "SSH", "ssh", "python3",
    ...                                            "Python")]
    [False, True, True, False, False, True]
    """
    if tool_shaped(name):
        return False
    if name in LANGUAGES:
        return True
    if token.isupper() and len(token) > 1 and not name.isupper():
        return True
    return (origin.kind == "call" and name.isalpha()) or common_word(name)


def _modifies(text: str, end: int, *, title: bool = False) -> bool:
    """Whether the word ending at ``end`` reads as a modifier of the prose word right after
    it ("scholarly sources", "rich detail"): that next word is a lower-case English word,
    neither a stop word, a preposition nor a tool noun. A tool's name is followed by its
    object's preposition, punctuation or a code token instead ("pandas to load", "grep over
    the log", "pandas DataFrame").

    >>> [_modifies(t, t.index(w) + len(w)) for t, w in (("from scholarly sources", "scholarly"),
    ...     ("ran grep over it", "grep"), ("with pandas.", "pandas"), ("a pandas DataFrame",
    ...     "pandas"), ("with rich detail", "rich"), ("the Skill tool", "Skill"),
    ...     ("computed with pandas appear", "pandas"))]
    [True, False, False, False, True, False, False]
    """
    if text[end - 1] == "s" and text[end - 2:end] != "ss":
        return False  # a plural is what a verb follows ("pandas appear"), not a modifier
    after = _NEXT_WORD.match(text, end)
    if after is None:
        return False
    word = after.group(1)
    if title and word.istitle():  # a format in a heading: "with JSON Output"
        word = word.lower()
    return word.islower() and word not in STOP and word not in _LINKS and \
        word not in _TOOL_NOUNS and _lexicon().get(word, 0) >= ENGLISH_WORD_COUNT


def _joined_to_prose(text: str, end: int, tools: ToolSet) -> bool:
    """Whether the word ending at ``end`` is joined by "and"/"or" to a plain English word
    that is no tool ("with skill and care"), rather than to another tool ("with grep and
    sed")."""
    after = _JOINED.match(text, end)
    if after is None:
        return False
    word = after.group(1)
    return word not in tools and word not in STOP and \
        _lexicon().get(word, 0) >= ENGLISH_WORD_COUNT


def _position(text: str, start: int, end: int) -> str | None:
    """The tool-reference position a token at ``start:end`` is in, if any."""
    if text.count("`", 0, start) % 2 == 1 and "`" in text[end:]:
        return "in backticks"
    before = _WORD_BEFORE.search(text[max(0, start - 40):start])
    if before and before.group(1).lower() in _INVOKE:
        return f"after {before.group(1)!r}"
    if _STANDS_ON.search(text[max(0, start - 40):start]):
        return "after 'on'"
    after = _WORD_AFTER.match(text[end:end + 40])
    if after:
        word = after.group(1)
        if word.startswith("-"):
            return "before an option"
        if word.lower() in _TOOL_NOUNS:
            return "before a tool noun"
    return None
