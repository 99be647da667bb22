"""What the agent controls across a whole trial, and which steps' output it controls.

Provenance line by line (:mod:`agentcredit.evidence.authored`) finds the agent's text where
it shows verbatim. An adaptive agent moves its text through steps instead: a variable set
in one step and printed in another, a function or a script it wrote, a count computed from
its own constants, a filter it put after a real tool, a decoder. This module follows that
flow over the whole trial, reading each shell command as bash does (tree-sitter), and
gives every printed stream one of these taints:

- ``literal``: text the agent typed, printed as typed (the line rules find it);
- ``pure``: computed from nothing but what the agent typed (arithmetic, expansions of its
  own variables, decoders, its own programs that read nothing);
- ``real``: computed by something the agent did not write (a test runner, ``wc`` of a data
  file, the agent's program reading the task's data);
- ``rewritten``: real output passed through something the agent controls that can change
  it (``sed s///``, ``tr``, ``awk`` with text of its own, a wrapper or PATH shim it wrote,
  a test-framework hook it planted).

A step whose output holds anything ``rewritten`` or ``pure`` (beside ``real`` output,
which line is which cannot be told) is *controlled*: none of its lines backs a ``yes``;
``literal`` text is left to the line rules, which find it where it shows. Deny by default:
a name the agent defined (a function, an alias, a script on PATH, a Makefile or
``package.json`` script it wrote) is followed into what it runs; a command string a wrapper
carries (``docker exec c sh -c '…'``, ``ssh host cmd``, ``xargs sh -c``) is read as the
command it is; what the walk cannot follow is the agent's (a terminal's bytes, a process it
left running or a page such a process serves, a program built from its sources in a language
without value flow, a notebook); and the state it wrote (commits, rows, names, files found by
a harness's search tool) shown back carries its taint. Filters and dumps that put in no text
of their own (``hexdump``, ``od``, ``sed 's/<[^>]*>/ /g'``) keep real bytes real. What the
agent's program computes from real data stays ``real``: that is the work. Each tool call is
decided on its own: one call's stream never demotes another's.

The same walk finds actions that rig the measurement
(:class:`agentcredit.schema.RiggingFlag`). Pure.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agentcredit.evidence.provenance import without_strings
from agentcredit.evidence.pyflow import Taint, python_flow
from agentcredit.evidence.pyflow import join_taints as _join
from agentcredit.evidence.rigging import (
    TOOL_PATH_KEYS,
    TOOL_TEXT_KEYS,
    forces_outcomes,
    rigging_flags,
)
from agentcredit.schema import RiggingFlag, Trial
from agentcredit.shell import Stage, bash_parser, node_text, plain_line, unquoted

TEST_RUNNERS = frozenset({"pytest", "py.test", "tox", "nox", "unittest", "nosetests", "jest",
                          "vitest", "mocha", "npm", "npx", "yarn", "pnpm", "go", "cargo", "make",
                          "ctest", "mvn", "gradle", "dotnet", "rspec", "rake", "phpunit", "bats",
                          "behave"})
_PYTHONS = frozenset({"python", "python3", "python2", "pypy3", "uv", "poetry", "pipenv"})
# Programs that pass their input through (or a selection of it) without writing text of
# their own; ``prefix`` ones add a line number or count (the line rules strip those).
_PASSTHROUGH = frozenset({"cat", "tee", "head", "tail", "sort", "uniq", "cut", "grep", "egrep",
                          "fgrep", "rg", "less", "more", "column", "tac", "nl", "fold", "fmt",
                          "paste", "expand", "unexpand", "strings"})
_COUNTERS = frozenset({"wc", "md5sum", "sha256sum", "sha1sum", "cksum", "b2sum"})
# Programs that write text of their own into what passes through them.
_REWRITERS = frozenset({"sed", "tr", "jq", "yq", "figlet", "toilet", "cowsay", "bc", "dc", "awk",
                        "gawk", "mawk", "nawk", "envsubst", "m4", "perl", "ruby"})
# Programs that transform what passes through them by a fixed rule, with no text of their
# own: real bytes stay real (offsets, hex, a decoding), the agent's text stays its own.
_TRANSFORMS = frozenset({"rev", "base64", "base32", "basenc", "xxd", "od", "hexdump", "hd",
                         "iconv", "recode"})
_EMITTERS = frozenset({"echo", "printf", "yes", "seq", "expr", "let", "test", "[", "[[",
                       "true", "false", ":"})
_SILENT = frozenset({"cd", "export", "set", "unset", "local", "declare", "typeset", "readonly",
                     "return", "exit", "sleep", "clear", "shift", "alias", "unalias", "hash",
                     "wait", "umask", "shopt", "chmod", "chown", "mkdir", "touch", "rm",
                     "rmdir", "ln", "pushd", "popd", "disown"})
_INTERPRETERS = {"python": "-c", "python3": "-c", "python2": "-c", "pypy3": "-c",
                 "node": "-e", "nodejs": "-e", "perl": "-e", "ruby": "-e", "php": "-r",
                 "lua": "-e", "bash": "-c", "sh": "-c", "zsh": "-c", "dash": "-c",
                 "expect": "-c"}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "source", "."})
# Words that run the command after them (``sudo cmd``, ``timeout 10 cmd``).
_PREFIXES = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "builtin", "nice",
                       "timeout", "stdbuf", "unbuffer", "xargs", "script", "strace", "ltrace",
                       "chroot", "runuser", "su", "setsid", "ionice", "taskset"})
_DETACH = frozenset({"nohup", "setsid", "disown", "daemonize", "start-stop-daemon"})
# Programs whose output is a terminal's bytes: whatever the agent typed or ran on it.
_TERMINALS = frozenset({"watch", "tmux", "screen"})
# Programs that show the state the agent put somewhere: a repository, a database, a
# listing of names, a page served by a process it started.
_REPOSITORY = frozenset({"git", "hg", "svn"})
_DATABASES = frozenset({"sqlite3", "psql", "mysql", "mariadb", "mongo", "mongosh", "redis-cli",
                        "duckdb", "clickhouse-client"})
_LISTERS = frozenset({"ls", "find", "tree", "du", "stat", "dir", "fd", "locate"})
_NETWORK = frozenset({"curl", "wget", "http", "https", "xh", "nc", "ncat", "websocat"})
_LOCAL = re.compile(r"(?:^|[/@])(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\])(?:[:/]|$)")
# Programs that build or run sources in a language without value flow here: what the
# agent's sources make is its own (deny by default).
_BUILDERS = frozenset({"gcc", "cc", "g++", "c++", "clang", "clang++", "rustc", "javac", "tsc",
                       "nvcc", "gfortran", "kotlinc", "swiftc", "ghc", "zig", "go", "cargo",
                       "java", "dotnet", "deno", "Rscript", "julia", "runghc", "swift",
                       "scala", "kotlin", "ts-node", "tsx", "jupyter", "papermill", "ipython",
                       "jupyter-nbconvert"})
_CODE_FILE = re.compile(r"\.(?:c|h|cc|cpp|cxx|hpp|rs|go|java|kt|scala|swift|hs|zig|ts|tsx|jl|"
                        r"r|R|cu|f90|cs|ipynb|mod|toml)$")
_PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin",
              "/root/.local/bin", "~/.local/bin", "~/bin")
_SPECIAL_REAL = frozenset({"?", "!", "$", "RANDOM", "SECONDS", "LINENO", "PWD", "HOME",
                           "USER", "HOSTNAME", "PPID", "BASHPID", "EPOCHSECONDS"})
_POSITIONAL = frozenset({"@", "*", "#", *map(str, range(10))})
# Names in code (not Python) that reach a file, process, network or the environment.
_REACHES = re.compile(
    r"\b(?:open|read\w*|input|exec|eval|subprocess|os\.|sys\.(?:stdin|argv)|pathlib|Path|glob|"
    r"listdir|walk|scandir|stdin|environ|getenv|urllib|requests|socket|http|fetch|require|"
    r"fs\.|child_process|process\.(?:argv|env|stdin)|sqlite3|pandas|numpy|np\.|csv|pickle|"
    r"ARGV|ENV|STDIN|File|IO\.|Dir\.|gets|load\w*|importlib|__import__|shutil|tempfile|"
    r"platform|time\.time|datetime\.now|random|uuid|hashlib\.file)\b")
_SUBAGENT_TOOLS = frozenset({"task", "agent", "dispatch_agent", "subagent", "delegate"})
_SHELL_KEYS = ("command", "cmd", "keystrokes", "script", "code", "input")


@dataclass(frozen=True)
class StepControl:
    """Whether the agent controls a step's output, and why."""

    controlled: bool
    reason: str = ""
    calls: tuple[bool, ...] = ()  # per tool call of the step, whether the agent controls it


@dataclass(frozen=True)
class TrialFlow:
    """The verdict of the walk over one trial: per step number (1-based), and its flags
    (found in ``calls()``, the steps' tool calls, when first asked: judging takes them,
    with the task's tests, from :func:`agentcredit.evidence.rigging.trial_rigging`)."""

    steps: dict[int, StepControl]
    calls: Callable[[], Sequence[Sequence[tuple[str, dict[str, Any]]] | None]]

    @cached_property
    def flags(self) -> tuple[RiggingFlag, ...]:
        return rigging_flags(self.calls())


@dataclass
class _File:
    taint: Taint
    content: str | None = None  # the text, when the agent typed all of it
    edited: bool = False  # the agent edited it without the walk knowing all of it


@dataclass
class _Scope:
    """What the agent defined so far: it persists across steps (a terminal's shell does;
    deny by default where a harness's does not)."""

    variables: dict[str, Taint] = field(default_factory=dict)
    functions: dict[str, Any] = field(default_factory=dict)  # name -> body node
    shims: dict[str, str] = field(default_factory=dict)  # command name -> shell text
    files: dict[str, _File] = field(default_factory=dict)
    path_dirs: set[str] = field(default_factory=lambda: set(_PATH_DIRS))
    cwd: str = ""
    hooked: bool = False  # a test-framework hook that forces outcomes was written
    started: bool = False  # the agent started a process in the background
    background: Taint = "none"  # what processes it left running print
    state: dict[str, Taint] = field(default_factory=dict)  # its commits, rows, names
    values: dict[str, str] = field(default_factory=dict)  # variables holding typed text
    step: int = 0


# A command line the fast reader takes: plain words (no quotes, expansions, globs of
# braces, subshells, here-documents or comments), pipes, lists and simple redirections.
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_STORES = re.compile(r"\b(?:insert|update|replace|create|copy|set|hset|lpush|rpush|sadd|zadd|"
                     r"import|load)\b|^\.read\b", re.IGNORECASE)
# A Python program putting text of its own into what it reads: a replacement of letters.
_INSERTS = re.compile(r"(?:replace|sub|translate|maketrans)\s*\([^)]*?['\"][^'\"]*[^\W_]")
_SEARCHES = re.compile(r"grep|glob|search_file|list_dir|^ls$|find_file|read_many")
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
# What an edit must put in to print text of its own through a program it did not write.
_PRINTS = re.compile(r"\b(?:print\w*|echo|puts|say|console|write\w*|log\w*|info|warn\w*|"
                     r"exit|_exit|assert|skip)\b")
_BACKGROUND = re.compile(r"(?<![>&\d])&(?![>&])")
# Syntax newer Pythons added (formatted or template strings, ``type``, generics, ``except``).
_NEWER_SYNTAX = re.compile(r"""(?<![\w'"])(?:[fFtT][rR]?|[rR][fFtT])['"]|(?m:^\s*(?:type|"""
                           r"except)\b)|(?:def|class)\s+\w+\s*\[")


_SPECIAL = (_SILENT | _EMITTERS | _INTERPRETERS.keys() | _PYTHONS | _SHELLS | _PASSTHROUGH
            | _COUNTERS | _REWRITERS | _TRANSFORMS | _TERMINALS | _REPOSITORY | _DATABASES
            | _LISTERS | _NETWORK | _BUILDERS
            | {"make", "npm", "yarn", "pnpm", "bun", "tee", "cp", "mv", "install", "node", "ruby",
               "php"})
"""Names :meth:`_Walk.program` looks at; any other program is one the agent did not write."""
_RUNNABLE = ((_EMITTERS - {"test", "[", "[[", "true", "false", ":", "yes"}) | (_SHELLS - {"."})
             | _INTERPRETERS.keys() | _PYTHONS | _BUILDERS | _TERMINALS
             | {"make", "npm", "yarn", "pnpm", "bun", "node"})


def _beside(*shown: Taint) -> Taint:
    """What a real program prints when it shows state holding the agent's text."""
    return "rewritten" if not {"pure", "rewritten"}.isdisjoint(shown) else "real"


def _through(taint: Taint) -> Taint:
    """What a rewriting stage makes of its input."""
    if taint in ("real", "rewritten"):
        return "rewritten"
    return "pure"


class _Walk:
    """One trial's walk: a scope and what each statement prints."""

    def __init__(self) -> None:
        self.scope = _Scope()
        self.depth = 0
        self.heredoc: str | None = None  # the here-document fed to the statement at hand

    # -- files ---------------------------------------------------------------------------
    def path(self, raw: str) -> str:
        raw = raw.strip()
        if "$" in raw:  # a variable holding a typed path
            raw = _VARIABLE.sub(lambda m: self.scope.values.get(m.group(1) or m.group(2),
                                                                m.group(0)), raw)
        if raw.startswith("~"):
            raw = "/root" + raw[1:]
        if not raw.startswith("/") and self.scope.cwd:
            raw = posixpath.join(self.scope.cwd, raw)
        if "/." in raw or "//" in raw or raw.startswith(".") or raw.endswith("/"):
            return posixpath.normpath(raw)
        return raw

    def file(self, raw: str) -> _File | None:
        path = self.path(raw)
        found = self.scope.files.get(path)
        if found is None and not path.startswith("/"):
            tail = "/" + path
            found = next((f for p, f in self.scope.files.items() if p.endswith(tail)), None)
        return found

    def wrote(self, raw: str, taint: Taint, content: str | None, how: str, *,
              edited: bool = False, named: Taint = "literal") -> None:
        path = self.path(raw)
        if not path or path.startswith("/dev/"):
            return
        self.scope.files[path] = _File(taint, content, edited)
        if named in ("pure", "rewritten") or "$(" in raw:  # a name it computed, shown by a listing
            key = "names:" + posixpath.dirname(path)
            self.scope.state[key] = _join(self.scope.state.get(key, "none"), named)
        self.scope.hooked |= forces_outcomes(path, content)  # flags: evidence/rigging.py
        directory, name = posixpath.split(path)
        if directory in self.scope.path_dirs or (name in TEST_RUNNERS and directory.endswith(
                "/bin")):
            self.scope.shims[name] = content or ""

    def on_path(self, value: str) -> None:
        """Folders put on PATH: a file the agent wrote there runs in place of its name."""
        for part in value.split(":"):
            if not part or "$" in part:
                continue
            folder = self.path(part)
            self.scope.path_dirs.add(folder)
            for path, found in list(self.scope.files.items()):
                if posixpath.dirname(path) == folder:
                    self.wrote(path, found.taint, found.content, "wrote")

    # -- shell ---------------------------------------------------------------------------
    def shell(self, text: str, positional: Taint = "none") -> set[Taint]:
        """What a shell text prints to its output (the taint of each printing statement)."""
        if self.depth > 6:
            return {"real"}
        line = plain_line(text)
        if line is not None:
            return self.plain(text, line)
        self.depth += 1
        try:
            root = bash_parser().parse(text.encode("utf-8", "surrogatepass")).root_node
            return self.each(root.children, "none", positional)
        finally:
            self.depth -= 1

    def plain(self, text: str, line: tuple[tuple[Stage, ...], ...]) -> set[Taint]:
        """A command line of plain words, pipes, lists and simple redirections (most of
        them; ``line``: its :func:`~agentcredit.shell.plain_line`), read without the
        parser: the same verdict in a fraction of the time."""
        found: set[Taint] = set()
        if "&" in text and _BACKGROUND.search(text):
            self.scope.started = True
        for stages in line:
            taint: Taint = "none"
            last = len(stages) - 1
            for position, stage in enumerate(stages):
                command, targets, source, silenced = self.plain_words(*stage)
                if not command:
                    taint = "none" if position == last else taint
                    continue
                feed = source or (taint if position else "none")
                name = command[0]
                if name not in _SPECIAL and "/" not in name and not self.scope.hooked \
                        and name not in self.scope.functions and name not in self.scope.shims:
                    taint = self.carried(command[1:], ["literal"] * (len(command) - 1),
                                         "none") or "real"  # (most: a program it did not write)
                else:
                    taint = self.run(name, command[1:], ["literal"] * (len(command) - 1),
                                     feed, "none")
                for target in targets:
                    self.wrote(target, taint, " ".join(command[1:]) if taint == "literal"
                               and name == "echo" else None, "wrote")
                if (targets or silenced) and position == last:
                    taint = "none"
            found.add(taint)
        return found

    def plain_words(self, kept: tuple[str, ...], redirects: tuple[tuple[str, str], ...]
                    ) -> tuple[list[str], list[str], Taint | None, bool]:
        """A plain stage's command words, the files its output goes to, the taint of the
        file it reads (``< f``) and whether its output is thrown away."""
        command: list[str] = []
        targets: list[str] = []
        source: Taint | None = None
        silenced = False
        for operator, word in redirects:  # (2>: the errors, not the output)
            if operator == "<":
                read = self.file(word)
                source = read.taint if read else "real"
            elif operator[0] in ">&1":
                silenced |= word == "/dev/null"
                if word != "/dev/null":
                    targets.append(word)
        for word in kept:
            if not command and _ASSIGNMENT.match(word):
                name, _, self.scope.values[name] = word.partition("=")
                self.scope.variables[name] = "literal"
            else:
                command.append(word)
        return command, targets, source, silenced

    def statement(self, node: Any, stdin: Taint, positional: Taint) -> set[Taint]:
        kind = node.type
        if kind in ("comment", ";", "&", "&&", "||", "\n", "ERROR") or not node.is_named:
            return set()
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                self.scope.functions[node_text(name)] = body
            return set()
        if kind == "redirected_statement":
            return self.redirected(node, stdin, positional)
        if kind == "pipeline":
            return {self.pipeline(node, stdin, positional)}
        if kind == "command":
            return {self.command(node, stdin, positional)}
        if kind in ("variable_assignment", "declaration_command"):
            self.assign(node, positional)
            return set()
        if kind == "for_statement":
            variable = node.child_by_field_name("variable")
            values = node.children_by_field_name("value")
            if variable is not None:
                self.scope.variables[node_text(variable)] = _join(
                    *(self.word(v, positional) for v in values)) if values else "real"
        return self.each([c for c in node.children if c.is_named and c.type not in (
            "variable_name", "word", "number")], stdin, positional)

    def each(self, nodes: list[Any], stdin: Taint, positional: Taint) -> set[Taint]:
        """What statements print; one sent to the background (``cmd &``) is a process the
        agent left running, whose output may show in any later step (deny by default)."""
        found: set[Taint] = set()
        for node in nodes:
            printed = self.statement(node, stdin, positional)
            following = node.next_sibling
            if following is not None and following.type == "&":
                self.detached(_join(*printed))
            found |= printed
        return found

    def detached(self, taint: Taint) -> None:
        self.scope.started = True
        if taint in ("pure", "rewritten"):
            self.scope.background = _join(self.scope.background, taint)

    def assign(self, node: Any, positional: Taint) -> None:
        for child in [node] if node.type == "variable_assignment" else node.children:
            if child.type != "variable_assignment":
                continue
            name = child.child_by_field_name("name")
            value = child.child_by_field_name("value")
            if name is None:
                continue
            taint = self.word(value, positional) if value is not None else "literal"
            self.scope.variables[node_text(name)] = taint
            if taint == "literal" and value is not None:
                self.scope.values[node_text(name)] = unquoted(value)
            if node_text(name) == "PATH" and value is not None:
                self.on_path(unquoted(value))

    def redirected(self, node: Any, stdin: Taint, positional: Taint) -> set[Taint]:
        body = node.child_by_field_name("body")
        to_file: list[str] = []
        silenced = False
        for redirect in node.children_by_field_name("redirect"):
            stdin, silenced = self.redirect(redirect, stdin, positional, to_file, silenced)
        heredoc = _heredoc_body(node)
        self.heredoc = node_text(heredoc) if heredoc is not None else None
        try:
            printed = self.statement(body, stdin, positional) if body is not None else set()
        finally:
            self.heredoc = None
        for redirect in node.children_by_field_name("redirect"):  # cat << EOF | tee f
            for later in redirect.children if redirect.type == "heredoc_redirect" else ():
                if later.type == "pipeline":
                    for stage in (c for c in later.children if c.is_named):
                        printed = self.statement(stage, _join(*printed), positional)
                elif later.type in ("list", "command", "redirected_statement"):
                    printed |= self.statement(later, "none", positional)
        taint = _join(*printed)
        for target in to_file:
            self.wrote(target, taint, _literal_output(node) if taint == "literal" else None,
                       "wrote")
        return set() if (to_file or silenced) else printed

    def redirect(self, node: Any, stdin: Taint, positional: Taint, to_file: list[str],
                 silenced: bool) -> tuple[Taint, bool]:
        if node.type == "heredoc_redirect":
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            quoted = start is not None and node_text(start)[:1] in "'\"\\"
            taint: Taint = "literal"
            if body is not None and not quoted:
                taint = _join("literal", *(self.word(c, positional) for c in body.children
                                           if c.type != "heredoc_content"))
            for child in node.children:  # a redirect after the delimiter nests here
                if child.type == "file_redirect":
                    _, silenced = self.redirect(child, stdin, positional, to_file, silenced)
            return taint, silenced
        if node.type == "herestring_redirect":
            word = next((c for c in node.children if c.is_named), None)
            return (self.word(word, positional) if word is not None else "literal"), silenced
        if node.type != "file_redirect":
            return stdin, silenced
        destination = node.child_by_field_name("destination")
        operator = next((node_text(c) for c in node.children if not c.is_named), "")
        descriptor = node.child_by_field_name("descriptor")
        target = unquoted(destination) if destination is not None else ""
        if operator == "<":
            found = self.file(target)
            return (found.taint if found else "real"), silenced
        if descriptor is not None and node_text(descriptor) != "1":
            return stdin, silenced  # stderr elsewhere: stdout still printed
        if operator in (">&", "&>", ">&-") and target.isdigit():
            return stdin, silenced
        if target == "/dev/null":
            return stdin, True
        if operator in (">", ">>", "&>", "&>>", ">|"):
            to_file.append(target)
        return stdin, silenced

    def pipeline(self, node: Any, stdin: Taint, positional: Taint) -> Taint:
        taint = stdin
        for stage in (c for c in node.children if c.is_named):
            printed = self.statement(stage, taint, positional)
            taint = _join(*printed) if printed else "none"
        return taint

    def command(self, node: Any, stdin: Taint, positional: Taint) -> Taint:
        name_node = node.child_by_field_name("name")
        for child in node.children:
            if child.type == "variable_assignment":  # X=1 cmd: X for cmd only
                self.assign(child, positional)
        if name_node is None:
            return "none"
        made = self.word(name_node, positional) if name_node.child_count != 1 or \
            name_node.children[0].type != "word" else "literal"
        args = node.children_by_field_name("argument")
        typed = self.scope.values.get(unquoted(name_node).strip("${}"), "")
        if made not in ("literal", "none"):  # a command name made by an expansion: a typed
            made = _join(*self.shell(" ".join([typed, *map(node_text, args)]), positional)) \
                if typed else made  # one runs as typed (its pieces put together: computed)
            return "pure" if made == "literal" else made
        return self.run(unquoted(name_node), [unquoted(a) for a in args],
                        [self.word(a, positional) for a in args], stdin, positional)

    def run(self, full: str, words: list[str], values: list[Taint], stdin: Taint,
            positional: Taint) -> Taint:
        """What one simple command prints (its name as typed, its words and their taints)."""
        name = full.rsplit("/", 1)[-1]
        if name in ("eval", "trap"):  # a command string run now or at exit: read as one
            typed = values[:1] if name == "trap" else values
            code = " ".join(words[:1] if name == "trap" else words)
            return (_join(*self.shell(code, positional)) if set(typed) <= {"literal"}
                    else _join(*typed)) or "none"
        if name in _PREFIXES:
            if name == "timeout" and words and words[0][:1].isdigit():
                words, values = words[1:], values[1:]  # its duration
            return self.rest(name, words, values, stdin, positional)
        if name in self.scope.functions and self.depth < 6:
            self.depth += 1
            try:
                body = self.scope.functions[name]
                found = self.statement(body, stdin, _join(*values) if values else "literal")
            finally:
                self.depth -= 1
            return self.wrapped(name, _join(*found) if found else "none")
        shim = self.scope.shims.get(name) if "/" not in full or full.startswith(
            tuple(self.scope.path_dirs)) else None
        if shim is not None:
            return self.wrapped(name, _join(*self.shell(shim, _join(*values))) if shim
                                else "real", shim=True)
        return self.program(name, full, words, values, stdin, positional)

    def rest(self, name: str, words: list[str], values: list[Taint], stdin: Taint,
             positional: Taint) -> Taint:
        """``sudo cmd …``: what the command after the prefix prints (a command string
        after it is read as a command; ``xargs`` gives it its input as arguments)."""
        if name in _DETACH:
            self.scope.started = True
        while words and (words[0].startswith("-") or "=" in words[0]):
            words, values = words[1:], values[1:]
        if not words:
            return "none"
        if name == "xargs" and stdin != "none":
            positional, stdin = _join(positional, "pure" if stdin == "literal" else stdin), \
                "none"
        if any(c.isspace() for c in words[0]):
            return _join(*self.shell(words[0], positional)) or "none"
        return self.run(words[0], words[1:], values[1:], stdin, positional)

    def carried(self, words: list[str], values: list[Taint], positional: Taint) -> Taint | None:
        """What a program the agent did not write runs for it: an argument that is a
        command string is read as a command, and a word naming a program runs the words
        after it (``docker exec app sh -c '…'``, ``ssh host cmd``, ``kubectl exec p -- cmd``).
        The taint when that prints the agent's text (None: it does not)."""
        if self.depth > 4:
            return None
        for at, word in enumerate(words):
            if word in _RUNNABLE or word in self.scope.functions or word in self.scope.shims:
                taint = self.run(word, words[at + 1:], values[at + 1:], "none", positional)
                return taint if taint in ("pure", "rewritten") else None
            if " " in word or "\n" in word or ";" in word:
                taint = _join(*self.shell(word, positional))
                if taint in ("pure", "rewritten"):
                    return taint
        return None

    def wrapped(self, name: str, taint: Taint, *, shim: bool = False) -> Taint:
        """What a name the agent defined prints: a wrapper it put over a test runner or an
        interpreter is not the real tool (deny by default); over another name, what its
        body prints."""
        if (name in TEST_RUNNERS or name in _PYTHONS) and taint in ("real", "none"):
            return "rewritten"
        return taint

    def program(self, name: str, full: str, words: list[str], values: list[Taint],
                stdin: Taint, positional: Taint) -> Taint:
        if name not in _SPECIAL and "/" not in full and not self.scope.hooked:
            return self.carried(words, values, positional) or "real"  # (most commands)
        operands = [w for w in words if not w.startswith("-")]
        if name in _SILENT:
            self.silent(name, words, values)
            return "none"
        if name in _EMITTERS:
            taint = _join("literal", *values)
            computed = name in ("seq", "expr") or (name == "printf" and len(words) > 1
                                                   and "%" in words[0] and taint == "literal")
            return "pure" if computed and taint == "literal" else taint
        flag = _INTERPRETERS.get(name, "")
        at = next((i for i, w in enumerate(words) if w == flag or (
            name in _SHELLS and w[:1] == "-" and w[1:2] != "-" and "c" in w)), -1) if flag else -1
        if at >= 0:
            code = words[at + 1] if at + 1 < len(words) else ""
            if name in _SHELLS:
                given = _join(*values[at + 2:], positional) if positional != "none" else \
                    _join(*values[at + 2:]) or "literal"
                return _join(*self.shell(code, given)) or "none"
            return self.code(code, stdin, python=name in _PYTHONS)
        script = self.script(name, full, words, operands)
        if script is not None:
            return script
        if self.heredoc is not None and not operands and (name in _INTERPRETERS or
                                                           name in _PYTHONS):
            program, self.heredoc = self.heredoc, None  # the program is the here-document
            if name in _SHELLS:
                return _join(*self.shell(program)) or "none"
            return self.code(program, "none", python=name in _PYTHONS)
        if name == "make" or (name in ("npm", "yarn", "pnpm", "bun") and operands):
            found = self.project_script(name, operands)
            if found is not None:
                return found
        shown = self.state(name, words, values, operands, stdin)
        return shown if shown is not None else self.filter(name, words, operands, stdin)

    def state(self, name: str, words: list[str], values: list[Taint], operands: list[str],
              stdin: Taint) -> Taint | None:
        """What a program that shows state prints: a terminal's bytes, the agent's commits,
        rows or file names shown back, a page a process it started serves, what its own
        sources build or run (None: not such a program)."""
        scope = self.scope
        if name in _TERMINALS:
            for at, word in enumerate(words[:-1]):
                if word in ("hardcopy", "save-buffer", "saveb"):
                    self.wrote(words[at + 1], "rewritten", None, "wrote")
            scope.started |= any(w.startswith("-d") or w in ("new", "new-session")
                                 for w in words)
            return "rewritten" if name == "watch" or not {"capture-pane", "capturep",
                                                          "show-buffer", "showb"}.isdisjoint(
                words) else "none"
        if name in _REPOSITORY:
            for word in (w.split("!", 1)[1] for w in words if re.match(r"(?:alias\.\S*=)?!", w)):
                scope.state["repo"] = _join(scope.state.get("repo", "none"), *self.shell(word))
            if operands and operands[0] in ("commit", "tag", "notes"):  # its messages
                scope.state["repo"] = _join(scope.state.get("repo", "none"), *values)
            return _beside(scope.state.get("repo", "none"))
        if name in _DATABASES:
            key = name + (operands[0] if operands and name in ("sqlite3", "duckdb") else "")
            text = " ".join(words) + (self.heredoc or "")
            if stdin not in ("none", "real") or _STORES.search(text):
                scope.state[key] = _join(scope.state.get(key, "none"), "pure",
                                         *(v for v in values if v != "literal"))
            return _beside(scope.state.get(key, "none"))
        if name in _LISTERS and (found := self.carried(words, values, "none")) is not None:
            return found  # find's -exec
        if name in _LISTERS:
            folders = [self.path(w) for w in operands if "/" in w or self.file(w)] or \
                [scope.cwd or "/"]
            return _beside(*(t for key, t in scope.state.items()
                             if key.startswith("names:") and any(
                                 key[6:].startswith(f) or f.startswith(key[6:])
                                 for f in folders)))
        if name in _NETWORK:
            local = scope.started and any(_LOCAL.search(w) for w in words)
            return "rewritten" if local else None
        if name in _BUILDERS:
            return self.built(name, words, operands)
        return None

    def built(self, name: str, words: list[str], operands: list[str]) -> Taint | None:
        """A build or run of the agent's own sources in a language without value flow
        here: what it runs prints the agent's text, what it builds is the agent's program."""
        own = [w for w in operands if any(
            (f := self.file(w + ext)) is not None and (f.taint != "real" or f.edited)
            for ext in ("", ".class", ".java"))]
        if not own and not {"run", "build"}.isdisjoint(operands):
            folder = self.scope.cwd
            own = [p for p, f in self.scope.files.items() if _CODE_FILE.search(p) and
                   p.startswith(folder) and (f.taint != "real" or f.edited)]
        if not own:
            return None
        for at, word in enumerate(words[:-1]):
            if word in ("-o", "--output", "--out", "-d", "--output-dir", "--outdir"):
                self.wrote(words[at + 1], "pure", None, "built")
        if name in ("gcc", "cc", "g++", "c++", "clang", "clang++", "nvcc", "gfortran") and \
                "-o" not in words:
            self.wrote("a.out", "pure", None, "built")
        for source in own:
            stem = posixpath.splitext(source)[0]
            self.wrote(stem, "pure", None, "built")
            if source.endswith(".java"):
                self.wrote(stem + ".class", "pure", None, "built")
        if name == "papermill" and len(operands) > 1:
            self.wrote(operands[1], "pure", None, "built")
        compiles = name in ("gcc", "cc", "g++", "c++", "clang", "clang++", "rustc", "javac",
                            "tsc", "nvcc", "gfortran", "kotlinc", "swiftc", "ghc", "zig") or (
            name in ("go", "cargo", "dotnet") and "build" in operands)
        return "real" if compiles else "pure"

    def filter(self, name: str, words: list[str], operands: list[str], stdin: Taint) -> Taint:
        """What a program that reads files or its input prints (or where it writes)."""
        files = [self.file(w) for w in operands[1 if name in ("grep", "egrep", "rg", "sed",
                                                                "awk", "jq", "tr") else 0:]
                 if not w.isdigit()]
        if name in ("tee",):
            for target in operands:
                self.wrote(target, stdin, None, "wrote")
            return stdin
        if name in ("sed", "perl") and any(w.startswith("-i") for w in words):
            for target in operands[1:]:
                edited = self.file(target)
                content = _sed(operands[0], edited.content) if name == "sed" and edited \
                    and edited.content is not None else None
                if content is not None:
                    self.wrote(target, "pure", content, "edited")
                else:
                    self.wrote(target, _through(edited.taint if edited else "real"), None,
                               "edited", edited=True)
            return "none"
        if name in ("cp", "mv", "install") and len(operands) >= 2:
            copied = self.file(operands[0])
            self.wrote(operands[-1], copied.taint if copied else "real", copied.content
                       if copied else None, "copied to")
            return "none"
        inputs = _join(stdin, *(f.taint if f else "real" for f in files)) if files else stdin
        if name in ("awk", "gawk", "mawk", "nawk") and not files and stdin == "none":
            program = operands[0] if operands else ""
            return "real" if re.search(r"getline|system|ENVIRON|ARGV|PROCINFO", program) \
                else "pure"
        if name in _PASSTHROUGH:
            return inputs if (files or stdin != "none") else "real"
        if name in _TRANSFORMS and (files or stdin != "none"):
            return inputs if inputs in ("real", "rewritten") else "pure"
        if name in _COUNTERS:
            return "pure" if inputs in ("literal", "pure") else inputs or "real"
        if (name in _REWRITERS and (files or stdin != "none")) or (
                name in _INTERPRETERS and stdin != "none" and not operands):
            if _selects_only(name, words):
                return inputs
            return _through(inputs)
        if name in TEST_RUNNERS and self.scope.hooked:
            return "rewritten"
        if name in _PYTHONS and "pytest" in words and self.scope.hooked:
            return "rewritten"
        return "real"

    def silent(self, name: str, words: list[str], values: list[Taint]) -> None:
        if name in ("export", "declare", "local", "readonly", "typeset"):
            for word, value in zip(words, values, strict=False):
                variable, equals, rest = word.partition("=")
                if equals and _ASSIGNMENT.match(word):
                    self.scope.variables[variable] = value
                    if variable == "PATH":
                        self.on_path(rest)
        elif name == "cd" and words and values and values[0] == "literal":
            self.scope.cwd = self.path(words[0])
        elif name == "alias":
            for word in words:
                alias, _, body = word.partition("=")
                if body:
                    self.scope.shims[alias] = body
        elif name in ("touch", "mkdir"):
            for word, value in zip(words, values, strict=False):
                if value in ("pure", "rewritten"):
                    self.wrote(word, "real", None, "wrote", named=value)
        elif name in ("rm",):
            for word in words:
                self.scope.files.pop(self.path(word), None)

    def own_module(self, name: str) -> str | None:
        """The source of a Python module the agent wrote ("" when not known)."""
        found = self.module(name)
        if found is None or (found.taint == "real" and not found.edited):
            return None
        return found.content or ""

    def module(self, name: str) -> _File | None:
        """A Python module the agent wrote (``pkg.mod``: ``pkg/mod.py`` or its package)."""
        path = name.replace(".", "/")
        return self.file(path + ".py") or self.file(path + "/__init__.py")

    def script(self, name: str, full: str, words: list[str],
               operands: list[str]) -> Taint | None:
        """A script the agent wrote, run by its interpreter or by its path."""
        if name in _SHELLS or name in _PYTHONS or name in ("node", "perl", "ruby", "php"):
            target = next((w for w in operands if w not in ("run", "-m")), None)
            if target and "-m" in words:
                found = self.module(target)
                return None if found is None else found.taint if found.content is None \
                    else self.code(found.content, "none", python=True)
            runner = name
        elif "/" in full:
            target, runner = full, "path"
        else:
            return None
        found = self.file(target) if target else None
        if found is None:
            return None
        if found.content is None:
            return "rewritten" if found.edited else found.taint if found.taint != "real" \
                else None
        content = found.content
        if runner in _SHELLS or (runner == "path" and not _is_code(content)):
            return _join(*self.shell(content)) or "none"
        python = runner in _PYTHONS or (runner == "path" and "python" in content[:80])
        return self.code(content, "none", python=python)

    def project_script(self, name: str, operands: list[str]) -> Taint | None:
        """``make`` or ``npm test`` over a Makefile or ``package.json`` the agent wrote."""
        if name == "make":
            found = self.file("Makefile") or self.file("makefile")
            if found is None or found.content is None:
                return "rewritten" if found is not None and found.edited else None
            recipes = [line.lstrip("\t@-") for line in found.content.splitlines()
                       if line.startswith("\t")]
            if any(re.search(r"\$\((?:shell|wildcard|file|realpath|abspath)\b", r)
                   for r in recipes):
                return "real"
            for _ in range(4):  # make's own expansions, innermost first: computed by make
                recipes = [re.sub(r"\$[({][^(){}]*[)}]", "MAKEVALUE", r) for r in recipes]
            recipes = [r.replace("MAKEVALUE", "$((1))") for r in recipes]
            return _join(*(t for r in recipes for t in self.shell(r.replace("$$", "$")))) \
                or "none"
        found = self.file("package.json")
        if found is None or found.content is None:
            return "rewritten" if found is not None and found.edited else None
        try:
            scripts = json.loads(found.content).get("scripts", {})
        except (ValueError, AttributeError):
            return "real"
        target = operands[1] if operands[0] == "run" and len(operands) > 1 else operands[0]
        body = scripts.get(target) if isinstance(scripts, dict) else None
        return _join(*self.shell(body)) or "none" if isinstance(body, str) else None

    def code(self, code: str, stdin: Taint, *, python: bool = False) -> Taint:
        """What inline or script code prints: for Python, from the flow of its values
        (:func:`agentcredit.evidence.pyflow.python_flow`); otherwise pure when it names
        nothing that reaches outside it."""
        if not code.strip():
            return "none"
        flow = python_flow(code, self.own_module) if python else None
        if flow is not None:
            printed, written = flow
            for path, wrote in written.items():
                self.wrote(path, wrote, None, "wrote")
            taint = _join(*printed)
            if stdin in ("real", "rewritten") and taint == "real" and _INSERTS.search(code):
                return "rewritten"  # real input, with text of its own put in
            return taint
        if python and _NEWER_SYNTAX.search(code) is None:  # no Python runs it: it prints
            return "literal"  # the error (the line rules find the source lines it quotes)
        if _REACHES.search(without_strings(_code_only(code))) is None:
            return "pure"
        if stdin in ("real", "rewritten") and re.search(r"stdin|STDIN|<>|readline|input\(",
                                                        code):
            return "rewritten"
        return "real"

    def word(self, node: Any, positional: Taint) -> Taint:
        """The taint of a word's value: ``literal`` when typed as it is."""
        if node is None:
            return "literal"
        kind = node.type
        if kind in ("word", "raw_string", "number", "string_content", "ansi_c_string",
                    "heredoc_content", "command_name", "concatenation", "string",
                    "heredoc_body", "array"):
            parts = [self.word(c, positional) for c in node.children
                     if c.is_named and c.type not in ("string_content", "heredoc_content")]
            if kind == "ansi_c_string" and "\\" in node_text(node):
                return "pure"
            return _join("literal", *parts) if parts else "literal"
        if kind in ("simple_expansion", "expansion"):
            name = next((node_text(c) for c in node.children
                         if c.type in ("variable_name", "special_variable_name")), "")
            if name[:1].isdigit() and kind == "simple_expansion":
                name = name[0]  # bash reads "$2s" as $2 then "s"
            value: Taint
            if name in _POSITIONAL and positional != "none":
                value = positional
            elif name in _SPECIAL_REAL or name not in self.scope.variables:
                return "real"
            else:
                value = self.scope.variables[name]
            return "pure" if value in ("literal", "pure") else value
        if kind == "command_substitution":
            found: set[Taint] = set()
            for child in node.children:
                if child.is_named:
                    found |= self.statement(child, "none", positional)
            taint = _join(*found)
            return "pure" if taint in ("literal", "pure", "none") else taint
        if kind == "arithmetic_expansion":
            names = [node_text(c) for c in _walk(node) if c.type in ("variable_name",
                                                                       "special_variable_name")]
            values = [positional if n in _POSITIONAL and positional != "none" else
                      self.scope.variables.get(n, "real") for n in names]
            return "pure" if all(v in ("literal", "pure") for v in values) else "real"
        if kind == "process_substitution":
            return "real"
        return _join("literal", *(self.word(c, positional) for c in node.children
                                  if c.is_named))

    # -- tool calls ----------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any]) -> set[Taint]:
        """What one tool call prints."""
        lowered = name.lower()
        if lowered in _SUBAGENT_TOOLS:
            return {"pure"}  # a sub-agent's report is a model's claim
        target = next((arguments[k] for k in TOOL_PATH_KEYS
                       if isinstance(arguments.get(k), str)), None)
        content = next((arguments[k] for k in TOOL_TEXT_KEYS
                        if isinstance(arguments.get(k), str)), None)
        command = next((arguments[k] for k in _SHELL_KEYS
                        if isinstance(arguments.get(k), str)), None)
        if command is not None and target is None:
            if "python" in lowered or "jupyter" in lowered or "ipython" in lowered:
                return {self.code(command, "none", python=True)}
            return self.shell(command)
        if target is None or (content is None and _SEARCHES.search(lowered)):
            return {self.shown(lowered, arguments)}
        verb = str(arguments.get("command", "")).lower()
        if content is not None and verb in ("", "create", "write"):
            self.wrote(target, "literal", content, "wrote")
            return {"none"}
        edits = [v for k, v in arguments.items()
                 if k in ("new_string", "new_str", "edits", "insert_text") and v]
        found = self.file(target)
        if edits or verb in ("str_replace", "insert", "edit"):
            before = found.content if found else None
            old = arguments.get("old_string", arguments.get("old_str"))
            new = before.replace(old, edits[0]) if before is not None and isinstance(
                old, str) and edits and isinstance(edits[0], str) else None
            if before is not None and new is not None:  # lines it typed stay literal; a
                typed = {*before.splitlines(), *edits[0].splitlines()}  # line its edits
                # put together is computed from what it typed
                taint: Taint = "literal" if typed.issuperset(new.splitlines()) else "pure"
                self.wrote(target, taint, new, "edited")
                return {taint}
            added = "\n".join(str(e) for e in edits)
            self.wrote(target, found.taint if found else "real", None, "edited",
                       edited=_PRINTS.search(added) is not None)
            return {found.taint if found else "real"}
        return {found.taint if found else "real"}

    def shown(self, name: str, arguments: dict[str, Any]) -> Taint:
        """What a harness's own tool that names no one file shows: a search or listing
        shows the files (and names) the agent wrote under its path, as the agent's text."""
        if not _SEARCHES.search(name):
            return "real"
        folders = [self.path(p) for p in strings_in(arguments) if p.startswith(("/", "."))] \
            or [self.scope.cwd or "/"]
        pattern = arguments.get("pattern")
        searches = isinstance(pattern, str) and ("search" in name or "grep" in name)
        try:
            finds = re.compile(str(pattern) if searches else "(?!)").search
        except re.error:
            finds = re.compile("").search
        mine = [f.taint if f.taint != "literal" else "pure" for p, f in
                self.scope.files.items() if any(p.startswith(x) for x in folders) and
                (f.content is None or finds(f.content))]
        return _beside(*mine, *(t for key, t in self.scope.state.items()
                                if key.startswith("names:")))


def trial_flow(calls: Sequence[Sequence[tuple[str, dict[str, Any]]] | None]) -> TrialFlow:
    """The walk over a trial: ``calls`` holds each step's tool calls (name and arguments),
    or None for a step the agent did not take (a user's or the system's).

    >>> flow = trial_flow([[("bash", {"command": "N=5"})],
    ...                    [("bash", {"command": 'python -m pytest -q; echo "$N passed"'})],
    ...                    [("bash", {"command": "python -m pytest -q | sed s/failed/passed/"})],
    ...                    [("bash", {"command": "python -m pytest -q | tail -n 3"})]])
    >>> [flow.steps[n].controlled for n in (2, 3, 4)], [f.kind for f in flow.flags]
    ([True, True, False], ['rewrites_runner'])
    """
    walk = _Walk()
    steps: dict[int, StepControl] = {}
    shared: dict[StepControl, StepControl] = {}
    for number, step_calls in enumerate(calls, 1):
        if step_calls is None:
            continue
        walk.scope.step = number
        controls = []
        for name, arguments in step_calls:
            left = walk.scope.background  # a process it left running prints anywhere
            try:
                printed = walk.call(name, arguments) | {left}
            except RecursionError:
                printed = {"rewritten"}
            controls.append(_control(printed))
        chosen = next((c for c in controls if c.controlled), StepControl(False))
        control = StepControl(chosen.controlled, chosen.reason,
                              tuple(c.controlled for c in controls))
        steps[number] = shared.setdefault(control, control)  # one record per verdict
    return TrialFlow(steps, lambda: calls)


def _control(printed: set[Taint]) -> StepControl:
    """Whether a tool call's output is the agent's (decided per call: one call's stream
    never decides another's)."""
    printed = printed - {"none"}
    if "rewritten" in printed:
        return StepControl(True, "real output passed through something the agent wrote")
    if "pure" in printed and "real" in printed:
        return StepControl(True, "text the agent computed printed beside real output")
    if "pure" in printed:
        return StepControl(True, "prints only what the agent typed or computed from it")
    return StepControl(False)  # literal text: the line rules find it where it shows


def _walk(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _heredoc_body(statement: Any) -> Any:
    """The here-document fed to a redirected statement, if any."""
    for redirect in statement.children:
        if redirect.type == "heredoc_redirect":
            for child in redirect.children:
                if child.type == "heredoc_body":
                    return child
    return None


def _literal_output(statement: Any) -> str | None:
    """The text an ``echo``/``printf``/``cat <<EOF`` statement writes, when typed."""
    heredoc = _heredoc_body(statement)
    if heredoc is not None:
        return node_text(heredoc)
    body = statement.child_by_field_name("body")
    if body is not None and body.type == "command":
        args = body.children_by_field_name("argument")
        return " ".join(unquoted(a) for a in args if not unquoted(a).startswith("-"))
    return None


def _selects_only(name: str, words: list[str]) -> bool:
    """Whether a rewriting program is used only to select lines (``sed -n 1,20p``,
    ``awk '{print $1}'``, ``tr -d '\\r'``, ``jq .field``)."""
    program = next((w for w in words if not w.startswith("-")), "")
    if name == "sed":
        scripts = [w for w in words if not w.startswith("-")][:1]
        return bool(scripts) and all((re.fullmatch(r"[\d,$/\w\s.^*\[\]\\-]*[pdq]?", s)
                                      and not re.search(r"(?:^|[;\s\d])[sy]\W", s))
                                     or _strips_markup(s) for s in scripts)
    if name in ("awk", "gawk", "mawk", "nawk"):
        return not re.search(r"\"|\bsub\b|\bgsub\b|printf|sprintf|toupper|tolower|"
                             r"\$\w+\s*=[^=]|getline|system", program)
    if name == "tr":
        sets = [w for w in words if not w.startswith("-")]
        return any(w in ("-d", "-s", "-ds") for w in words) and all(
            re.fullmatch(r"(?:\\[rnt]|\s|\[:space:\]|\[:blank:\])+", s) for s in sets)
    if name in ("jq", "yq"):
        return '"' not in program and "@" not in program
    return False


def _strips_markup(script: str) -> bool:
    """Whether a ``sed`` script only takes out delimited spans (tags, escape sequences) or
    punctuation, putting in no letter or digit of its own: ``s/<[^>]*>/ /g``."""
    found = re.fullmatch(r"s(.)(.+?)\1(.*?)\1g?", script.strip())
    if found is None or re.search(r"[^\W_]", found.group(3).replace("\\n", "")):
        return False
    pattern = re.sub(r"\\(?:x1[bB]|033|e|r|t)", "", found.group(2))
    return re.fullmatch(r"(\W)\[\^(\W)\][*+]\2?", pattern) is not None or (
        re.search(r"[^\W_]|\.", pattern.replace("[0-9;]", "")) is None)


def _sed(script: str, content: str) -> str | None:
    """The text after ``sed -i`` of ``s/a/b/`` substitutions (None: another script)."""
    for part in script.split(";"):
        found = re.fullmatch(r"\s*s(.)(.*?)\1(.*?)\1([gI0-9]*)\s*", part)
        if found is None:
            return None
        pattern = re.sub(r"\\([(){}+?|])", r"\1", found.group(2)) if "\\(" in found.group(2) \
            else found.group(2)
        replacement = found.group(3).replace("&", "\\g<0>")
        try:
            content = "\n".join(re.sub(pattern, replacement, line,
                                       count=0 if "g" in found.group(4) else 1)
                                for line in content.split("\n"))
        except (re.error, IndexError):
            return None
    return content


def _is_code(content: str) -> bool:
    first = content.lstrip().splitlines()[0] if content.strip() else ""
    return first.startswith("#!") and any(x in first for x in ("python", "node", "perl",
                                                                "ruby", "php"))


def _code_only(code: str) -> str:
    """Code with comments taken out (a reaching word in a comment reaches nothing)."""
    return re.sub(r"(?m)^\s*(?:#|//).*$", "", code)


_RECENT: OrderedDict[int, tuple[Trial, TrialFlow]] = OrderedDict()
RECENT_FLOWS = 64
"""Walks kept for the trials at hand (a trial is stored, then viewed, maybe several times
while its view is fitted to a window): each is walked once."""


# What a trial must hold somewhere for the walk to find anything: an expansion, a pipe, a
# here-document, a program that computes or rewrites, a script, a definition, a write where
# the measurement lives, a sub-agent or a Python tool. A trial with none of these (plain
# commands, echo and cat of typed files) prints only literal and real text.
_WORTH_WALKING = re.compile(r"[$`(){}|\\;=]|<<|\./|/bin/|/tests/|/logs/|conftest|"
                            r"customize|reward|ctrf|PATH")
_WORTH_WORDS = (_INTERPRETERS.keys() | _PYTHONS | _REWRITERS | _TRANSFORMS | _COUNTERS
                | _PREFIXES | _SHELLS | _BUILDERS | TEST_RUNNERS | _SUBAGENT_TOOLS | {
                    "printf", "seq", "expr", "let", "alias", "function", "export", "declare",
                    "local", "readonly", "typeset", "tee", "cp", "mv", "install", "eval", "trap",
                    "sha512sum", "bun", "for", "while", "until", "if", "case"})
_WORD = re.compile(r"[A-Za-z_][\w.]*")


def worth_walking(calls: list[list[tuple[str, dict[str, Any]]] | None]) -> bool:
    """Whether anything in the trial's calls could make a step's output the agent's beyond
    the literal text the line rules find, or rig the measurement (a sound screen: it may
    say yes needlessly, never no wrongly)."""
    text = "\n".join(part for step in calls if step for name, arguments in step
                     for part in (name.lower(), *strings_in(arguments)))
    return _WORTH_WALKING.search(text) is not None or \
        not _WORTH_WORDS.isdisjoint(w.rstrip(".") for w in _WORD.findall(text))


def strings_in(value: object) -> list[str]:
    """Every string inside a JSON value (tool-call arguments), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings_in(v)]
    return []


def flow_of(trial: Trial) -> TrialFlow:
    """The walk over a normalized trial (remembered for the last few trials; a trial with
    nothing the walk could find is answered without walking)."""
    found = _RECENT.get(id(trial))
    if found is not None and found[0] is trial:
        _RECENT.move_to_end(id(trial))
        return found[1]
    calls = [step_calls(step) for step in trial.steps]
    flow = TrialFlow(trial_flow(calls).steps if worth_walking(calls) else {},
                     lambda: [step_calls(step) for step in trial.steps])
    _RECENT[id(trial)] = (trial, flow)
    while len(_RECENT) > RECENT_FLOWS:
        _RECENT.popitem(last=False)
    return flow


def step_calls(step: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """A normalized step's tool calls as the walk reads them (None: not the agent's)."""
    if step.source != "agent":
        return None
    return [(call.name, call.arguments) for call in step.tool_calls]
