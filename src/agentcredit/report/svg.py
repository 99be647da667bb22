"""Small inline SVG charts for the report: ROC curves and score histograms. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#57606a")
DASHES = ("", "7 4", "2 3", "10 3 2 3", "4 4", "1 5")
MARKERS = ("circle", "square", "diamond", "triangle", "cross", "circle")


def roc_points(scores: Sequence[float], positive: Sequence[bool]) -> list[tuple[float, float]]:
    """(false positive rate, true positive rate) at every threshold, from (0,0) to (1,1).

    >>> roc_points([0.9, 0.1], [True, False])
    [(0.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
    """
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(positive, dtype=bool)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return []
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.append(np.flatnonzero(np.diff(s)), len(s) - 1)  # each threshold's last row
    tp, fp = np.cumsum(y)[last], np.cumsum(~y)[last]
    return [(0.0, 0.0), *zip((fp / n_neg).tolist(), (tp / n_pos).tolist(), strict=True)]


def roc_svg(curves: dict[str, list[tuple[float, float]]], size: int = 320) -> str:
    """ROC curves of several scorers on one square chart with a legend."""
    pad = 36
    inner = size - 2 * pad
    parts = [f'<svg class="roc" viewBox="0 0 {size} {size + 20 * len(curves)}" '
             f'width="{size}" role="img" aria-label="ROC curves">',
             f'<rect x="{pad}" y="{pad}" width="{inner}" height="{inner}" fill="#fff" '
             'stroke="#d0d7de"/>',
             f'<line x1="{pad}" y1="{pad + inner}" x2="{pad + inner}" y2="{pad}" '
             'stroke="#d0d7de" stroke-dasharray="4 4"/>',
             f'<text x="{size / 2}" y="{size - 8}" text-anchor="middle" font-size="11">'
             'false positive rate</text>',
             f'<text x="12" y="{size / 2}" font-size="11" transform="rotate(-90 12 {size / 2})"'
             ' text-anchor="middle">true positive rate</text>']
    for n, (name, points) in enumerate(curves.items()):
        # Overlapping curves stay distinguishable: each has its own colour, dash pattern,
        # marker shape and a small offset, and the legend repeats all three.
        colour, dash = COLOURS[n % len(COLOURS)], DASHES[n % len(DASHES)]
        shift = 1.5 * n
        xy = [(pad + x * inner + shift, pad + (1 - y) * inner - shift) for x, y in points]
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(xy))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<path class="roc-curve" d="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="2"{dashed} stroke-opacity="0.85"><title>{escape(name)}'
                     '</title></path>')
        parts += [_marker(MARKERS[n % len(MARKERS)], x, y, colour) for x, y in xy[1:-1]]
        y = size + 14 + 20 * n
        parts.append(f'<line x1="{pad}" y1="{y - 7}" x2="{pad + 22}" y2="{y - 7}" '
                     f'stroke="{colour}" stroke-width="2"{dashed}/>'
                     + _marker(MARKERS[n % len(MARKERS)], pad + 11, y - 7, colour)
                     + f'<text x="{pad + 28}" y="{y - 3}" font-size="11">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    if shape == "square":
        return f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{colour}"/>'
    if shape == "diamond":
        return (f'<path d="M{x:.1f},{y - 4:.1f} L{x + 4:.1f},{y:.1f} L{x:.1f},{y + 4:.1f} '
                f'L{x - 4:.1f},{y:.1f} Z" fill="{colour}"/>')
    if shape == "triangle":
        return (f'<path d="M{x:.1f},{y - 4:.1f} L{x + 4:.1f},{y + 3:.1f} L{x - 4:.1f},'
                f'{y + 3:.1f} Z" fill="{colour}"/>')
    if shape == "cross":
        return (f'<path d="M{x - 3:.1f},{y - 3:.1f} L{x + 3:.1f},{y + 3:.1f} M{x + 3:.1f},'
                f'{y - 3:.1f} L{x - 3:.1f},{y + 3:.1f}" stroke="{colour}" stroke-width="2"/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'


def histogram_svg(groups: dict[str, Sequence[float]], bins: int = 10, width: int = 360,
                  height: int = 180) -> str:
    """Side-by-side histograms of scores in [0, 1], one colour per group."""
    pad = 28
    counts = {name: np.bincount(np.minimum((np.asarray(values, dtype=np.float64) * bins)
                                           .astype(np.int64), bins - 1), minlength=bins).tolist()
              for name, values in groups.items()}
    peak = max((c for cs in counts.values() for c in cs), default=0) or 1
    slot = (width - 2 * pad) / bins
    bar = slot / max(len(groups), 1) * 0.9
    parts = [f'<svg class="hist" viewBox="0 0 {width} {height + 20}" width="{width}" '
             'role="img" aria-label="score distribution">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
             'stroke="#57606a"/>']
    for g, (name, cs) in enumerate(counts.items()):
        colour = COLOURS[g % len(COLOURS)]
        for b, c in enumerate(cs):
            h = (height - 2 * pad) * c / peak
            x = pad + b * slot + g * bar
            parts.append(f'<rect x="{x:.1f}" y="{height - pad - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="{colour}"><title>{escape(name)} '
                         f'{b / bins:.1f}-{(b + 1) / bins:.1f}: {c}</title></rect>')
        parts.append(f'<text x="{pad + 110 * g}" y="{height + 12}" font-size="11" '
                     f'fill="{colour}">■ {escape(name)} ({len(groups[name])})</text>')
    for tick in (0, 0.5, 1):
        x = pad + tick * (width - 2 * pad)
        parts.append(f'<text x="{x}" y="{height - pad + 14}" font-size="10" '
                     f'text-anchor="middle">{tick}</text>')
    parts.append("</svg>")
    return "".join(parts)
