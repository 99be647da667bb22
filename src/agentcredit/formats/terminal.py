"""Cleaning raw terminal transcripts (asciinema/tmux logs) into readable lines.

Escape sequences (CSI, OSC, charset and keypad switches) are removed; carriage returns
overwrite the line from its first column, as a terminal would, so progress bars and
spinners collapse to their final state; "erase line" clears the line. Every cleaned line
keeps the byte range of the raw line it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# One token per escape sequence or control character we care about.
_TOKEN = re.compile(
    rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL | ST
    rb"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b[()*+][0-9A-Za-z]"  # charset designation
    rb"|\x1b[@-Z\\-_=>78]"  # other two-byte escapes
    rb"|\r|\x08|[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]"
)
_ERASE_LINE = re.compile(rb"\x1b\[[012]?K")
_CURSOR_UP = re.compile(rb"\x1b\[(\d*)A")


# What a terminal shows around a command (read by the evidence view as harness lines, see
# agentcredit.formats.harness): the shell prompt (user@host:path# or $, an optional
# "(venv) " before it), a continuation ">" and an xtrace "+", and the exit statuses shells
# and runners print.
ECHO_PROMPTS = (r"(?:\(\S+\)\s*)?\S+@[\w.-]+:[^\s#$]*[#$]", r"\$", r">", r"\+")
HARNESS_STATUS = (
    r"(?:(?:exit|return)[ _]?(?:code|status)|signal)\s*[:=]?\s*(?:-?\d+|\(none\))\.?",
    r"(?:process )?exited with (?:exit )?code -?\d+\.?",
    r"</?(?:stdout|stderr)>",
    r"\(?(?:no output|empty output|command produced no output)\)?\.?",
)


@dataclass(frozen=True)
class CleanLine:
    """One cleaned line and where it was in the raw bytes."""

    text: str
    line_no: int
    byte_start: int
    byte_end: int


def clean_line(raw: bytes) -> str:
    """Render one raw terminal line (without its newline) to the text left on screen.

    >>> clean_line(b"10% [x]\\r50% [xx]\\r\\x1b[2Kdone")
    'done'
    >>> clean_line(b"\\x1b[1;32mok\\x1b[0m 100%")
    'ok 100%'
    """
    screen: list[str] = []
    col = 0
    pos = 0
    for match in _TOKEN.finditer(raw):
        col = _write(screen, col, raw[pos:match.start()])
        token = match.group()
        if token == b"\r":
            col = 0
        elif token == b"\x08":
            col = max(0, col - 1)
        elif _ERASE_LINE.fullmatch(token):
            mode = token[2:3]
            if mode in (b"2", b"K"):
                screen.clear()
                col = 0
            elif mode == b"1":
                screen[:col] = [" "] * min(col, len(screen))
            else:
                del screen[col:]
        pos = match.end()
    _write(screen, col, raw[pos:])
    return "".join(screen).rstrip()


def _write(screen: list[str], col: int, chunk: bytes) -> int:
    if not chunk:
        return col
    for char in chunk.decode("utf-8", errors="replace"):
        if col < len(screen):
            screen[col] = char
        else:
            screen.extend(" " * (col - len(screen)))
            screen.append(char)
        col += 1
    return col


def clean_transcript(raw: bytes) -> list[CleanLine]:
    """Clean a whole transcript, dropping lines left empty and collapsing blank runs."""
    lines: list[CleanLine] = []
    offset = 0
    blank = False
    for line_no, chunk in enumerate(raw.split(b"\n"), start=1):
        start, offset = offset, offset + len(chunk) + 1
        for up in _CURSOR_UP.finditer(chunk):
            # The cursor moved back up: what follows redraws the earlier line(s).
            for _ in range(int(up.group(1) or 1)):
                if lines:
                    lines.pop()
        text = clean_line(chunk.rstrip(b"\r"))
        if not text.strip():
            if not blank and lines:
                lines.append(CleanLine("", line_no, start, min(offset, len(raw))))
            blank = True
            continue
        blank = False
        lines.append(CleanLine(text, line_no, start, min(offset, len(raw))))
    return lines
