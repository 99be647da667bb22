"""Careful file access shared by every reader.

Each function either returns what was asked for or raises :class:`InputError` with a
one-line reason (size, binary content, invalid UTF-8, malformed JSON, symlink loop).
Readers catch it at their boundary and turn it into a ``ReadError`` record.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import functools
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pydantic_core

from agentcredit.errors import InputError, Missing, TooLarge, env_value

StrPath = str | os.PathLike[str]
"""A path as text or as a path object (the readers' hot paths pass text)."""



def max_file_bytes() -> int:
    """Largest JSON document read whole (``AGENTCREDIT_MAX_FILE_MB``, else 64); bigger files
    are refused with a size reason. Read when a file is, so a bad value names the variable
    then, never breaks an import."""
    return int(env_value("AGENTCREDIT_MAX_FILE_MB", 64.0, "positive") * 1024 * 1024)


MAX_LINE_BYTES = 16 * 1024 * 1024
"""Largest single line accepted in a JSON Lines file."""

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects decoded from a string inside a document (tool
arguments written as JSON text): deeper text is kept as text."""

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


_ROOTS: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "agentcredit_input_roots", default=None)


@contextlib.contextmanager
def confined_to(roots: Iterable[StrPath]) -> Iterator[None]:
    """Within this block every file read must resolve (symlinks followed) inside one of
    ``roots``: a trial folder's link to ``/etc/passwd``, ``/proc/self/environ`` or a file
    planted beside the input is refused with a reason, never read."""
    token = _ROOTS.set(tuple(os.path.realpath(os.fspath(r)) for r in roots))
    _real_folder.cache_clear()
    try:
        yield
    finally:
        _ROOTS.reset(token)
        _real_folder.cache_clear()


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def check_confined(path: StrPath) -> None:
    """Raise InputError when ``path`` resolves outside the roots of :func:`confined_to`."""
    roots = _ROOTS.get()
    if roots is None:
        return
    where = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(where))
    try:
        linked = stat.S_ISLNK(os.lstat(where).st_mode)
    except OSError:
        linked = True  # missing or unreadable: resolve it whole, the open reports why
    # a file that is no link resolves to its folder's real path: folders are resolved once
    real = os.path.realpath(where) if linked else os.path.join(_real_folder(folder), name)
    for root in roots:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return
    raise InputError(os.fspath(path), f"links outside the input ({real}); not read")


def open_regular(path: StrPath) -> BinaryIO:
    """Open a regular file inside the input for reading; a FIFO, device or directory is
    refused at once (the open does not block), as is a link out of the input."""
    fd, _ = _open_regular_fd(path)
    return os.fdopen(fd, "rb")


def _open_regular_fd(path: StrPath) -> tuple[int, os.stat_result]:
    """The descriptor and ``fstat`` of a regular file inside the input (see
    :func:`open_regular`); the caller closes it."""
    check_confined(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise InputError(os.fspath(path), f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InputError(os.fspath(path), "not a regular file")
    return fd, info


def file_size(path: Path) -> int:
    """Size of a regular file, with symlink loops and missing files as InputError."""
    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(str(path), "symlink loop") from None
        if exc.errno == errno.ENOENT and path.is_symlink():
            raise InputError(str(path), "broken symlink") from None
        raise InputError(str(path), f"cannot stat: {exc.strerror or exc}") from None
    if not path.is_file():
        raise InputError(str(path), "not a regular file")
    return st.st_size


def read_bytes_if_present(path: StrPath, max_bytes: int | None = None) -> bytes | None:
    """The file's bytes, or None when nothing is at the path (no listing needed first)."""
    try:
        return read_bytes(path, max_bytes)
    except Missing:
        return None


def read_bytes(path: StrPath, max_bytes: int | None = None) -> bytes:
    """Read a whole file, refusing files over ``max_bytes`` before reading them.

    One open, one ``fstat`` and (for a regular file that does not change meanwhile) one
    read per file; non-blocking, so a FIFO is refused, not waited on.
    """
    max_bytes = max_file_bytes() if max_bytes is None else max_bytes
    fd, info = _open_regular_fd(path)
    try:
        if info.st_size > max_bytes:
            raise TooLarge(os.fspath(path), info.st_size, max_bytes)
        want = info.st_size + 1  # one byte more than the size: a short read is the end
        data = os.read(fd, want)
        if len(data) < want:
            return data
        chunks, total = [data], len(data)  # the file grew while being read: read to its end
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(os.fspath(path), total, max_bytes)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(os.fspath(path), f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _open_error(path: StrPath, exc: OSError) -> InputError:
    where = os.fspath(path)
    if exc.errno == errno.ELOOP:
        return InputError(where, "symlink loop")
    if exc.errno == errno.ENOENT and os.path.islink(where):
        return InputError(where, "broken symlink")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Missing(where, "no such file")
    if exc.errno == errno.EISDIR:
        return InputError(where, "not a regular file")
    return InputError(where, f"cannot read: {exc.strerror or exc}")


def decode_text(path: StrPath, data: bytes) -> str:
    """Decode UTF-8 text, rejecting binary content and invalid byte sequences."""
    if data.find(b"\x00", 0, 8192) >= 0:
        raise InputError(os.fspath(path), "binary content (NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(os.fspath(path), f"invalid UTF-8 at byte {exc.start}") from None


def read_text(path: StrPath, max_bytes: int | None = None) -> str:
    """Read a UTF-8 text file with the checks of :func:`read_bytes` and :func:`decode_text`."""
    return decode_text(path, read_bytes(path, max_bytes))


def parse_json(path: StrPath, data: bytes) -> Any:
    """Parse JSON bytes, turning every failure into a one-line InputError.

    Uses pydantic-core's parser (about twice as fast as the standard library's); on
    failure the standard library re-parses to give a precise reason.
    """
    if data.find(b"\x00", 0, 8192) >= 0:
        raise InputError(os.fspath(path), "binary content (NUL bytes), not text")
    try:
        return pydantic_core.from_json(data)
    except ValueError:
        pass
    text = decode_text(path, data)
    if not text.strip():
        raise InputError(os.fspath(path), "empty file")
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(os.fspath(path), "JSON nested too deeply to read (more than "
                         f"{sys.getrecursionlimit()} levels)") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        if _left_open(text):
            raise InputError(os.fspath(path), "truncated JSON (input ends inside a value; "
                             f"{where}: {exc.msg})") from None
        raise InputError(os.fspath(path), f"malformed JSON at {where}: {exc.msg}") from None


def _left_open(text: str) -> bool:
    """Whether the text ends inside a string or with brackets still open (cut short)."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return in_string or depth > 0


def nesting_depth(raw: bytes) -> int:
    """The deepest bracket nesting of a JSON text, brackets inside strings not counted.

    >>> nesting_depth(b'{"a": [1, {"b": "[[[["}]}'), nesting_depth(b'"x"'), nesting_depth(b"]")
    (3, 0, 0)
    """
    brackets = _JSON_STRING.sub(b"", raw).translate(None, b'\t\n\r ",.:-+0123456789'
                                                   b"abcdefghijklmnopqrstuvwxyz"
                                                   b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    if not brackets:
        return 0
    import numpy as np

    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1,
                     np.where((codes == ord("]")) | (codes == ord("}")), -1, 0))
    return max(0, int(np.cumsum(steps).max()))


def read_json(path: StrPath, max_bytes: int | None = None) -> Any:
    """Read and parse a JSON document."""
    return parse_json(path, read_bytes(path, max_bytes))


def read_json_object(path: StrPath, max_bytes: int | None = None) -> dict[str, Any]:
    """Read a JSON document whose top level must be an object."""
    value = read_json(path, max_bytes)
    if not isinstance(value, dict):
        raise InputError(os.fspath(path), f"expected a JSON object, found {type(value).__name__}")
    return value


def iter_jsonl_lenient(path: Path) -> Iterator[tuple[int, int, int, Any, str | None]]:
    """Stream a JSON Lines file, yielding per-line errors instead of raising them."""
    file_size(path)
    handle = open_regular(path)
    with handle:
        offset = 0
        line_no = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            line_no += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                size = len(raw) + _skip_line(handle)  # never held in memory whole
                start, offset = offset, offset + size
                yield line_no, start, offset, None, (
                    f"line is {size / 2**20:.1f} MB, over the {MAX_LINE_BYTES >> 20} MB limit "
                    "for one JSON Lines line: skipped")
                continue
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            if b"\x00" in raw:
                raise InputError(str(path), f"binary content (NUL bytes) on line {line_no}")
            try:
                value = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                yield line_no, start, offset, None, f"invalid UTF-8 at byte {start + exc.start}"
                continue
            except json.JSONDecodeError as exc:
                yield line_no, start, offset, None, f"malformed JSON: {exc.msg}"
                continue
            yield line_no, start, offset, value, None


def _skip_line(handle: Any) -> int:
    """Read past the rest of the current line in chunks; the bytes skipped."""
    skipped = 0
    while True:
        chunk = handle.readline(1 << 20)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def _more_lines_follow(handle: Any, budget: int) -> bool:
    """Whether the current line ends within ``budget`` bytes and non-blank text follows it
    (read in chunks, nothing kept)."""
    while budget > 0:
        chunk = handle.readline(min(budget, 1 << 20))
        if not chunk:
            return False
        budget -= len(chunk)
        if chunk.endswith(b"\n"):
            return bool(handle.read(4096).strip())
    return False


def peek_first_json_line(path: Path, limit: int = 1 << 20) -> Any:
    """The first non-blank line of a file parsed as JSON, or None when it is not JSON.

    Reads at most ``limit`` bytes of a line, so a huge one-line file (a JSON document
    written on one line) costs nothing; a longer first line is read (up to the JSON Lines
    line limit) only when more lines follow it, so a JSON Lines file whose first event is
    large is still recognised as one.
    """
    try:
        with open_regular(path) as handle:
            while True:
                raw = handle.readline(limit + 1)
                if not raw:
                    return None
                if len(raw) > limit and not raw.endswith(b"\n"):
                    start = handle.tell() - len(raw)
                    if not _more_lines_follow(handle, MAX_LINE_BYTES - len(raw)):
                        return None  # one long line and nothing after: not JSON Lines
                    handle.seek(start)
                    raw = handle.readline(MAX_LINE_BYTES + 1)
                if raw.strip():
                    try:
                        return json.loads(raw.decode("utf-8"))
                    except (UnicodeDecodeError, json.JSONDecodeError):
                        return None
    except (OSError, InputError):
        return None


def first_byte(path: Path) -> bytes:
    """The first non-whitespace byte of a file ('' when empty or unreadable)."""
    try:
        with open_regular(path) as handle:
            chunk = handle.read(4096)
    except (OSError, InputError):
        return b""
    stripped = chunk.lstrip()
    return stripped[:1]
