"""Text from users is text in figures: labels with ``$``, ``^`` or ``_`` never reach mathtext (every display and
the audit report draw them verbatim), and non-Latin labels fall back to an installed font covering them, with
no per-glyph warning."""

import io
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import rashomon as rsh  # noqa: E402
from rashomon.plotting import plain_text  # noqa: E402

MATH = "x$^$ cost"  # mathtext parses "$^$" and fails on it
RNG = np.random.default_rng(0)
N = 60


def _frame(names):
    df = pd.DataFrame(RNG.normal(size=(N, 3)), columns=names)
    return df


def _draw(fig):
    """Render to PNG and SVG, as a report does; returns the warnings raised."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for fmt in ("png", "svg"):
            fig.savefig(io.BytesIO(), format=fmt)
    plt.close(fig)
    return [str(x.message) for x in w]


def _texts(fig):
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text)]


@pytest.fixture(scope="module")
def sets():
    names = [MATH, "b", "c"]
    X = _frame(names)
    y = X[MATH] - X["b"] + RNG.normal(size=N)
    lin = rsh.RashomonSet(rsh.LinearModelClass(), 0.1).fit(X, y)
    s = np.where(RNG.random(N) < 0.5, "grp $A^$", "grp_B$^$")
    return lin, X, y, s


def test_displays_draw_math_like_labels_verbatim(sets):
    lin, X, y, s = sets
    figs = []
    figs.append(lin.model_class_reliance(MATH).plot().figure_)
    figs.append(lin.disparity_range(s).plot().figure_)
    figs.append(lin.coef_range().plot().figure_)
    for fig in figs:
        assert _draw(fig) == []  # drawing raised nothing (it raised a ValueError from mathtext before)


def test_plain_text_escapes_once_and_turns_tex_off():
    fig, ax = plt.subplots()
    ax.set_title("cost $5^$")
    ax.set_yticks([0, 1], ["a$^$b", "c"])
    plain_text(ax)
    plain_text(ax)  # idempotent: the dollar sign is escaped once
    assert ax.get_title() == r"cost \$5^\$"
    assert not any(t.get_usetex() for t in [ax.title, *ax.get_yticklabels()])
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_yticklabels()] == [r"a\$^\$b", "c"]
    # independent: matplotlib's own check says the escaped strings are not math
    from matplotlib.text import Text

    assert not Text(text="")._preprocess_math(r"cost \$5^\$")[1] and Text(text="")._preprocess_math("$5^$")[1]
    assert _draw(fig) == []


def test_audit_report_with_math_like_feature_names(tmp_path):
    df = _frame(["a$^$b", "c$_$d", "e"])
    df["y"] = df["a$^$b"] + RNG.normal(size=N)
    res = rsh.audit(df, "y", {"g": ["a$^$b", "c$_$d"]}, model_class="linear", cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = res.save(out_dir=tmp_path)
    assert report.exists() and (tmp_path / "envelope_g.png").stat().st_size > 1000


def test_hebrew_labels_use_a_covering_font_without_glyph_warnings():
    fig, ax = plt.subplots()
    ax.set_yticks([0, 1], ["שלום", "b"])
    ax.set_title("קבוצה")
    plain_text(ax)
    assert _draw(fig) == []


def test_cjk_labels_fall_back_and_warn_once_when_no_font_has_them():
    from rashomon.plotting._layout import _fonts

    names, faces = _fonts()
    cjk = any(f.get_char_index(ord("中")) for f in faces)
    fig, ax = plt.subplots()
    ax.set_yticks([0, 1], ["中文", "日本語"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        plain_text(ax)
    ours = [str(x.message) for x in w if issubclass(x.category, rsh.RashomonWarning)]
    if cjk:
        assert ours == []
    else:
        assert len(ours) == 1 and "fonts-noto-cjk" in ours[0] and "中" in ours[0]
    assert not any("missing from font" in m for m in _draw(fig))  # no per-glyph warning


CJK_FONT = __import__("pathlib").Path(__file__).parent / "data" / "fonts" / "NotoSansCJKjp-subset.otf"


@pytest.fixture
def cjk_font():
    """A subset of Noto Sans CJK JP (tests/data/fonts, OFL) registered with matplotlib's font manager for one test,
    so the CJK path runs on any machine; the font manager and the fallback list are restored afterwards."""
    from matplotlib import font_manager

    from rashomon.plotting._layout import _fonts

    fm = font_manager.fontManager
    saved = list(fm.ttflist)
    fm.addfont(str(CJK_FONT))
    _fonts.cache_clear()
    yield CJK_FONT
    fm.ttflist[:] = saved
    fm._findfont_cached.cache_clear()
    _fonts.cache_clear()


def _ink(fig, text):
    """``text``'s window extent and the figure's grey image (Agg)."""
    fig.canvas.draw()
    return text.get_window_extent(), np.asarray(fig.canvas.buffer_rgba())[..., :3].mean(axis=2)


def test_cjk_labels_are_drawn_with_an_installed_cjk_font(cjk_font):
    """With a CJK font installed, CJK labels are drawn with it: no warning of ours, no per-glyph warning, a
    non-empty extent, and the very pixels of the same text drawn with that font's file named explicitly (the
    figure's own font, DejaVu Sans, has none of these glyphs; without the fallback they are placeholder boxes)."""
    from matplotlib.font_manager import FontProperties

    from rashomon.plotting._layout import _fonts

    assert "Noto Sans CJK JP" in _fonts()[0]  # the product's fallback list finds the registered font by name
    label = "中文日本語"
    fig, ax = plt.subplots()
    ax.set_yticks([0, 1], [label, "b"])
    ax.set_title(label)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        plain_text(ax)
    assert [str(x.message) for x in w if issubclass(x.category, rsh.RashomonWarning)] == []
    assert not any("missing from font" in m for m in _draw(fig))  # no per-glyph warning (PNG and SVG)
    # the pixels: the label alone, through plain_text, against the same text drawn with the font file named
    figs, texts = [], []
    for explicit in (False, True):
        f = plt.figure(figsize=(4, 1), dpi=100)
        props = {"fontproperties": FontProperties(fname=cjk_font, size=20)} if explicit else {"fontsize": 20}
        texts.append(f.text(0.05, 0.3, label, va="baseline", ha="left", **props))
        plain_text(f)
        figs.append(f)
    (bb, img), (rbb, rimg) = (_ink(f, t) for f, t in zip(figs, texts))
    assert bb.width > 0 and bb.height > 0 and bb.width == rbb.width  # a non-empty extent, the CJK font's advance
    assert (img < 128).sum() > 50  # ink: the glyphs are drawn
    assert np.array_equal(img, rimg)  # the very pixels of the CJK font's glyphs (the same baseline)
    for f in figs:
        plt.close(f)
