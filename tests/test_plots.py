"""Every public ``plot`` / ``plot_*`` method, rendered on tiny data, with assertions on what was drawn.

``test_every_plot_method_is_covered`` introspects the public classes (``rashomon.__all__`` and
``rashomon.plotting.__all__``): a new plot method without a test here fails the suite.
"""

import inspect

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

import rashomon  # noqa: E402
import rashomon.plotting  # noqa: E402
from rashomon import (  # noqa: E402
    LinearModelClass,
    RashomonSet,
    entropy_importance,
    feature_reliance,
    learner_importance,
    learner_pd,
    likelihood_importance,
    model_importance_ci,
    partial_dependence,
    pd_importance,
    pimp,
    uncertainty_pd,
)
from rashomon.plotting import (  # noqa: E402
    LearnerImportanceDisplay,
    LearnerPDDisplay,
    MCRBandDisplay,
    MCREnvelopeDisplay,
    PDDisplay,
    PIMPDisplay,
    RashomonPDBandDisplay,
    RelianceDisplay,
    UncertaintyImportanceDisplay,
    UncertaintyPDDisplay,
)

COVERED: set = set()


def covers(*names):
    """Register the ``Class.method`` names a test renders and checks."""

    def deco(f):
        COVERED.update(names)
        return f

    return deco


# every figure a test leaves open is checked for clipped text, then closed (``_no_clipped_text`` in conftest.py)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 80
    X = rng.normal(size=(n, 3))
    y = 1.0 * X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def rset(data):
    X, y = data
    return RashomonSet(LinearModelClass(), epsilon=0.1).fit(X, y)


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0).fit(X, y)


def _legend_texts(ax):
    leg = ax.get_legend()
    assert leg is not None
    return [t.get_text() for t in leg.get_texts()]


def _n_bars(ax):
    return sum(len(c) for c in ax.containers if isinstance(c, BarContainer))


# ---------------------------------------------------------------- Rashomon set: MCR, envelope, PD band


@covers("MCRResult.plot", "MCREnvelopeDisplay.plot")
def test_mcr_result_plot(rset):
    res = rset.model_class_reliance(0)
    disp = res.plot()
    assert isinstance(disp, MCREnvelopeDisplay)
    ax = disp.ax_
    assert disp.figure_ is ax.figure
    # envelope, ε line, MCR interval
    assert len(ax.lines) == 3
    env = disp.envelope_line_.get_ydata()
    expected = res.envelope(disp.m_grid)
    fin = np.isfinite(expected)
    assert fin.any()
    np.testing.assert_allclose(np.asarray(env)[fin], expected[fin])
    np.testing.assert_allclose(disp.interval_.get_xdata(), [res.lower, res.upper])
    np.testing.assert_allclose(disp.interval_.get_ydata(), [res.epsilon_abs] * 2)
    # models found (+ the loss minimiser as a star when the reference is known)
    n_scatter = 2 if res.reference_model is not None else 1
    assert len(ax.collections) == n_scatter
    assert disp.models_.get_offsets().shape[0] == disp.model_mr.size > 0
    texts = _legend_texts(ax)
    assert texts[:3] == ["certified envelope", "models found (one per γ)", "ε (Rashomon threshold)"]
    assert texts[3].startswith("MCR [")
    assert ax.get_xlabel() == f"model reliance (ratio) on {', '.join(res.features)}"
    assert ax.get_ylabel() == "empirical loss e_orig"
    # an existing ax is drawn on, not replaced
    fig, ax2 = plt.subplots()
    assert res.plot(ax=ax2).ax_ is ax2


@covers("MCREnvelope.plot", "MCREnvelope.plot_band", "MCRBandDisplay.plot")
def test_mcr_envelope_plot_and_band(rset):
    env = rset.envelope(0, [0.02, 0.1, 0.3])
    disp = env.plot()
    assert isinstance(disp, MCREnvelopeDisplay)
    lo, hi = env.bounds(float(env.epsilons.max()))
    np.testing.assert_allclose(disp.interval_.get_xdata(), [lo, hi])
    assert disp.ax_.lines[1].get_ydata()[0] == pytest.approx(env.epsilons.max())  # ε line
    mid = float(np.sort(env.epsilons)[1])
    disp_mid = env.plot(epsilon=mid)
    np.testing.assert_allclose(disp_mid.interval_.get_xdata(), env.bounds(mid))

    band = env.plot_band()
    assert isinstance(band, MCRBandDisplay)
    ax = band.ax_
    assert len(ax.collections) == 1 and band.band_ is ax.collections[0]
    assert len(ax.lines) == 3  # lower, upper, reference MR line at 1
    o = np.argsort(env.epsilons)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), env.epsilons[o])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), env.lower[o])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), env.upper[o])
    np.testing.assert_allclose(ax.lines[2].get_ydata(), [1.0, 1.0])
    assert ax.get_xlabel() == "Rashomon threshold ε (absolute loss)"
    assert ax.get_ylabel() == f"MCR (ratio) on {', '.join(env.features)}"
    # the band's polygon spans exactly [lower, upper]
    verts = band.band_.get_paths()[0].vertices
    assert verts[:, 1].min() == pytest.approx(env.lower.min())
    assert verts[:, 1].max() == pytest.approx(env.upper.max())


@covers("RashomonPDBand.plot", "RashomonPDBandDisplay.plot")
def test_rashomon_pd_band_plot(rset, data):
    X, _ = data
    band = rset.pd_band(0, grid_resolution=8)
    disp = band.plot()
    assert isinstance(disp, RashomonPDBandDisplay)
    ax = disp.ax_
    assert len(ax.collections) == 1 and isinstance(disp.band_, PolyCollection)
    assert len(ax.lines) == 1
    np.testing.assert_allclose(disp.reference_line_.get_xdata(), band.grid)
    np.testing.assert_allclose(disp.reference_line_.get_ydata(), band.reference)
    assert _legend_texts(ax) == ["Rashomon PD band", "PD of the loss minimiser"]
    assert ax.get_xlabel() == band.feature and ax.get_ylabel() == "partial dependence"
    verts = disp.band_.get_paths()[0].vertices
    assert verts[:, 1].min() == pytest.approx(band.lower.min())
    assert verts[:, 1].max() == pytest.approx(band.upper.max())

    # with the PD/ICE of a fitted model underneath
    pdr = partial_dependence(rset.reference_, X, 0, kind="both", grid=band.grid)
    disp2 = band.plot(pd_result=pdr)
    ax2 = disp2.ax_
    # ICE (one per row) + PD of the model + rug + reference line
    assert len(ax2.lines) == len(X) + 3
    assert _legend_texts(ax2) == [
        "PD of the fitted model (ICE in grey)",
        "Rashomon PD band",
        "PD of the loss minimiser",
    ]


# ---------------------------------------------------------------- PD / ICE, PD importance


@covers("PartialDependenceResult.plot", "PDDisplay.plot")
def test_partial_dependence_plots(forest, data):
    X, y = data
    r = partial_dependence(forest, X, 0, kind="both", grid_resolution=7)
    d = r.plot(color_by=X[:, 1])
    assert isinstance(d, PDDisplay)
    ax = d.ax_
    np.testing.assert_allclose(d.pd_line_.get_xdata(), r.grid[0])
    np.testing.assert_allclose(d.pd_line_.get_ydata(), r.average[0])
    assert len(d.lines_) == len(X)
    np.testing.assert_allclose(d.lines_[5].get_ydata(), r.individual[0][5])
    assert len(ax.lines) == len(X) + 2  # ICE, PD, rug
    assert len(ax.collections) == 1  # ± std band
    assert len(ax.figure.axes) == 2  # the ICE colour bar
    assert ax.figure.axes[1].get_ylabel() == "ICE colour"
    assert _legend_texts(ax) == ["± std of ICE", "PD"]
    assert ax.get_xlabel() == r.features[0] == "x0"
    assert ax.get_ylabel() == "partial dependence"

    # PD only, no band, no rug
    d = PDDisplay.from_result(r).plot(ice=False, std_band=False, rug=False)
    assert len(d.ax_.lines) == 1 and d.lines_ == [] and len(d.ax_.collections) == 0

    # 2-D: filled contour + colour bar
    r2 = partial_dependence(forest, X, [0, 1], grid_resolution=5)
    d2 = r2.plot()
    assert d2.contour_ is not None
    assert (d2.ax_.get_xlabel(), d2.ax_.get_ylabel()) == ("x0", "x1")
    assert len(d2.figure_.axes) == 2

    # crisp classifier: stacked bars, one container per class
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, (y > 0).astype(int))
    r3 = partial_dependence(clf, X, 0, response="crisp", grid_resolution=5)
    d3 = r3.plot()
    assert len(d3.bars_) == 2 and _n_bars(d3.ax_) == 2 * len(r3.grid[0])
    heights = np.array([[p.get_height() for p in b] for b in d3.bars_])
    np.testing.assert_allclose(heights.sum(axis=0), 1.0)
    assert _legend_texts(d3.ax_) == ["0", "1"]
    assert d3.ax_.get_ylabel() == "share of rows predicted as each class"


@covers("PDImportanceResult.plot", "RelianceDisplay.plot")
def test_pd_importance_plot(forest, data):
    X, _ = data
    imp = pd_importance(forest, X, grid_resolution=8)
    d = imp.plot()
    assert isinstance(d, RelianceDisplay)
    ax = d.ax_
    assert len(ax.patches) == 3
    order = np.argsort(imp.importances)
    np.testing.assert_allclose([p.get_width() for p in d.bars_], imp.importances[order])
    assert [t.get_text() for t in ax.get_yticklabels()] == [imp.names[i] for i in order]
    assert ax.get_xlabel() == "PD-based importance (Greenwell et al. 2018)"
    assert ax.get_lines()[0].get_xdata()[0] == 0.0  # reference line at 0 ("difference")


# ---------------------------------------------------------------- model reliance


@covers("FeatureRelianceResult.plot")
def test_feature_reliance_plot(data):
    X, y = data
    lr = LinearRegression().fit(X, y)
    fr = feature_reliance(lr, X, y, method="permutation", n_repeats=3, random_state=0)
    d = fr.plot()
    assert isinstance(d, RelianceDisplay)
    ax = d.ax_
    order = np.argsort(fr.ratio)
    assert len(ax.patches) == 3
    np.testing.assert_allclose([p.get_x() + p.get_width() for p in d.bars_], fr.ratio[order])
    assert all(p.get_x() == 1.0 for p in d.bars_)  # ratio bars start at 1 (no reliance)
    assert [t.get_text() for t in ax.get_yticklabels()] == [fr.names[i] for i in order]
    assert ax.get_xlabel() == "model reliance (ratio, permutation)"
    assert ax.get_lines()[0].get_xdata()[0] == 1.0
    assert d.errors is not None  # spread over repeats drawn as error bars
    segs = d.bars_.errorbar.lines[2][0].get_segments()  # error bars: ± sd over repeats
    sd = fr.ratio_repeats.std(axis=1, ddof=1)[order]
    np.testing.assert_allclose([s[1][0] - s[0][0] for s in segs], 2 * sd)
    d2 = fr.plot(kind="difference")
    np.testing.assert_allclose(sorted(p.get_width() for p in d2.bars_), np.sort(fr.difference))
    assert d2.ax_.get_xlabel() == "model reliance (difference, permutation)"
    with pytest.raises(ValueError, match="'kind'"):
        fr.plot(kind="log")


# ---------------------------------------------------------------- uncertainty


@covers("UncertaintyImportanceResult.plot", "UncertaintyImportanceDisplay.plot", "UncertaintyPDDisplay.plot")
def test_uncertainty_plots(forest, data):
    X, y = data
    lik = likelihood_importance(forest, X, y, n_repeats=2, random_state=0)
    ent = entropy_importance(forest, X, n_repeats=2, random_state=0)
    d = lik.plot()
    assert isinstance(d, UncertaintyImportanceDisplay)
    assert len(d.bars_) == 1 and len(d.ax_.patches) == 3
    assert _legend_texts(d.ax_) == ["likelihood-PFI"]
    assert d.ax_.get_xlabel() == "importance (nats)"
    order = np.argsort(lik.importances_mean)
    np.testing.assert_allclose([p.get_width() for p in d.bars_[0]], lik.importances_mean[order])
    d2 = ent.plot(other=lik)  # both, ordered by the likelihood-PFI whichever is called
    assert len(d2.bars_) == 2 and len(d2.ax_.patches) == 6
    assert _legend_texts(d2.ax_) == ["likelihood-PFI", "entropy-PFI"]
    np.testing.assert_allclose([p.get_width() for p in d2.bars_[1]], ent.importances_mean[order])

    r = uncertainty_pd(forest, X, 0, grid_resolution=6)
    cls = (y > 0).astype(int)
    d3 = UncertaintyPDDisplay(r, color_by=cls).plot(max_ice=20)
    ax = d3.ax_
    assert len(d3.lines_) == 20
    # 20 ICE curves + 20 original points + PD + one rug per class
    assert len(ax.lines) == 20 + 20 + 1 + 2
    np.testing.assert_allclose(d3.pd_line_.get_ydata(), r.average[0])
    assert _legend_texts(ax) == ["entropy PD", "class 0", "class 1"]
    assert ax.get_ylabel() == "predictive entropy" and ax.get_xlabel() == "x0"


# ---------------------------------------------------------------- inference


@covers("LearnerImportanceResult.plot", "LearnerImportanceDisplay.plot")
def test_learner_importance_plot(data):
    X, y = data
    r = learner_importance(LinearRegression(), X, y, n_refits=4, n_repeats=2, random_state=0)
    d = r.plot()
    assert isinstance(d, LearnerImportanceDisplay)
    ax = d.ax_
    order = np.argsort(r.importances_mean)
    assert len(ax.patches) == 3
    np.testing.assert_allclose([p.get_width() for p in d.bars_], r.importances_mean[order])
    # error bars: segment ends are the CI bounds
    segs = d.bars_.errorbar.lines[2][0].get_segments()
    np.testing.assert_allclose([s[0][0] for s in segs], r.ci_lower[order])
    np.testing.assert_allclose([s[1][0] for s in segs], r.ci_upper[order])
    assert [t.get_text() for t in ax.get_yticklabels()] == [r.names[i] for i in order]
    assert ax.get_xlabel() == "learner-PFI with 95% corrected t intervals (bootstrap)"
    m = model_importance_ci(LinearRegression().fit(X, y), X, y, n_repeats=2, random_state=0)
    assert m.plot().ax_.get_xlabel() == "learner-PFI with 95% t intervals (rows)"


@covers("LearnerPDResult.plot", "LearnerPDDisplay.plot")
def test_learner_pd_plot(data):
    X, y = data
    r = learner_pd(LinearRegression(), X, y, 0, grid_resolution=6, n_refits=4, random_state=0)
    d = r.plot()
    assert isinstance(d, LearnerPDDisplay)
    ax = d.ax_
    assert len(d.lines_) == 4 and len(ax.lines) == 5  # one curve per refit + mean
    np.testing.assert_allclose(d.line_.get_xdata(), r.grid)
    np.testing.assert_allclose(d.line_.get_ydata(), r.mean)
    np.testing.assert_allclose(d.lines_[2].get_ydata(), r.curves[2])
    assert len(ax.collections) == 1 and d.band_ is ax.collections[0]
    verts = d.band_.get_paths()[0].vertices
    assert verts[:, 1].min() == pytest.approx(r.ci_lower.min())
    assert verts[:, 1].max() == pytest.approx(r.ci_upper.max())
    assert _legend_texts(ax) == ["95% corrected band", "learner-PD"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x0", "partial dependence")
    assert len(r.plot(curves=False).lines_) == 0


@covers("PIMPResult.plot", "PIMPDisplay.plot")
def test_pimp_plot(data):
    X, y = data
    r = pimp(LinearRegression(), X, y, n_permutations=6, n_repeats=2, random_state=0)
    d = r.plot(bins=5)
    assert isinstance(d, PIMPDisplay)
    assert len(d.axes_) == 3 and len(d.figure_.axes) == 3
    for ax, name, obs, p, nul in zip(d.axes_, r.names, r.observed, r.p_values_adjusted, r.null):
        assert len(ax.patches) == 5  # histogram bins
        assert sum(b.get_height() for b in ax.patches) == len(nul)
        assert len(ax.lines) == 1 and ax.lines[0].get_xdata()[0] == pytest.approx(obs)
        assert ax.get_title() == f"{name}\np = {p:.3g}"
        assert ax.get_xlabel() == "PFI"
    fig, axes = plt.subplots(3, 1)
    assert list(r.plot(axes=axes).axes_) == list(axes)
    with pytest.raises(ValueError, match="'axes'"):
        r.plot(axes=axes[:2])


# ---------------------------------------------------------------- audit


@pytest.fixture(scope="module")
def audit_result():
    rng = np.random.default_rng(1)
    n = 120
    df = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    df["t"] = df["a"] + 0.5 * df["c"] + 0.5 * rng.normal(size=n)
    return rashomon.audit(
        df,
        "t",
        {"g1": ["a", "b"], "g2": ["c", "d"]},
        model_class="linear",
        train_size=60,
        cv=3,
        bootstrap=5,
        random_state=0,
        n_jobs=1,
    )


@covers("AuditResult.plot", "AuditResult.plot_summary")
def test_audit_plots(audit_result):
    res = audit_result
    d = res.plot("g1")
    assert isinstance(d, MCREnvelopeDisplay)
    g1 = res.groups["g1"]
    np.testing.assert_allclose(d.interval_.get_xdata(), [g1.mcr.lower, g1.mcr.upper])
    assert d.ax_.get_xlabel().startswith("model reliance (ratio) on ")

    ax = res.plot_summary()
    # per group: MCR segment + MR point + the CI segments of MCR- and MCR+; plus the reference line at 1
    assert len(ax.lines) == 2 * 4 + 1
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [g1.mcr_lower, g1.mcr_upper])
    assert ax.lines[1].get_xdata()[0] == pytest.approx(g1.mr_ref)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["g1", "g2"]
    assert _legend_texts(ax) == ["MCR", "MR of reference", "95% bootstrap CI of MCR-/MCR+"]
    np.testing.assert_allclose(ax.lines[2].get_xdata(), g1.ci["mcr_lower"])
    assert len(ax.collections) == 0  # CIs are line segments, not error bars
    np.testing.assert_allclose(ax.lines[3].get_xdata(), g1.ci["mcr_upper"])
    assert ax.get_xlabel() == "model reliance (ratio)"


def test_audit_plot_names_the_group_columns(audit_result):
    assert audit_result.plot("g1").ax_.get_xlabel() == "model reliance (ratio) on a, b"


def test_audit_plot_summary_with_ci_excluding_the_estimate(audit_result):
    import dataclasses

    g1 = audit_result.groups["g1"]
    lo = g1.mcr_lower
    g1 = dataclasses.replace(g1, ci={**g1.ci, "mcr_lower": (lo + 0.1, lo + 0.2)})
    res = dataclasses.replace(audit_result, groups={**audit_result.groups, "g1": g1})
    ax = res.plot_summary()
    # a percentile CI that excludes the estimate is drawn as it is (no crash, no clipping)
    segs = [ln.get_xdata() for ln in ax.get_lines() if len(ln.get_xdata()) == 2 and ln.get_color() == "grey"]
    assert any(np.allclose(x, [lo + 0.1, lo + 0.2]) for x in segs)


# ---------------------------------------------------------------- completeness


# ---------------------------------------------------------------- Rashomon set: ranges, multiplicity, members


@covers("FunctionalRange.plot", "CoefRange.plot", "RangeDisplay.plot")
def test_coef_range_plot(rset):
    from rashomon.plotting import RangeDisplay

    cr = rset.coef_range()
    disp = cr.plot()
    assert isinstance(disp, RangeDisplay)
    segs = disp.intervals_.get_segments()
    assert len(segs) == 3  # the 3 coefficients; the intercept (on the scale of y) is written apart
    for seg, lo, hi in zip(segs, cr.lower[1:], cr.upper[1:]):
        np.testing.assert_allclose([seg[0][0], seg[1][0]], [lo, hi])
    np.testing.assert_allclose(disp.reference_.get_xdata(), cr.reference[1:])
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == ["x0", "x1", "x2"]
    assert f"intercept (not drawn): [{cr.lower[0]:.4g}, {cr.upper[0]:.4g}]" in disp.ax_.get_xlabel()
    lo, hi = disp.ax_.get_xlim()
    assert lo <= cr.lower[1:].min() and cr.upper[1:].max() <= hi
    assert {"reference", "sign stable", "sign can flip"} == set(_legend_texts(disp.ax_))
    # sign-stable coefficients drawn in the highlight colour
    cols = disp.intervals_.get_colors()
    assert len({tuple(c) for c, st in zip(cols, cr.sign_stable[1:]) if st}) <= 1
    fr = rset.functional_range(np.eye(4)[1:3], names=["a", "b"])
    d2 = fr.plot()
    assert len(d2.intervals_.get_segments()) == 2 and d2.zero_line_ is None or d2.zero_line_ is not None


@covers("PredictionRange.plot", "PredictionRangeDisplay.plot", "Multiplicity.plot")
def test_prediction_range_plots(rset, data):
    from rashomon.plotting import PredictionRangeDisplay

    X, _ = data
    m = rset.multiplicity(X, threshold=0.0)
    disp = m.plot()
    assert isinstance(disp, PredictionRangeDisplay)
    segs = disp.segments_.get_segments()
    assert len(segs) == len(X)
    order = np.argsort(m.ranges.reference, kind="stable")
    np.testing.assert_allclose([s[0][1] for s in segs], m.ranges.lower[order])
    np.testing.assert_allclose([s[1][1] for s in segs], m.ranges.upper[order])
    np.testing.assert_allclose(disp.reference_.get_ydata(), m.ranges.reference[order])
    assert disp.threshold_line_ is not None and disp.threshold_line_.get_ydata()[0] == 0.0
    assert any(f"{int(m.flips.sum())} rows flip" in t for t in _legend_texts(disp.ax_))
    w = m.ranges.plot(kind="widths")
    assert sum(p.get_height() for p in w.bars_) == len(X)
    with pytest.raises(rashomon.RashomonInputError, match="'kind' parameter of PredictionRange.plot"):
        m.ranges.plot(kind="pie")


@covers("RashomonSample.plot", "SampleDisplay.plot")
def test_sample_plot(rset):
    from rashomon.plotting import SampleDisplay

    smp = rset.sample(300, random_state=0)
    disp = smp.plot(bins=10)
    assert isinstance(disp, SampleDisplay)
    assert sum(p.get_height() for p in disp.bars_) == 300
    assert disp.epsilon_line_.get_xdata()[0] == pytest.approx(rset.epsilon_abs_)
    assert "300 members" in disp.ax_.get_title()


@covers("ImportanceCloud.plot", "ImportanceCloudDisplay.plot")
def test_importance_cloud_plot(rset):
    from rashomon.plotting import ImportanceCloudDisplay

    cl = rset.importance_cloud(n_models=100, random_state=0)
    disp = cl.plot()
    assert isinstance(disp, ImportanceCloudDisplay)
    assert disp.points_.get_offsets().shape == (300, 2)
    np.testing.assert_allclose(np.asarray(disp.points_.get_offsets())[:, 0], cl.samples[:100].ravel())
    segs = disp.intervals_.get_segments()
    np.testing.assert_allclose([s[0][0] for s in segs], cl.lower)
    np.testing.assert_allclose([s[1][0] for s in segs], cl.upper)
    np.testing.assert_allclose(disp.reference_.get_xdata(), cl.reference)
    assert {"sampled members", "exact MCR", "reference"} <= set(_legend_texts(disp.ax_))


@covers("EpsilonChoice.plot")
def test_epsilon_choice_plot(data):
    from rashomon import select_epsilon

    X, y = data
    ch = select_epsilon(LinearModelClass(), X, y, rule="cv_1se", cv=4)
    ax = ch.plot()
    assert len(ax.lines[0].get_xdata()) == 4
    np.testing.assert_allclose(ax.lines[0].get_ydata(), ch.fold_losses)
    assert any("SE" in t for t in _legend_texts(ax))
    ax2 = select_epsilon(LinearModelClass(), X, y, rule="profile").plot()
    assert _n_bars(ax2) == 1 and "profile" in ax2.get_title()


def _public_plot_methods():
    found = set()
    for mod in (rashomon, rashomon.plotting):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not inspect.isclass(obj):
                continue
            for attr in dir(obj):
                if (attr == "plot" or attr.startswith("plot_")) and callable(getattr(obj, attr)):
                    found.add(f"{name}.{attr}")
    return found


def test_every_plot_method_is_covered():
    found = _public_plot_methods()
    assert found, "no plot methods found: the introspection is broken"
    missing = found - COVERED
    assert not missing, f"plot methods without a test in tests/test_plots.py: {sorted(missing)}"
    stale = COVERED - found
    assert not stale, f"tests/test_plots.py claims to cover methods that no longer exist: {sorted(stale)}"


@covers("DisparityRange.plot", "DisparityRangeDisplay.plot")
def test_disparity_range_plot(rset, data):
    from rashomon.plotting import DisparityRangeDisplay

    X, _ = data
    groups = (np.asarray(X)[:, 0] > np.median(np.asarray(X)[:, 0])).astype(int)
    res = rset.disparity_range(groups)
    disp = res.plot(benchmark=0.1)
    assert isinstance(disp, DisparityRangeDisplay)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == res.names
    np.testing.assert_allclose(disp.ax_.lines[0].get_xdata(), res.reference)  # the reference dots
    assert {"exact range", "attained by members", "reference model", "benchmark"} <= set(_legend_texts(disp.ax_))


@covers("LeastDisparate.plot", "DisparityFrontier.plot", "DisparityFrontierDisplay.plot")
def test_disparity_frontier_plot(rset, data):
    from rashomon.plotting import DisparityFrontierDisplay

    X, _ = data
    groups = (np.asarray(X)[:, 0] > np.median(np.asarray(X)[:, 0])).astype(int)
    ld = rset.least_disparate(groups, epsilons=[0.02, 0.1, 0.2])
    disp = ld.plot()
    assert isinstance(disp, DisparityFrontierDisplay)
    np.testing.assert_allclose(disp.ax_.lines[0].get_xdata(), ld.frontier.epsilons)
    np.testing.assert_allclose(disp.ax_.lines[0].get_ydata(), ld.frontier.attained)
    assert "certified lower bound" in _legend_texts(disp.ax_)
    assert isinstance(ld.frontier.plot(), DisparityFrontierDisplay)


@covers("RelianceOrder.plot", "RelianceOrderDisplay.plot", "RelianceDifference.plot")
def test_reliance_order_plot(rset):
    from rashomon.plotting import RelianceOrderDisplay

    names = list(rset.feature_names_in_[:3]) if hasattr(rset, "feature_names_in_") else [0, 1, 2]
    order = rset.reliance_order(names, critical=False)
    disp = order.plot()
    assert isinstance(disp, RelianceOrderDisplay)
    boxes = [t.get_text() for t in disp.ax_.texts if t.get_bbox_patch() is not None]
    assert sorted(boxes) == sorted(str(n) for n in names)
    assert len([c for c in disp.ax_.texts if getattr(c, "arrow_patch", None) is not None]) == len(order.hasse_edges())
    d = next(iter(order.differences.values()))
    ax = d.plot()
    assert ax.lines[0].get_xdata()[0] == pytest.approx(d.reference)


# ---------------------------------------------------------------- attained inside certified


def _loose_mcr(res, gap=0.05):
    import dataclasses

    return dataclasses.replace(res, upper_tight=False, upper_gap=gap)


def test_mcr_plot_draws_attained_within_certified(rset):
    res = _loose_mcr(rset.model_class_reliance(0))
    disp = res.plot()
    np.testing.assert_allclose(disp.interval_.get_xdata(), [res.lower, res.upper])
    np.testing.assert_allclose(disp.attained_.get_xdata(), [res.lower_attained, res.upper_attained])
    np.testing.assert_allclose(disp.attained_.get_ydata(), [res.epsilon_abs] * 2)
    texts = _legend_texts(disp.ax_)
    assert f"certified MCR [{res.lower:.3g}, {res.upper:.3g}]" in texts
    assert (
        f"attained [{res.lower_attained:.3g}, {res.upper_attained:.3g}]\nwithin certified "
        f"[{res.lower:.3g}, {res.upper:.3g}]" in texts
    )
    assert rset.model_class_reliance(0).plot().attained_ is None  # tight: one interval, as before


def test_envelope_plot_draws_attained_of_the_search_at_that_epsilon(rset):
    import dataclasses

    env = rset.envelope(0, [0.02, 0.1])
    i = int(np.argmax(env.epsilons))
    loose = dataclasses.replace(env, results=[_loose_mcr(r) if k == i else r for k, r in enumerate(env.results)])
    d = loose.plot()
    r = loose.results[i]
    np.testing.assert_allclose(d.attained_.get_xdata(), [r.lower_attained, r.upper_attained])
    assert env.plot().attained_ is None


def test_range_plots_draw_attained_within_certified(rset, data):
    import dataclasses

    X, _ = data
    fr = rset.functional_range(np.eye(4)[1:3], names=["a", "b"])
    loose = dataclasses.replace(fr, upper_attained=fr.upper - 0.2)
    d = loose.plot()
    segs = d.attained_.get_segments()
    np.testing.assert_allclose([s[1][0] for s in segs], fr.upper - 0.2)
    np.testing.assert_allclose([s[0][0] for s in segs], fr.lower_attained)
    np.testing.assert_allclose([s[1][0] for s in d.intervals_.get_segments()], fr.upper)
    assert {"certified bounds", "attained by members\n(within certified)"} <= set(_legend_texts(d.ax_))
    assert fr.plot().attained_ is None
    pr = rset.prediction_range(X[:20])
    lo_att = pr.lower_attained.copy()
    lo_att[3] += 0.1
    dp = dataclasses.replace(pr, lower_attained=lo_att).plot()
    order = np.argsort(pr.reference, kind="stable")
    np.testing.assert_allclose([s[0][1] for s in dp.attained_.get_segments()], lo_att[order])
    np.testing.assert_allclose([s[0][1] for s in dp.segments_.get_segments()], pr.lower[order])
    assert "certified bounds (1 rows not tight)" in _legend_texts(dp.ax_)
    assert pr.plot().attained_ is None


def test_cloud_and_audit_summary_draw_attained(rset, audit_result):
    import dataclasses

    cl = rset.importance_cloud(n_models=50, random_state=0)
    loose = dataclasses.replace(cl, mcr=[_loose_mcr(r) for r in cl.mcr])
    d = loose.plot()
    segs = d.attained_.get_segments()
    np.testing.assert_allclose([s[1][0] for s in segs], [r.upper - 0.05 for r in cl.mcr])
    assert {"MCR (certified bounds)", "MCR attained by members"} <= set(_legend_texts(d.ax_))
    assert "mcr_upper_attained" in loose._repr_html_() and cl.plot().attained_ is None
    g1 = audit_result.groups["g1"]
    res = dataclasses.replace(
        audit_result, groups={**audit_result.groups, "g1": dataclasses.replace(g1, mcr=_loose_mcr(g1.mcr))}
    )
    ax = res.plot_summary()
    att = [ln.get_xdata() for ln in ax.get_lines() if ln.get_color() == "#27408b"]
    np.testing.assert_allclose(att[0], [g1.mcr.lower, g1.mcr.upper - 0.05])
    assert {"MCR (certified bounds)", "attained by members found"} <= set(_legend_texts(ax))
    assert res.plot("g1").attained_ is not None
