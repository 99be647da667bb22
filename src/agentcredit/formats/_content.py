"""Turning the many shapes of message content into text plus image references."""

from __future__ import annotations

import json
from typing import Any

from agentcredit.safe_io import MAX_JSON_DEPTH, nesting_depth
from agentcredit.schema import ImageRef


def content_text(content: Any) -> tuple[str, tuple[ImageRef, ...]]:
    """Text and images of a message content: a string, a list of parts, or anything else.

    Understands ATIF content parts (``{"type": "image", "source": {...}}``), OpenAI parts
    (``image_url``), Anthropic parts (``image`` with a base64 ``source``) and Claude Code
    ``tool_result`` nesting. Inline image bytes are never kept, only their media type.

    >>> content_text([{"type": "text", "text": "hi"}, {"type": "image",
    ...     "source": {"media_type": "image/png", "path": "s.png"}}])[0]
    'hi'
    """
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if isinstance(content, list):
        texts: list[str] = []
        images: list[ImageRef] = []
        for part in content:
            text, imgs = _part(part)
            if text:
                texts.append(text)
            images.extend(imgs)
        return "\n".join(texts), tuple(images)
    if isinstance(content, dict):
        return _part(content)
    return json.dumps(content, ensure_ascii=False), ()


def _part(part: Any) -> tuple[str, tuple[ImageRef, ...]]:
    if isinstance(part, str):
        return part, ()
    if not isinstance(part, dict):
        return json.dumps(part, ensure_ascii=False), ()
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and "text" in part):
        text = part.get("text")
        return (text if isinstance(text, str) else ""), ()
    if kind in ("image", "image_url", "input_image"):
        return "", (_image(part),)
    if kind == "tool_result":
        return content_text(part.get("content"))
    return json.dumps(part, ensure_ascii=False), ()


def _image(part: dict[str, Any]) -> ImageRef:
    source = part.get("source")
    if isinstance(source, dict):
        mime = str(source.get("media_type") or source.get("mime_type") or "image/*")
        path = source.get("path") or source.get("url")
        if isinstance(path, str):
            return ImageRef(mime_type=mime, path=path)
        return ImageRef(mime_type=mime, note="inline image data not kept")
    url = part.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if isinstance(url, str):
        if url.startswith("data:"):
            mime = url[5:].split(";", 1)[0] or "image/*"
            return ImageRef(mime_type=mime, note="inline image data not kept")
        return ImageRef(mime_type="image/*", path=url)
    return ImageRef(mime_type="image/*", note="image without a source")


def arguments_dict(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; JSON strings are decoded, anything else kept as raw.

    >>> arguments_dict('{"a": 1}'), arguments_dict("ls"), arguments_dict(None)
    ({'a': 1}, {'raw': 'ls'}, {})
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if value.count("[") + value.count("{") > MAX_JSON_DEPTH and \
                nesting_depth(value.encode("utf-8", "replace")) > MAX_JSON_DEPTH:
            return {"raw": value}  # kept as text: nothing downstream recurses into it
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return {"raw": value}
        return decoded if isinstance(decoded, dict) else {"raw": decoded}
    return {"raw": value}
