"""Issue 68: every page of the built documentation site, rendered in headless Chromium.

The strict MkDocs build cannot see what a reader sees: a list written straight after a
fenced block collapses into one paragraph with literal ``- **…**`` (GitHub renders it, Python
Markdown does not), a Sphinx role (``:func:`x```) or a ``>>>`` example stays raw text or turns
into nested quotes, a ``<value>`` placeholder vanishes as an unknown HTML element or shows
escaped, and a link points at a page or anchor that is not there. Each page is opened in
Chromium (``--dump-dom``: the document after the theme's scripts ran) and the rendered
article is read for each of those defects; the planted-defect test shows that each class is
caught. A screenshot of each tutorial's first screen is kept under ``test-output/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import ROOT

HTML_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "button", "caption", "code", "col", "colgroup", "dd",
    "del", "details", "div", "dl", "dt", "em", "figcaption", "figure", "footer", "form", "g",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "img", "input", "ins", "kbd",
    "label", "li", "mark", "nav", "ol", "p", "path", "pre", "q", "s", "samp", "section",
    "small", "span", "strong", "sub", "summary", "sup", "svg", "table", "tbody", "td", "th",
    "thead", "time", "tr", "u", "ul", "var"})
TUTORIALS = 3  # the tutorials under docs/tutorials/, each screenshotted
VOID = {"br", "col", "hr", "img", "input", "path"}
LIST_LINE = re.compile(r"(?:^|\n)[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S")
SPHINX_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|exc|data|obj|ref|const|term):")
RAW_MARKDOWN = re.compile(r"\*\*|(?<![\w/])__\w|`|\]\(|^\s*>>>", re.M)
ESCAPED = re.compile(r"&lt;|&gt;|&amp;")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class _Article(HTMLParser):
    """The rendered article of one page: its text (code blanked, and without code),
    unknown elements, quote depth, and every link and id of the whole page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.article_depth = -1
        self.code = 0
        self.heading = 0
        self.quotes = 0
        self.prose: list[str] = []
        self.all_text: list[str] = []
        self.text: list[str] = []
        self.unknown: list[str] = []
        self.nested_quotes = 0
        self.links: list[str] = []
        self.ids: set[str] = set()

    def _in_article(self) -> bool:
        return self.article_depth >= 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        for key in ("href", "src"):
            if values.get(key) and tag in ("a", "img"):
                self.links.append(values[key] or "")
        if tag in VOID:
            if self._in_article() and tag not in HTML_TAGS:
                self.unknown.append(tag)
            return
        self.stack.append(tag)
        if tag == "article" and "md-content__inner" in (values.get("class") or ""):
            self.article_depth = len(self.stack)
            return
        if not self._in_article():
            return
        if tag not in HTML_TAGS:
            self.unknown.append(tag)
        if tag in ("code", "pre", "svg"):
            self.code += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading += 1
        elif tag == "blockquote":
            self.quotes += 1
            self.nested_quotes += self.quotes > 1

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID or tag not in self.stack:
            return
        while self.stack:
            top = self.stack.pop()
            if self._in_article() and len(self.stack) < self.article_depth:
                self.article_depth = -1
            elif self._in_article():
                if top in ("code", "pre", "svg"):
                    self.code -= 1
                elif top in ("h1", "h2", "h3", "h4", "h5", "h6"):
                    self.heading -= 1
                elif top == "blockquote":
                    self.quotes -= 1
            if top == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self._in_article():
            return
        if not self.heading:  # "1. Install" is a heading, not a collapsed list
            self.prose.append("\u2039code\u203a" if self.code else data)
        self.all_text.append(data)
        if not self.code:
            self.text.append(data)


def read(dom: str) -> _Article:
    page = _Article()
    page.feed(dom)
    page.close()
    return page


def defects(dom: str, url_path: str, site: Path) -> list[str]:
    """What a reader of the page at ``url_path`` (``guides/scoring/index.html``) would trip
    over, one line each: ``collapsed list``, ``raw Sphinx role``, ``raw Markdown``,
    ``placeholder`` (vanished or escaped) and ``broken link``."""
    page = read(dom)
    found = []
    prose = "".join(page.prose)
    for match in LIST_LINE.finditer(prose):
        found.append(f"collapsed list: {prose[match.start():match.end() + 60].strip()!r}")
    text = "".join(page.text)
    for kind, pattern in (("raw Sphinx role", SPHINX_ROLE), ("raw Markdown", RAW_MARKDOWN)):
        for match in pattern.finditer(text):
            found.append(f"{kind}: {text[max(0, match.start() - 30):match.end() + 30]!r}")
    if page.nested_quotes:
        found.append("raw Markdown: a '>>>' example rendered as nested quotes")
    found += [f"placeholder: <{tag}> vanished as an HTML element" for tag in page.unknown]
    everything = "".join(page.all_text)
    for match in ESCAPED.finditer(everything):
        context = everything[max(0, match.start() - 20):match.end() + 20]
        found.append(f"placeholder: escaped {context!r}")
    found += [f"broken link: {href}" for href in page.links if not _resolves(href, url_path, site)]
    return found


_IDS: dict[Path, set[str]] = {}


def _resolves(href: str, url_path: str, site: Path) -> bool:
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith(("mailto:", "data:", "javascript:")):
        return True  # outside the site: not checked offline
    base = (site / url_path).parent
    target = (base / unquote(parts.path)).resolve() if parts.path else (site / url_path)
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file() or site.resolve() not in target.resolve().parents:
        return False
    if not parts.fragment or target.suffix != ".html":
        return True
    if target not in _IDS:
        _IDS[target] = read(target.read_text(encoding="utf-8")).ids
    return unquote(parts.fragment) in _IDS[target]


def render(browser: str, page: Path, profile: Path, screenshot: Path | None = None) -> str:
    """The page's document after Chromium ran its scripts (and a 1280x900 screenshot)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}"]
    if screenshot is not None:
        subprocess.run([browser, *flags, f"--screenshot={screenshot}", "--window-size=1280,900",
                        page.as_uri()], capture_output=True, timeout=120, check=False)
    done = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True,
                          text=True, timeout=120, check=False)
    return done.stdout


def build(config_dir: Path, site: Path, *, strict: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)]
    return subprocess.run([*command, "--strict"] if strict else command, cwd=config_dir,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                               "PYTHONPATH": str(ROOT / "src")})


def _need_browser() -> str:
    import importlib.util

    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("the [docs] extra is not installed")
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs Debian's chromium)")
    return browser


def test_every_page_renders_clean_in_chromium(tmp_path: Path) -> None:
    browser = _need_browser()
    site = tmp_path / "site"
    done = build(ROOT, site)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = sorted(p for p in site.rglob("index.html") if "search" not in p.parts)
    assert len(pages) >= 20
    shots = ROOT / "test-output"
    shots.mkdir(exist_ok=True)

    def one(page: Path) -> list[str]:
        url_path = page.relative_to(site).as_posix()
        tutorial = url_path.startswith("tutorials/") and url_path != "tutorials/index.html"
        shot = shots / f"tutorial-{page.parent.name}.png" if tutorial else None
        dom = render(browser, page, tmp_path / f"profile-{page.parent.name}", shot)
        assert "md-content__inner" in dom, f"{url_path}: Chromium rendered nothing"
        return [f"{url_path}: {d}" for d in defects(dom, url_path, site)]

    with ThreadPoolExecutor(2) as pool:
        found = [d for ds in pool.map(one, pages) for d in ds]
    assert found == []
    tutorials = sorted((site / "tutorials").glob("*/index.html"))
    assert len(tutorials) == TUTORIALS
    for page in tutorials:
        shot = shots / f"tutorial-{page.parent.name}.png"
        assert shot.is_file() and shot.stat().st_size > 10_000, shot


PLANTED = """# Planted

A paragraph, then a fence.

```bash
echo hi
```
- **collapsed** straight after the fence

Use :func:`agentcredit.score` here.

A bold that never closed: **half.

>>> print(1)
1

Pass `--unscored` fallback:<value> or `--unscored fallback:&lt;escaped&gt;`.

[nowhere](missing.md) and [no anchor](#not-here).

## 2. A numbered heading

- a list
- that renders
"""


def test_each_planted_defect_is_caught(tmp_path: Path) -> None:
    browser = _need_browser()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(PLANTED)
    config = (ROOT / "mkdocs.yml").read_text()
    config = re.sub(r"(?ms)^(hooks|plugins|nav|validation):.*?(?=^\S|\Z)", "", config)
    (tmp_path / "mkdocs.yml").write_text(config.replace("strict: true", "strict: false"))
    done = build(tmp_path, tmp_path / "site", strict=False)
    assert done.returncode == 0, done.stderr[-3000:]
    dom = render(browser, tmp_path / "site" / "index.html", tmp_path / "profile")
    found = defects(dom, "index.html", tmp_path / "site")
    kinds = {line.split(":", 1)[0] for line in found}
    assert kinds == {"collapsed list", "raw Sphinx role", "raw Markdown", "placeholder",
                     "broken link"}, found
    assert any("<value>" in line for line in found), found
    assert any("escaped" in line for line in found), found
    assert any("nested quotes" in line for line in found), found
    assert {line for line in found if line.startswith("broken link")} == {
        "broken link: missing.md", "broken link: #not-here"}, found
    assert not any("a list" in line or "numbered heading" in line for line in found), found
