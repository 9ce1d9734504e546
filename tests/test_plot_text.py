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
