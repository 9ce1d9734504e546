"""One check for every figure the tests draw: no text is clipped by the figure's edge.

:func:`assert_texts_inside` draws the figure and checks that the window extent of every visible
``Text`` artist (titles, axis labels, tick labels, legend texts, annotations, colour-bar labels) lies
inside the figure, with a pixel of slack. ``tests/conftest.py`` runs it on every figure a test leaves
open, so every ``.plot()`` in the suite is checked.
"""

from __future__ import annotations

SLACK = 1.0  # pixels


def _undrawn_tick_labels(fig) -> set:
    """Labels of ticks outside their axis's view limits, or of a hidden axis: kept by matplotlib, not drawn."""
    out = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = 1e-9 * max(hi - lo, 1e-300)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not ax.axison or not axis.get_visible() or not lo - eps <= tick.get_loc() <= hi + eps:
                    out.update((id(tick.label1), id(tick.label2)))
    return out


def texts_outside(fig, slack: float = SLACK) -> list:
    """``(text, extent)`` of every visible, non-empty, drawn text artist reaching outside ``fig``."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    undrawn = _undrawn_tick_labels(fig)
    bad = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in undrawn:
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        ext = t.get_window_extent(renderer)
        if ext.x0 < box.x0 - slack or ext.y0 < box.y0 - slack or ext.x1 > box.x1 + slack or ext.y1 > box.y1 + slack:
            bad.append((t.get_text(), tuple(round(v, 1) for v in ext.extents)))
    return bad


def assert_texts_inside(fig, slack: float = SLACK) -> None:
    """Fail naming each text that the figure's edge would clip (figure box ``(0, 0, w, h)`` in pixels)."""
    bad = texts_outside(fig, slack)
    w, h = fig.bbox.width, fig.bbox.height
    assert not bad, f"text outside the figure (0, 0, {w:.0f}, {h:.0f}): {bad}"
