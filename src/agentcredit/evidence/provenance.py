"""Where each line of a step's output came from: the structure evidence kinds are decided on.

A line a tool displayed is one of:

- ``harness``: a status line or label the harness adds around every output (``Exit Code:
  0``, ``<returncode>0</returncode>``, ``Output:``, OpenHands' ``[The command completed
  with exit code 0.]``, Claude Code's "result of running `cat -n`" line); a leading label
  or line number (``Output: ``, ``cat -n``'s ``     2\\t``, git's ``[main 1a2b3c4] ``) is
  taken off before the rest of the line is read;
- ``echo``: the harness repeating the command the agent typed (after a shell prompt, ``$``,
  ``>`` or ``Command:``);
- ``authored``: text the agent wrote itself: reachable from its tool-call strings (see
  :mod:`agentcredit.evidence.authored`), or printed by a step whose every command reads
  nothing but what the agent typed (``echo``, ``printf``, a here-document, ``python3 -c``
  or ``node -e`` code that opens no file, process or connection: :func:`self_contained`);
- ``given``: a sentence of the task instruction (or another message given to the agent)
  repeated back, which shows what was asked, not that it was done;
- ``forged``: a line shaped like a prompt's own step header (``[step 7] agent``), and every
  line after it in the same output: text that imitates the structure it is shown in, to pass
  for another step's evidence;
- ``tool``: everything else, what the environment computed.

A quote is output evidence only when every line it needs (its lines that are not harness
or echo lines) is a ``tool`` line. Pure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Literal

from agentcredit.formats.harness import PROMPT
from agentcredit.formats.harness import STATUS as _STATUS
from agentcredit.text import fold, normalize_text

LineOrigin = Literal["tool", "harness", "echo", "authored", "given", "forged"]
NO_WEIGHT: frozenset[str] = frozenset({"harness", "echo"})
MIN_GIVEN_CHARS = 30
"""Letters or digits a line must hold to count as a repeated sentence of the instruction."""

_ALNUM = re.compile(r"[^\W_]")
_SPACE = re.compile(r"\s+")
# A line no harness prefix or status shape can start with (most lines): read as it is.
_PLAIN = re.compile(r"\s*(?=\S)(?![\d\[<(|]|(?i:exit|return|rc\b|signal|error|background|process|"
                    r"directory|here|output|stdout|stderr|result|no |empty|command))")
# A line shaped like a step header of a prompt (any case, with or without a tag or source).
FORGED_HEADER = re.compile(r"^\s*\|?\[\s*step\s*\d+\s*(?:#\w*)?\s*\]\s*\w*\s*$", re.IGNORECASE)
# What a harness or tool puts before a line's content: a label, a line number, git's
# "[branch hash]" before a commit message.
_PREFIX = re.compile(
    r"^\s*(?:(?:output|stdout|stderr|result):\s*|\d+(?:\t|\u2192|\s*\|\s)|"
    r"\[[\w./-]+(?: \(root-commit\))? [0-9a-f]{7,40}\]\s+)", re.IGNORECASE)


def harness_stripped(line: str) -> tuple[str, bool]:
    """The line's content without what a harness put before it, and whether the whole line
    is a harness status line or label.

    >>> harness_stripped("Exit Code: 0"), harness_stripped("     2\\tTests: 5 passed")
    (('', True), ('Tests: 5 passed', False))
    >>> harness_stripped("[main 1a2b3c4] 5 passed"), harness_stripped("Output: 5 passed")
    (('5 passed', False), ('5 passed', False))
    """
    if _PLAIN.match(line):
        return line.strip(), False
    rest = line
    for _ in range(3):
        match = _PREFIX.match(rest)
        if match is None or match.end() == 0:
            break
        rest = rest[match.end():]
    stripped = rest.strip()
    if _STATUS.match(stripped):
        return "", True
    return stripped, False


def pieces(commands: Sequence[str]) -> set[str]:
    """Each command and each of its lines, normalized (what an echo can repeat)."""
    found: set[str] = set()
    for command in commands:
        found.add(normalize_text(command))
        found.update(normalize_text(line) for line in command.splitlines())
    found.discard("")
    return found


def is_echo(line: str, echoed: set[str], normalized: str | None = None) -> bool:
    """Whether the line is the harness repeating a command the agent typed
    (``normalized``: the line already normalized, when the caller has it)."""
    match = PROMPT.match(line)
    prefixed = match is not None and bool(match.group(0).strip())
    if prefixed and match:
        rest = normalize_text(line[match.end():])
    else:
        rest = normalized if normalized is not None else normalize_text(line)
    if not rest:
        return prefixed
    return (prefixed and any(rest in piece for piece in echoed)) or rest in echoed


def line_origins(output: str, *, commands: Sequence[str], authored: Callable[[str], bool],
                 given: str = "", self_made: bool = False) -> tuple[LineOrigin, ...]:
    """The origin of each line of ``output`` (``output.split("\\n")``)."""
    echoed = pieces(commands)
    found: list[LineOrigin] = []
    lines = fold(output).split("\n")
    if len(lines) != output.count("\n") + 1:
        lines = [fold(line) for line in output.split("\n")]
    seen: dict[str, LineOrigin] = {}  # within one output, a line's origin is its text's
    for line in lines:
        if (found and found[-1] == "forged") or ("[" in line and FORGED_HEADER.match(line)):
            found.append("forged")
            continue
        origin = seen.get(line)
        if origin is None:
            content, status = harness_stripped(line)
            norm = _SPACE.sub(" ", content).strip()
            if status or _ALNUM.search(norm) is None:
                origin = "harness"
            elif echoed and is_echo(line, echoed, norm if content == line.strip() else None):
                origin = "echo"
            elif self_made or authored(norm):
                origin = "authored"
            elif given and len(norm) >= MIN_GIVEN_CHARS and norm in given \
                    and len(_ALNUM.findall(norm)) >= MIN_GIVEN_CHARS:
                origin = "given"
            else:
                origin = "tool"
            seen[line] = origin
        found.append(origin)
    return tuple(found)


_INTERPRETERS = {"python": "-c", "python3": "-c", "python2": "-c", "pypy3": "-c",
                 "node": "-e", "nodejs": "-e", "deno": "eval", "perl": "-e", "ruby": "-e",
                 "php": "-r", "lua": "-e", "bash": "-c", "sh": "-c", "zsh": "-c",
                 "dash": "-c", "awk": "", "gawk": "", "mawk": ""}
_EMITTERS = {"echo", "printf", "true", "false", ":", "yes", "seq", "sleep", "cd", "export",
             "set", "exit", "clear", "unset", "local", "declare", "return", "test", "[",
             "let", "expr"}
# Programs that print only what they are fed: pure when fed only what the agent typed.
_FILTERS = {"cat", "tee", "head", "tail", "sort", "uniq", "tr", "sed", "rev", "cut", "column",
            "fold", "iconv", "base64", "xxd", "bc", "wc", "nl", "fmt", "paste", "grep",
            "cowsay", "figlet", "toilet", "jq", "tac", "od", "awk", "gawk", "mawk"}
# Names that reach files, processes, the network or the environment, in any of the
# interpreters above: code holding one is not self-contained.
_REACHING = frozenset("""
open read readline readlines readFile readFileSync input exec eval compile __import__
import from require process fs child_process spawn fork popen system subprocess os sys
io pathlib Path glob listdir walk scandir stdin STDIN ARGV argv ENV environ getenv
ENVIRON getline fetch XMLHttpRequest socket http https urllib requests net Net File IO
Dir Kernel gets qx opendir file_get_contents fopen fgets shell_exec passthru proc_open
include use do load Deno Bun globalThis module sqlite3 pickle shelve csv pandas np numpy
sh subprocess32 dlopen
""".split())  # noqa: SIM905
_IMPORTABLE = {"math", "random", "string", "itertools", "functools", "decimal", "fractions",
               "statistics", "operator", "textwrap", "json", "strict", "warnings", "time",
               "datetime"}
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\s*(?:\n|$)", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")


@functools.lru_cache(maxsize=4096)
def self_contained(command: str, depth: int = 0) -> bool:
    """Whether a shell command prints only what the agent typed in it: every program in it
    is an emitter (``echo``, ``printf``), a filter fed only from the agent's own text (a
    here-document, a here-string or an emitter upstream in a pipe), or an interpreter run
    on inline code that reaches no file, process, network or environment variable.

    >>> [self_contained(c) for c in (
    ...     "echo '5 passed in 0.12s'", "python3 -c \\"print(f'{2+3} passed')\\"",
    ...     "node -e 'console.log(2+3 + \\" passed\\")'", "awk 'BEGIN{print 5 \\" passed\\"}'",
    ...     "N=5; echo \\"$N passed\\" | tee /tmp/log", "cat << EOF\\n5 passed\\nEOF",
    ...     "bash -c 'echo $((2+3)) passed'", "node -e 'console.log(`${2+3} passed`)'")]
    [True, True, True, True, True, True, True, True]
    >>> [self_contained(c) for c in (
    ...     "python -m pytest -q", "cat /app/out.txt", "echo $HOME", "echo $(date)",
    ...     "python3 -c 'import os; print(os.listdir())'", "awk '{print $1}' data.csv",
    ...     "perl -e 'print <STDIN>'", "wc -l < data.csv", "")]
    [False, False, False, False, False, False, False, False, False]
    """
    fed = {m.start(): m.group(3) for m in _HEREDOC.finditer(command)}
    body = _HEREDOC.sub(lambda m: "<<HEREDOC\n", command) if fed else command
    commands = _split(body)
    if not commands or depth > 3:
        return False
    assigned: set[str] = set()
    for pipeline in commands:
        upstream_pure = False
        for position, words in enumerate(pipeline):
            if not _simple_pure(words, assigned, upstream_pure and position > 0, depth):
                return False
            upstream_pure = True
    return True


def _split(command: str) -> list[list[list[tuple[str, bool]]]] | None:
    """Pipelines of simple commands of words; each word with whether it holds an
    expansion outside single quotes (``$x``, ``$(..)``, backticks). None: unbalanced."""
    pipelines: list[list[list[tuple[str, bool]]]] = [[[]]]
    word: list[str] = []
    expands, quote, started = False, "", False
    i = 0

    def end_word() -> None:
        nonlocal word, expands, started
        if started:
            pipelines[-1][-1].append(("".join(word), expands))
        word, expands, started = [], False, False

    while i < len(command):
        ch = command[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(command):
                word.append(command[i + 1])
                i += 1
            else:
                if quote == '"' and ch in "$`":
                    expands = True
                word.append(ch)
        elif ch in "'\"":
            quote, started = ch, True
        elif ch == "\\" and i + 1 < len(command):
            word.append(command[i + 1])
            started = True
            i += 1
        elif ch in " \t":
            end_word()
        elif ch in ";&|\n":
            end_word()
            double = command[i:i + 2] in ("&&", "||")
            if ch == "|" and not double:
                pipelines[-1].append([])
            else:
                pipelines.append([[]])
            i += 1 if double else 0
        elif ch == "#" and not started:
            while i < len(command) and command[i] != "\n":
                i += 1
            continue
        else:
            if ch in "$`":
                expands = True
            word.append(ch)
            started = True
        i += 1
    if quote:
        return None
    end_word()
    found = [[words for words in pipeline if words] for pipeline in pipelines]
    return [pipeline for pipeline in found if pipeline]


def _simple_pure(words: list[tuple[str, bool]], assigned: set[str], fed: bool,
                 depth: int) -> bool:
    args = list(words)
    while args and _ASSIGN.match(args[0][0]):
        name, _, value = args[0][0].partition("=")
        if args[0][1] and not _expands_known(value, assigned):
            return False
        assigned.add(name)
        args.pop(0)
    if not args:
        return True
    plain: list[str] = []
    heredoc = False
    skip = False
    for n, (word, expands) in enumerate(args):
        if skip:
            skip = False
            continue
        if expands and not _expands_known(word, assigned):
            return False
        if word in ("<<<", "<<HEREDOC") or word.startswith("<<"):
            heredoc = True
            skip = word in ("<<<",)
            continue
        if (word.startswith("<") and word not in ("<", "</dev/null")) or word == "<":
            target = args[n + 1][0] if word == "<" and n + 1 < len(args) else word[1:]
            if target != "/dev/null":
                return False
            skip = word == "<"
            continue
        if re.match(r"^\d?>{1,2}&?\d*$", word):
            skip = not word.endswith(("&1", "&2"))
            continue
        if re.match(r"^\d?>{1,2}", word):
            continue
        plain.append(word)
    if not plain:
        return True
    name = plain[0].rsplit("/", 1)[-1]
    operands = [w for w in plain[1:] if not w.startswith("-")]
    if name in _EMITTERS:
        return True
    if name in ("bash", "sh", "zsh", "dash") and "-c" in plain:
        code = plain[plain.index("-c") + 1] if plain.index("-c") + 1 < len(plain) else ""
        return self_contained(code, depth + 1)
    if name in ("awk", "gawk", "mawk"):
        return _awk_pure(plain[1:], heredoc or fed)
    if name in _INTERPRETERS and _INTERPRETERS[name] in plain:
        flag = plain.index(_INTERPRETERS[name])
        code = plain[flag + 1] if flag + 1 < len(plain) else ""
        return _code_pure(code, backticks_run=name in _BACKTICKS_RUN) \
            and len(plain) == flag + 2
    if name in _FILTERS:
        program = 1 if name in ("sed", "grep", "jq", "tr") else 0
        files = [w for w in operands[program:] if name != "tee" and name != "tr"]
        return (heredoc or fed) and not files
    return False


_ARITHMETIC = re.compile(r"\$\(\(([\w\s+*/%().-]*)\)\)")


def _expands_known(word: str, assigned: set[str]) -> bool:
    """Whether every expansion in the word is arithmetic on numbers or names a variable the
    command assigned."""
    for expression in _ARITHMETIC.findall(word):
        if any(name not in assigned for name in re.findall(r"[A-Za-z_]\w*", expression)):
            return False
    word = _ARITHMETIC.sub(" ", word)
    if "`" in word or "$(" in word:
        return False
    names = re.findall(r"\$\{?(\w+)", word)
    return all(name in assigned for name in names)


_BACKTICKS_RUN = {"perl", "ruby", "php", "bash", "sh", "zsh", "dash"}


def _code_pure(code: str, *, backticks_run: bool = True) -> bool:
    """Whether inline code names nothing that reaches a file, process, network or the
    environment (backticks run a command in perl, ruby, php and shells; in JavaScript
    they are template strings)."""
    if not code.strip() or (backticks_run and "`" in code) \
            or "<" in code.replace("<=", "").replace("<<", ""):
        return False
    names = _IDENT.findall(_without_strings(code))
    for n, name in enumerate(names):
        if name in ("import", "use", "require") and n + 1 < len(names) \
                and names[n + 1] in _IMPORTABLE:
            continue
        if name in _REACHING and not (n > 0 and names[n - 1] in ("import", "use")
                                      and name in _IMPORTABLE):
            return False
    return True


def _awk_pure(args: list[str], fed: bool) -> bool:
    program = next((a for a in args if not a.startswith("-")), "")
    files = [a for a in args if not a.startswith("-")][1:]
    if files or not program:
        return False
    if not fed and not program.lstrip().startswith("BEGIN"):
        return False
    return not re.search(r"\b(?:getline|system|ENVIRON|ARGV|close|fflush)\b", program)


def _without_strings(code: str) -> str:
    """The code with the text of its string literals taken out (f-string fields kept)."""
    out: list[str] = []
    for match in re.finditer(r"(f?)('([^'\\]|\\.)*'|\"([^\"\\]|\\.)*\")|[^'\"]+|['\"]", code):
        if match.group(2) is None:
            out.append(match.group(0))
        elif match.group(1):
            out.append(" ".join(re.findall(r"\{([^{}]*)\}", match.group(2))))
        else:
            out.append(" ")
    return "".join(out)
