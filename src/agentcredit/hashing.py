"""Content hashes and safe file writes: the neutral helpers every layer shares.

A checklist's hash, a skill's and a bank's hash, a build unit's input key and a model
request's cache key are all the sha256 of the same canonical JSON (sorted keys, no
insignificant whitespace), so the same content always hashes the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace.

    >>> canonical_json({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """sha256 hex of the canonical JSON of ``value``.

    >>> canonical_sha256({"b": 1, "a": 2}) == canonical_sha256({"a": 2, "b": 1})
    True
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new, never half
    (a temporary file beside it, then a rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
