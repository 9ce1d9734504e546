"""The bad-input catalogue: every case must end in the library's error class with a message naming
the function and the argument (or give the mathematically right answer, in test_bad_input_answers).

Each row: (public call, expected exception type, message regex). The regexes name the argument,
so an error that only says "invalid" or leaks a third-party message fails.
"""

import functools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import rashomon as rsh
from rashomon import KernelModelClass, LinearModelClass, RashomonInputError, RashomonSet

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3))
Y = X @ [1.0, 0.5, 0.0] + RNG.normal(size=40)
LR = LinearRegression().fit(X, Y)
LMC = LinearModelClass()
RS = RashomonSet(LMC, 0.1).fit(X, Y)

BAD_SEEDS = [-1, 2**40, 1.5, "0", True]
BAD_NJOBS = [0, 1.5, "2", True]
BAD_TOLS = [-1.0, math.nan, math.inf, "1e-6"]
BAD_POSINT = [0, -3, 2.5, "5", None]


def _cases():
    cases = []

    def add(cid, fn, param, exc=RashomonInputError):
        cases.append(pytest.param(fn, exc, rf"'{param}'", id=cid))

    # ---- data, for every family of entry points
    data_fns = {
        "model_reliance": lambda X_, y_: rsh.model_reliance(LR, X_, y_, 0),
        "feature_reliance": lambda X_, y_: rsh.feature_reliance(LR, X_, y_),
        "conditional_model_reliance": lambda X_, y_: rsh.conditional_model_reliance(LR, X_, y_, 0),
        "model_class_reliance": lambda X_, y_: rsh.model_class_reliance(LMC, X_, y_, 0),
        "mcr_envelope": lambda X_, y_: rsh.mcr_envelope(LMC, X_, y_, 0, epsilons=[0.1]),
        "rashomon_pd_band": lambda X_, y_: rsh.rashomon_pd_band(LMC, X_, y_, 0),
        "RashomonSet.fit": lambda X_, y_: RashomonSet(LMC, 0.1).fit(X_, y_),
        "kernel RashomonSet.fit": lambda X_, y_: RashomonSet(KernelModelClass(), 0.1).fit(X_, y_),
        "learner_importance": lambda X_, y_: rsh.learner_importance(LinearRegression(), X_, y_, n_refits=2),
        "pimp": lambda X_, y_: rsh.pimp(LinearRegression(), X_, y_, n_permutations=2),
        "select_epsilon": lambda X_, y_: rsh.select_epsilon(LMC, X_, y_, cv=3),
    }
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    Xinf = X.copy()
    Xinf[0, 0] = np.inf
    bad_data = {
        "X with NaN": (Xnan, Y, "X"),
        "X with inf": (Xinf, Y, "X"),
        "X 1-D": (X[:, 0], Y, "X"),
        "X 3-D": (X[None], Y, "X"),
        "X of strings": (np.full((40, 3), "a"), Y, "X"),
        "X 1e200": (X * 1e200, Y, "X"),
        "y too short": (X, Y[:-1], "y"),
        "y with NaN": (X, np.r_[np.nan, Y[1:]], "y"),
        "y with inf": (X, np.r_[np.inf, Y[1:]], "y"),
        "y complex": (X, Y + 1j, "y"),
        "y 2-D": (X, np.c_[Y, Y], "y"),
        "y 1e150": (X, Y * 1e150, "y"),
        "y 1e-150": (X, Y * 1e-150, "y"),
    }
    for fname, fn in data_fns.items():
        for dname, (Xb, yb, param) in bad_data.items():
            if fname in (
                "model_reliance",
                "feature_reliance",
                "conditional_model_reliance",
                "pimp",
                "learner_importance",
            ) and dname in ("y 1e-150",):
                continue  # a loss of 1e-300 is small, not wrong, for a fitted model's reliance
            add(f"{fname}: {dname}", (lambda f=fn, a=Xb, b=yb: f(a, b)), param)

    # ---- random_state and n_jobs, wherever accepted
    seeded = {
        "model_reliance": lambda v: rsh.model_reliance(LR, X, Y, 0, method="permutation", random_state=v),
        "learner_importance": lambda v: rsh.learner_importance(LinearRegression(), X, Y, n_refits=2, random_state=v),
        "pimp": lambda v: rsh.pimp(LinearRegression(), X, Y, n_permutations=2, random_state=v),
        "entropy_importance": lambda v: rsh.entropy_importance(LR, X, random_state=v),
        "RashomonSet.sample": lambda v: RS.sample(5, random_state=v),
        "RashomonSet.importance_cloud": lambda v: RS.importance_cloud([0], n_models=5, random_state=v),
        "select_epsilon": lambda v: rsh.select_epsilon(LMC, X, Y, cv=3, random_state=v),
        "model_importance_ci": lambda v: rsh.model_importance_ci(LR, X, Y, random_state=v),
    }
    for fname, fn in seeded.items():
        for v in BAD_SEEDS:
            add(f"{fname}: random_state={v!r}", (lambda f=fn, v=v: f(v)), "random_state")
    jobbed = {
        "feature_reliance": lambda v: rsh.feature_reliance(LR, X, Y, n_jobs=v),
        "learner_importance": lambda v: rsh.learner_importance(LinearRegression(), X, Y, n_refits=2, n_jobs=v),
        "pimp": lambda v: rsh.pimp(LinearRegression(), X, Y, n_permutations=2, n_jobs=v),
        "conditional_model_reliance": lambda v: rsh.conditional_model_reliance(LR, X, Y, 0, n_jobs=v),
        "RashomonSet.importance_cloud": lambda v: RS.importance_cloud([0], n_models=5, n_jobs=v),
    }
    for fname, fn in jobbed.items():
        for v in BAD_NJOBS:
            add(f"{fname}: n_jobs={v!r}", (lambda f=fn, v=v: f(v)), "n_jobs")

    # ---- tolerances and counts
    for v in BAD_TOLS:
        add(f"model_class_reliance: tol={v!r}", (lambda v=v: rsh.model_class_reliance(LMC, X, Y, 0, tol=v)), "tol")
        add(f"RashomonSet.prediction_range: tol={v!r}", (lambda v=v: RS.prediction_range(X[:2], tol=v)), "tol")
        add(f"RashomonSet.model_class_reliance: tol={v!r}", (lambda v=v: RS.model_class_reliance(0, tol=v)), "tol")
        add(f"rashomon_pd_band: epsilon={v!r}", (lambda v=v: rsh.rashomon_pd_band(LMC, X, Y, 0, epsilon=v)), "epsilon")
        for kw in ("max_time", "gap_tol"):
            add(
                f"model_class_reliance: {kw}={v!r}",
                (lambda v=v, kw=kw: rsh.model_class_reliance(LMC, X, Y, 0, **{kw: v})),
                kw,
            )
            add(
                f"RashomonSet.model_class_reliance: {kw}={v!r}",
                (lambda v=v, kw=kw: RS.model_class_reliance(0, **{kw: v})),
                kw,
            )
    for v in BAD_POSINT:
        add(
            f"model_class_reliance: max_iter={v!r}",
            (lambda v=v: rsh.model_class_reliance(LMC, X, Y, 0, max_iter=v)),
            "max_iter",
        )
        add(f"pimp: n_repeats={v!r}", (lambda v=v: rsh.pimp(LinearRegression(), X, Y, n_repeats=v)), "n_repeats")
        add(f"RashomonSet.sample: n_models={v!r}", (lambda v=v: RS.sample(v)), "n_models")
        add(
            f"conditional_model_reliance: n_bins={v!r}",
            (lambda v=v: rsh.conditional_model_reliance(LR, X, Y, 0, n_bins=v)),
            "n_bins",
        )
    # ---- choices
    choice_calls = {
        "model_class_reliance kind": (lambda: rsh.model_class_reliance(LMC, X, Y, 0, kind="ratios"), "kind"),
        "model_class_reliance epsilon_kind": (
            lambda: rsh.model_class_reliance(LMC, X, Y, 0, epsilon_kind="rel"),
            "epsilon_kind",
        ),
        "rashomon_pd_band epsilon_kind": (
            lambda: rsh.rashomon_pd_band(LMC, X, Y, 0, epsilon_kind="foo"),
            "epsilon_kind",
        ),
        "RashomonSet loss": (lambda: RashomonSet(LMC, 0.1, loss="l2").fit(X, Y), "loss"),
        "RashomonSet.sample method": (lambda: RS.sample(5, method="mcmc"), "method"),
        "RashomonSet.envelope epsilon_kind": (lambda: RS.envelope(0, [0.1], epsilon_kind="x"), "epsilon_kind"),
        "entropy_importance summary": (lambda: rsh.entropy_importance(LR, X, summary="foo"), "summary"),
        "likelihood_importance summary": (lambda: rsh.likelihood_importance(LR, X, Y, summary="foo"), "summary"),
        "partial_dependence kind": (lambda: rsh.partial_dependence(LR, X, 0, kind="mean"), "kind"),
        "pimp null": (lambda: rsh.pimp(LinearRegression(), X, Y, null="normal"), "null"),
        "learner_importance resampling": (
            lambda: rsh.learner_importance(LinearRegression(), X, Y, resampling="cv"),
            "resampling",
        ),
        "select_epsilon rule": (lambda: rsh.select_epsilon(LMC, X, Y, rule="aic"), "rule"),
        "model_reliance method": (lambda: rsh.model_reliance(LR, X, Y, 0, method="shap"), "method"),
        "conditional_model_reliance method": (
            lambda: rsh.conditional_model_reliance(LR, X, Y, 0, method="knn"),
            "method",
        ),
        "learner_importance confidence_level 1": (
            lambda: rsh.learner_importance(LinearRegression(), X, Y, confidence_level=1.0),
            "confidence_level",
        ),
        "learner_importance train_fraction 0": (
            lambda: rsh.learner_importance(LinearRegression(), X, Y, train_fraction=0.0),
            "train_fraction",
        ),
        "RashomonSet.multiplicity threshold nan": (lambda: RS.multiplicity(threshold=math.nan), "threshold"),
        "RashomonSet.multiplicity threshold omitted, regression": (lambda: RS.multiplicity(), "threshold"),
        "RashomonSet explained epsilon negative": (
            lambda: RashomonSet(LMC, -0.1, epsilon_kind="explained").fit(X, Y),
            "epsilon",
        ),
        "model_class_reliance epsilon_kind unknown": (
            lambda: rsh.model_class_reliance(LMC, X, Y, 0, epsilon_kind="share"),
            "epsilon_kind",
        ),
        "RashomonSet.functional_range c shape": (lambda: RS.functional_range(np.ones(9)), "c"),
        "RashomonSet.prediction_range X columns": (lambda: RS.prediction_range(np.ones((3, 5))), "X"),
        "RashomonSet.pd_band grid empty": (lambda: RS.pd_band(0, grid=[]), "grid"),
        "RashomonSet.pd_band group": (lambda: RS.pd_band([0, 1]), "feature"),
        "RashomonSet.reliance_order progress": (lambda: RS.reliance_order([0, 1], progress="yes"), "progress"),
        "RashomonSet.reliance_order epsilon_max below the set's": (
            lambda: RS.reliance_order([0, 1], epsilon_max=1e-9),
            "epsilon_max",
        ),
        "features unknown name": (
            lambda: rsh.model_reliance(LR, pd.DataFrame(X, columns=list("abc")), Y, "z"),
            "features",
        ),
        "features out of range": (lambda: rsh.model_class_reliance(LMC, X, Y, 7), "features"),
        "features repeated": (lambda: rsh.model_class_reliance(LMC, X, Y, [0, 0]), "features"),
        "features empty": (lambda: rsh.model_class_reliance(LMC, X, Y, []), "features"),
        "model_class not a class": (lambda: RashomonSet("linear", 0.1).fit(X, Y), "model_class"),
        "norm_bound negative": (lambda: RashomonSet(LinearModelClass(norm_bound=-1.0), 0.1).fit(X, Y), "norm_bound"),
        "norm_bound nan": (lambda: RashomonSet(LinearModelClass(norm_bound=np.nan), 0.1).fit(X, Y), "norm_bound"),
        "norm_bound inf, dependent columns": (
            lambda: RashomonSet(LinearModelClass(norm_bound=np.inf), 0.1).fit(np.c_[X, X[:, :1]], Y),
            "norm_bound",
        ),
        "norm_bound inf, separable classes": (
            lambda: RashomonSet(rsh.LogisticModelClass(norm_bound=np.inf), 0.1).fit(X, (X[:, 0] > 0).astype(int)),
            "norm_bound",
        ),
        "norm_bound inf, absolute loss": (
            lambda: RashomonSet(LinearModelClass(norm_bound=np.inf), 0.1, loss="absolute_error").fit(X, Y),
            "norm_bound",
        ),
        "epsilon negative": (lambda: RashomonSet(LMC, -0.1).fit(X, Y), "epsilon"),
        "sample_weight negative": (
            lambda: RashomonSet(LMC, 0.1).fit(X, Y, sample_weight=-np.ones(40)),
            "sample_weight",
        ),
        "alphas negative": (lambda: RashomonSet(LinearModelClass(alphas=[-1.0]), 0.1).fit(X, Y), "alphas"),
        "alphas empty": (lambda: RashomonSet(LinearModelClass(alphas=[]), 0.1).fit(X, Y), "alphas"),
        "kernel alphas nan": (lambda: RashomonSet(KernelModelClass(alphas=[np.nan]), 0.1).fit(X, Y), "alphas"),
        "kernel gammas zero": (lambda: RashomonSet(KernelModelClass(gammas=[0.0]), 0.1).fit(X, Y), "gammas"),
        "y constant 1e-8": (lambda: RashomonSet(LMC, 0.1).fit(X, np.full(40, 1e-8)), "y"),
        "sample_weight on one row": (
            lambda: RashomonSet(LMC, 0.1).fit(X, Y, sample_weight=np.r_[5.0, np.zeros(39)]),
            "sample_weight",
        ),
        "sample_weight on one row, reweighted": (lambda: RS.reweighted(np.r_[np.zeros(39), 40.0]), "sample_weight"),
        "audit epsilon nan": (
            lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")).assign(t=Y), "t", {"g": ["a"]}, epsilon=math.nan),
            "epsilon",
        ),
        "audit target in group": (
            lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")).assign(t=Y), "t", {"g": ["t"]}),
            "groups",
        ),
        "audit unknown target": (lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")), "t", {"g": ["a"]}), "target"),
    }
    for cid, (fn, param) in choice_calls.items():
        add(cid, fn, param)
    return cases


CASES = _cases()


def test_the_catalogue_has_at_least_150_cases():
    assert len(CASES) >= 150


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("call, exc, pattern", CASES)
def test_bad_input_gives_a_clear_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    msg = str(info.value)
    assert "Got" in msg or "must" in msg or "needs" in msg, msg


# ---------------------------------------------------------------- the CLI: every bad input before any computing
@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    df = pd.DataFrame(X, columns=list("abc")).assign(t=Y)
    df.to_csv(d / "d.csv", index=False)
    df.assign(t=np.r_[np.inf, Y[1:]]).to_csv(d / "inf.csv", index=False)
    (d / "empty.csv").write_text("")
    (d / "bin.csv").write_bytes(bytes(range(256)) * 4)
    return d


CLI_CASES = [
    (["--epsilon", "nan"], "'--epsilon' option"),
    (["--epsilon", "-1"], "'--epsilon' option"),
    (["--seed", "-1"], "'--seed' option"),
    (["--n-jobs", "0"], "'--n-jobs' option"),
    (["--cv", "1"], "'--cv' option"),
    (["--cv-rule", "folds"], "'--cv-rule' option of rashomon audit must be None, 'stratified' or 'hash'"),
    (
        ["--cv-rule", "hash"],
        "'--cv-rule' option of rashomon audit must be None (not given) with --model-class 'kernel'",
    ),
    (["--bootstrap", "-2"], "'--bootstrap' option"),
    (["--train-size", "2"], "'--train-size' option"),
    (["--train-size", "abc"], "'--train-size' option"),
    (["--group", "h=a,a"], "'--group' option"),
    (["--group", "h=a,t"], "'--group' option"),
    (["--group", "h=zz"], "'--group' option"),
    (["--group", "g=b"], "'--group'"),
    (["--target", "zz"], "'--target' option"),
    (["--data", "inf.csv"], "'--target' option"),
    (["--data", "empty.csv"], "'--data' option"),
    (["--data", "bin.csv"], "'--data' option"),
    (["--data", "missing.csv"], "'--data' option"),
    (["--out", "/proc/nope"], "'--out'"),
    (["--out", "d.csv"], "'--out'"),
    (["--json", "."], "'--json'"),
    (["--json", "d.csv"], "'--json' option of rashomon audit must not overwrite an input"),
    (["--json", "out/report.html"], "'--json' option of rashomon audit must not be the HTML report"),
    (["--json", "out/summary.svg"], "the report's figure 'summary.svg' would replace it"),
    (["--data", "report.html", "--out", "."], "'--out/--report-name' option of rashomon audit must not overwrite"),
    (["--estimator", "d.csv", "--json", "d.csv"], "must not overwrite an input"),
    (["--estimator", "nope.joblib"], "'--estimator' option"),
]


@pytest.mark.parametrize("extra, pattern", CLI_CASES, ids=[" ".join(c[0]) for c in CLI_CASES])
def test_cli_bad_input_exits_2_naming_the_option(cli_files, extra, pattern, capsys, monkeypatch):
    from rashomon.audit.cli import main

    monkeypatch.chdir(cli_files)
    base = {"--data": "d.csv", "--target": "t", "--out": "out"}
    opts = dict(base)
    extra_pairs = list(zip(extra[::2], extra[1::2]))
    argv = ["audit", "--quiet", "--group", "g=a"]
    for k, v in extra_pairs:
        if k == "--group":
            argv += [k, v]
        else:
            opts[k] = v
    for k, v in opts.items():
        argv += [k, v]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rashomon audit: error: ") and "Traceback" not in err
    assert pattern in err, err
    assert not (cli_files / "out" / "report.html").exists()


def test_catalogue_size_with_cli():
    assert len(CASES) + len(CLI_CASES) >= 150


# ---------------------------------------------------------------- the right answer where one exists
@pytest.mark.parametrize("mc", [LinearModelClass(), KernelModelClass(gamma=0.5)], ids=["linear", "kernel"])
@pytest.mark.parametrize("kind", ["ratio", "difference"])
@pytest.mark.parametrize("eps", [0.0, 1e-16, 1e-13])
def test_degenerate_epsilon_is_the_minimiser(mc, kind, eps):
    res = rsh.model_class_reliance(mc, X, Y, 0, epsilon=eps, kind=kind)
    assert res.lower == res.upper == pytest.approx(res.reference_model.mr, rel=1e-12)
    band = rsh.rashomon_pd_band(mc, X, Y, 0, epsilon=eps, grid_resolution=4)
    np.testing.assert_array_equal(band.lower, band.upper)
    assert np.all(band.duality_gap >= 0)


@pytest.mark.parametrize("sx, sy", [(1e-150, 1.0), (1e150 / 10, 1.0), (1.0, 1e-35), (1.0, 1e35), (1e-120, 1e30)])
def test_extreme_but_valid_magnitudes_give_the_scaled_bounds(sx, sy):
    base = rsh.model_class_reliance(LMC, X, Y, 0, epsilon=0.1)
    res = rsh.model_class_reliance(LMC, X * sx, Y * sy, 0, epsilon=0.1)
    assert res.lower == pytest.approx(base.lower, rel=1e-9) and res.upper == pytest.approx(base.upper, rel=1e-9)
    diff = rsh.model_class_reliance(LMC, X * sx, Y * sy, 0, epsilon=0.1, kind="difference")
    d0 = rsh.model_class_reliance(LMC, X, Y, 0, epsilon=0.1, kind="difference")
    assert diff.upper == pytest.approx(d0.upper * sy**2, rel=1e-9)


def test_duplicate_column_answers_consistently():
    Xd = np.c_[X, X[:, 0]]
    res = rsh.model_class_reliance(LMC, Xd, Y, [0, 3], epsilon=0.1)
    assert res.certified and res.lower <= res.reference_model.mr <= res.upper
    one = rsh.model_class_reliance(LMC, Xd, Y, 0, epsilon=0.1)
    assert one.lower <= one.reference_model.mr <= one.upper


def test_interpolating_fit_is_a_clear_error():
    with pytest.raises(RashomonInputError, match="fits the data .*exactly"):
        rsh.model_class_reliance(LMC, X, X @ [1.0, 2.0, 3.0], 0)


# ---------------------------------------------------------------- issue 27: column identity, constructors, statistics
DF = pd.DataFrame(X, columns=list("abc"))
YB = (Y > np.median(Y)).astype(int)


@functools.cache
def _sets():
    """A linear and a logistic set fitted on the frame DF (fitted once, on first use). The logistic class's
    cross-validated norm explains almost nothing of YB: its set holds the null model, which fit warns about."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*null model", category=rsh.RashomonWarning)
        return {
            "linear": RashomonSet(LMC, 0.1).fit(DF, Y),
            "logistic": RashomonSet(rsh.LogisticModelClass(), 0.1).fit(DF, YB),
        }


def _dask_frame(df, npartitions=2):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(df, npartitions=npartitions)


def _dask_set():
    d = _dask_frame(DF.assign(t=Y))
    return RashomonSet(LMC, 0.1).fit(d[["a", "b", "c"]], d["t"])


def _dask_kernel_set():
    d = _dask_frame(DF.assign(t=Y))
    return RashomonSet(KernelModelClass(dictionary=8, gamma=0.5, norm_bound=2.0), 0.1).fit(d[["a", "b", "c"]], d["t"])


def _issue27_cases():
    cases = []

    def add(cid, fn, param):
        cases.append(pytest.param(fn, RashomonInputError, rf"'{param}'", id=cid))

    renamed, missing, extra = DF.rename(columns={"a": "z"}), DF[["a", "b"]], DF.assign(d=1.0)
    repeated = pd.DataFrame(np.c_[X, X[:, 0]], columns=["a", "b", "c", "a"])
    mixed = pd.DataFrame(X, columns=["a", "b", 0])
    for kind in ("linear", "logistic"):
        for fname, call in {
            "prediction_range": lambda rs, Z: rs.prediction_range(Z),
            "multiplicity": lambda rs, Z: rs.multiplicity(Z),
            "reference_.predict": lambda rs, Z: rs.reference_.predict(Z),
            "sample().predict": lambda rs, Z: rs.sample(3, random_state=0).predict(Z),
        }.items():
            for zname, Z in (
                ("renamed", renamed),
                ("missing", missing),
                ("extra", extra),
                ("repeated", repeated),
                ("mixed name types", mixed),
            ):
                add(f"{kind} {fname}: {zname} column", (lambda k=kind, c=call, Z=Z: c(_sets()[k], Z.iloc[:5])), "X")
    # model-class constructor arguments (checked when the class is used, naming the class)
    LogC, HinC, KerC = rsh.LogisticModelClass, rsh.HingeModelClass, KernelModelClass
    ctor = {
        "LogisticModelClass fit_intercept='no'": (LogC(fit_intercept="no"), "fit_intercept"),
        "LogisticModelClass standardize='no'": (LogC(standardize="no"), "standardize"),
        "HingeModelClass standardize='yes'": (HinC(standardize="yes"), "standardize"),
        "HingeModelClass smoothing=1": (HinC(smoothing=1.0), "smoothing"),
        "LogisticModelClass penalty_matrix singular": (LogC(penalty_matrix=np.zeros((3, 3))), "penalty_matrix"),
        "LinearModelClass fit_intercept=1": (LinearModelClass(fit_intercept=1), "fit_intercept"),
        "LinearModelClass standardize=None": (LinearModelClass(standardize=None), "standardize"),
        "LinearModelClass norm_bound='1'": (LinearModelClass(norm_bound="1"), "norm_bound"),
        "LinearModelClass penalty_matrix=0": (LinearModelClass(penalty_matrix=0), "penalty_matrix"),
        "LinearModelClass penalty_matrix zero": (LinearModelClass(penalty_matrix=np.zeros((3, 3))), "penalty_matrix"),
        "LinearModelClass penalty_matrix ragged": (LinearModelClass(penalty_matrix=[[1, 0], [0]]), "penalty_matrix"),
        "LinearModelClass alphas='x'": (LinearModelClass(alphas="x"), "alphas"),
        "KernelModelClass intercept=True": (KerC(intercept=True), "intercept"),
        "KernelModelClass random_state=-1": (KerC(random_state=-1), "random_state"),
        "KernelModelClass kernel='poly'": (KerC(kernel="poly"), "kernel"),
        "KernelModelClass kernel returns a scalar": (KerC(kernel=lambda A, B: 1.0, gamma=1.0), "kernel"),
        "KernelModelClass e_switch='fast'": (KerC(e_switch="fast"), "e_switch"),
        "KernelModelClass alpha=0": (KerC(alpha=0.0), "alpha"),
        "KernelModelClass gamma=True": (KerC(gamma=True), "gamma"),
        "KernelModelClass dictionary=0": (KerC(dictionary=0), "dictionary"),
        "KernelModelClass gammas=[]": (KerC(gammas=[]), "gammas"),
    }
    for cid, (mc, param) in ctor.items():
        yy = YB if isinstance(mc, (LogC, HinC)) else Y
        add(cid, (lambda mc=mc, yy=yy: RashomonSet(mc, 0.1).fit(X, yy)), param)
    add(
        "fit_reference fit_intercept='no'",
        lambda: LinearModelClass(fit_intercept="no").fit_reference(X, Y),
        "fit_intercept",
    )
    Xc, yc = RNG.normal(size=(4, 2)), np.array([0, 0, 1, 1])
    calls = {
        # the set's own arguments
        "RashomonSet logistic with loss='squared_error'": (
            lambda: RashomonSet(LogC(), 0.1, loss="squared_error").fit(X, YB),
            "loss",
        ),
        "RashomonSet hinge with loss='log_loss'": (
            lambda: RashomonSet(HinC(), 0.1, loss="log_loss").fit(X, YB),
            "loss",
        ),
        "RashomonSet epsilon=1e300": (lambda: RashomonSet(LMC, 1e300).fit(X, Y), "epsilon"),
        "logistic with 2 rows per class": (lambda: RashomonSet(LogC(), 0.1).fit(Xc, yc), "y"),
        "hinge with 2 rows per class": (lambda: RashomonSet(HinC(), 0.1).fit(Xc, yc), "y"),
        # the envelope
        "MCREnvelope.bounds(nan)": (lambda: RS.envelope(0, [0.1]).bounds(math.nan), "epsilon"),
        "MCREnvelope.bounds(inf)": (lambda: RS.envelope(0, [0.1]).bounds(math.inf), "epsilon"),
        "MCREnvelope.bounds('a')": (lambda: RS.envelope(0, [0.1]).bounds("a"), "epsilon"),
        "MCREnvelope.envelope(nan)": (lambda: RS.envelope(0, [0.1]).envelope(math.nan), "m"),
        "RashomonSet.envelope epsilons='a'": (lambda: RS.envelope(0, "a"), "epsilons"),
        "RashomonSet.envelope epsilons=[1e300]": (lambda: RS.envelope(0, [1e300]), "epsilons"),
        "mcr_envelope epsilons=[[0.1, 0.2]]": (
            lambda: rsh.mcr_envelope(LMC, X, Y, 0, epsilons=[[0.1, 0.2]]),
            "epsilons",
        ),
        # functionals
        "functional_range c0 of the wrong length": (lambda: RS.functional_range(np.ones((2, 4)), c0=[1, 2, 3]), "c0"),
        "functional_range c0 a string": (lambda: RS.functional_range(np.ones(4), c0="a"), "c0"),
        "functional_range c ragged": (lambda: RS.functional_range([[1, 2], [1, 2, 3, 4]]), "c"),
        "functional_range c a string": (lambda: RS.functional_range("abcd"), "c"),
        "functional_range c with nan": (lambda: RS.functional_range([1.0, math.nan, 0, 0]), "c"),
        "functional_range names an int": (lambda: RS.functional_range(np.ones(4), names=3), "names"),
        # sampling
        "sample(10**9)": (lambda: RS.sample(10**9), "n_models"),
        "importance_cloud([])": (lambda: RS.importance_cloud([]), "features"),
        "importance_cloud(['z'])": (lambda: RS.importance_cloud(["z"], n_models=5), "features"),
        "importance_cloud({})": (lambda: RS.importance_cloud({}), "features"),
        # fitted models
        "model_reliance of an interpolating fit": (
            lambda: rsh.model_reliance(LinearRegression().fit(X, X @ [1.0, 2, 3]), X, X @ [1.0, 2, 3], 0),
            "estimator",
        ),
        "feature_reliance of an interpolating fit": (
            lambda: rsh.feature_reliance(LinearRegression().fit(X, X @ [1.0, 2, 3]), X, X @ [1.0, 2, 3]),
            "estimator",
        ),
        "model_reliance of an unfitted model": (lambda: rsh.model_reliance(LinearRegression(), X, Y, 0), "estimator"),
        "conditional_model_reliance unfitted": (
            lambda: rsh.conditional_model_reliance(LinearRegression(), X, Y, 0),
            "estimator",
        ),
        # partial dependence and its grids
        "partial_dependence grid=[nan]": (lambda: rsh.partial_dependence(LR, X, 0, grid=[math.nan]), "grid"),
        "partial_dependence grid='abc'": (lambda: rsh.partial_dependence(LR, X, 0, grid="abc"), "grid"),
        "partial_dependence grid ragged pair": (
            lambda: rsh.partial_dependence(LR, X, [0, 1], grid=[[1, 2], [[3]]]),
            "grid",
        ),
        "partial_dependence percentiles='a'": (
            lambda: rsh.partial_dependence(LR, X, 0, percentiles="a"),
            "percentiles",
        ),
        "partial_dependence percentiles=(0.5,)": (
            lambda: rsh.partial_dependence(LR, X, 0, percentiles=(0.5,)),
            "percentiles",
        ),
        "partial_dependence percentiles reversed": (
            lambda: rsh.partial_dependence(LR, X, 0, percentiles=(0.9, 0.1)),
            "percentiles",
        ),
        "partial_dependence categorical_features=7": (
            lambda: rsh.partial_dependence(LR, X, 0, categorical_features=7),
            "categorical_features",
        ),
        "partial_dependence categorical_features=['z']": (
            lambda: rsh.partial_dependence(LR, X, 0, categorical_features=["z"]),
            "categorical_features",
        ),
        "partial_dependence center_value='a'": (
            lambda: rsh.partial_dependence(LR, X, 0, centered=True, center_value="a"),
            "center_value",
        ),
        "partial_dependence center_value=nan": (
            lambda: rsh.partial_dependence(LR, X, 0, centered=True, center_value=math.nan),
            "center_value",
        ),
        "pd_importance categorical_features=7": (
            lambda: rsh.pd_importance(LR, X, categorical_features=7),
            "categorical_features",
        ),
        "pd_importance percentiles=(1, 0)": (lambda: rsh.pd_importance(LR, X, percentiles=(1, 0)), "percentiles"),
        "pd_importance output=5": (lambda: rsh.pd_importance(LR, X, output=5), "output"),
        "pd_importance features=[]": (lambda: rsh.pd_importance(LR, X, features=[]), "features"),
        "learner_pd grid=[]": (lambda: rsh.learner_pd(LinearRegression(), X, Y, 0, grid=[], n_refits=2), "grid"),
        "learner_pd grid=[nan]": (
            lambda: rsh.learner_pd(LinearRegression(), X, Y, 0, grid=[math.nan], n_refits=2),
            "grid",
        ),
        "learner_pd percentiles=(2, 3)": (
            lambda: rsh.learner_pd(LinearRegression(), X, Y, 0, percentiles=(2, 3), n_refits=2),
            "percentiles",
        ),
        "uncertainty_pd grid=[]": (lambda: rsh.uncertainty_pd(LogisticRegression().fit(X, YB), X, 0, grid=[]), "grid"),
        "RashomonSet.pd_band percentiles=(1, 0)": (lambda: RS.pd_band(0, percentiles=(1, 0)), "percentiles"),
        "RashomonSet.pd_band grid='ab'": (lambda: RS.pd_band(0, grid="ab"), "grid"),
        "rashomon_pd_band grid=[[1], [1, 2]]": (lambda: rsh.rashomon_pd_band(LMC, X, Y, 0, grid=[[1], [1, 2]]), "grid"),
        # learner inference
        "learner_importance learner='x'": (lambda: rsh.learner_importance("x", X, Y, n_refits=2), "learner"),
        "corrected_resampled_ttest learner_b='x'": (
            lambda: rsh.corrected_resampled_ttest(LinearRegression(), "x", X, Y, n_refits=2),
            "learner_b",
        ),
        "pimp learner=None": (lambda: rsh.pimp(None, X, Y, n_permutations=2), "learner"),
        "learner_importance train_fraction leaves no training rows": (
            lambda: rsh.learner_importance(
                LinearRegression(), X, Y, n_refits=2, resampling="subsampling", train_fraction=0.01
            ),
            "train_fraction",
        ),
        "make_strata group out of range": (lambda: rsh.make_strata(X, (7,)), "group"),
        "make_strata n_bins=0": (lambda: rsh.make_strata(X, (0,), n_bins=0), "n_bins"),
        # Dask input
        "Dask frame with an object column": (
            lambda: RashomonSet(LMC, 0.1).fit(
                _dask_frame(DF.assign(s="x"))[["a", "s"]], _dask_frame(DF.assign(t=Y))["t"]
            ),
            "X",
        ),
        "Dask frame with NaN": (
            lambda: RashomonSet(LMC, 0.1).fit(
                _dask_frame(DF.mask(DF > 2.0))[["a", "b"]], _dask_frame(DF.assign(t=Y))["t"]
            ),
            "X",
        ),
        "kernel class on Dask with a callable kernel": (
            lambda: RashomonSet(KernelModelClass(kernel=lambda A, B: A @ B.T, dictionary=5), 0.1).fit(
                _dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=Y))["t"]
            ),
            "kernel",
        ),
        "kernel class on Dask with a dictionary larger than the unique rows": (
            lambda: RashomonSet(KernelModelClass(dictionary=10**6), 0.1).fit(
                _dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=Y))["t"]
            ),
            "dictionary",
        ),
        "Dask strata of another length": (
            lambda: _dask_kernel_set().model_class_reliance(
                "a", conditional=True, strata=_dask_frame(DF.assign(t=Y)).to_dask_array(lengths=True)[:-3, 0]
            ),
            "strata",
        ),
        "Dask strata as a DataFrame": (
            lambda: _dask_kernel_set().model_class_reliance("a", conditional=True, strata=_dask_frame(DF)),
            "strata",
        ),
        "audit logistic on Dask with a non-binary target": (
            lambda: rsh.audit(_dask_frame(DF.assign(t=Y)), "t", {"g": ["a"]}, model_class="logistic"),
            "target",
        ),
        "audit logistic on Dask with a text target": (
            lambda: rsh.audit(_dask_frame(DF.assign(t="x")), "t", {"g": ["a"]}, model_class="logistic"),
            "target",
        ),
        "audit hinge on Dask": (
            lambda: rsh.audit(_dask_frame(DF.assign(t=(Y > 0) * 1.0)), "t", {"g": ["a"]}, model_class="hinge"),
            "model_class",
        ),
        "audit cv_rule unknown": (
            lambda: rsh.audit(DF.assign(t=YB), "t", {"g": ["a"]}, model_class="logistic", cv_rule="folds"),
            "cv_rule",
        ),
        "audit cv_rule with a regression class": (
            lambda: rsh.audit(DF.assign(t=Y), "t", {"g": ["a"]}, model_class="linear", cv_rule="hash"),
            "cv_rule",
        ),
        "audit cv_rule hash with hinge": (
            lambda: rsh.audit(DF.assign(t=YB), "t", {"g": ["a"]}, model_class="hinge", cv_rule="hash"),
            "cv_rule",
        ),
        "audit cv_rule stratified on Dask": (
            lambda: rsh.audit(
                _dask_frame(DF.assign(t=YB * 1.0)), "t", {"g": ["a"]}, model_class="logistic", cv_rule="stratified"
            ),
            "cv_rule",
        ),
        "audit logistic on Dask with positive_label": (
            lambda: rsh.audit(
                _dask_frame(DF.assign(t=(Y > 0) * 1.0)), "t", {"g": ["a"]}, model_class="logistic", positive_label=1
            ),
            "positive_label",
        ),
        "Dask strata for a linear set": (
            lambda: _dask_set().model_class_reliance("a", conditional=True, strata=_dask_frame(DF)["a"]),
            "strata",
        ),
        "Dask frame with a string target": (
            lambda: RashomonSet(LMC, 0.1).fit(
                _dask_frame(DF.assign(s="x"))[["a", "b"]], _dask_frame(DF.assign(s="x"))["s"]
            ),
            "y",
        ),
        "model_reliance on a Dask frame with an object column": (
            lambda: rsh.model_reliance(
                LR, _dask_frame(DF.assign(s="x"))[["a", "b", "s"]], _dask_frame(DF.assign(t=Y))["t"], "a"
            ),
            "X",
        ),
        "feature_reliance on a Dask frame with an object column": (
            lambda: rsh.feature_reliance(
                LR, _dask_frame(DF.assign(s="x"))[["a", "b", "s"]], _dask_frame(DF.assign(t=Y))["t"]
            ),
            "X",
        ),
        "model_reliance on a Dask frame with NaN": (
            lambda: rsh.model_reliance(
                LinearRegression().fit(DF, Y), _dask_frame(DF.mask(DF > 2.0)), _dask_frame(DF.assign(t=Y))["t"], "a"
            ),
            "X",
        ),
        "Dask-fitted set prediction_range()": (lambda: _dask_set().prediction_range(), "X"),
        "Dask-fitted set multiplicity()": (lambda: _dask_set().multiplicity(), "X"),
        "Dask-fitted set multiplicity(X) without threshold": (lambda: _dask_set().multiplicity(DF), "threshold"),
        "Dask-fitted set prediction_range(Dask frame)": (lambda: _dask_set().prediction_range(_dask_frame(DF)), "X"),
        "Dask + logistic class without a norm bound": (
            lambda: RashomonSet(LogC(), 0.1).fit(_dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=YB))["t"]),
            "norm_bound",
        ),
        "Dask + hinge class": (
            lambda: RashomonSet(rsh.HingeModelClass(norm_bound=1.0), 0.1).fit(
                _dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=YB))["t"]
            ),
            "model_class",
        ),
        "Dask + logistic class with labels 0, 1, 2": (
            lambda: RashomonSet(LogC(norm_bound=1.0), 0.1).fit(
                _dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=YB * 2 + (Y > 1)))["t"]
            ),
            "y",
        ),
        "Dask + logistic class with weights": (
            lambda: RashomonSet(LogC(norm_bound=1.0), 0.1).fit(
                _dask_frame(DF)[["a", "b"]], _dask_frame(DF.assign(t=YB))["t"], _dask_frame(DF.assign(w=1.0))["w"]
            ),
            "sample_weight",
        ),
        "model_reliance of a classifier on a Dask frame with NaN": (
            lambda: rsh.model_reliance(
                LogC(norm_bound=1.0).fit_reference(DF, YB),
                _dask_frame(DF.mask(DF > 2.0)),
                _dask_frame(DF.assign(t=YB))["t"],
                "a",
                method="divide",
            ),
            "X",
        ),
    }
    for cid, (fn, param) in calls.items():
        add(cid, fn, param)
    return cases


ISSUE27_CASES = _issue27_cases()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("call, exc, pattern", ISSUE27_CASES)
def test_issue27_bad_input_gives_a_clear_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    msg = str(info.value)
    assert "Got" in msg or "must" in msg or "needs" in msg, msg
    assert "Traceback" not in msg


def test_issue27_catalogue_size():
    assert len(ISSUE27_CASES) >= 100


# ---------------------------------------------------------------- issue 27: the right answer where one exists
@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_reordered_columns_are_matched_by_name(kind):
    rs = _sets()[kind]
    Z = DF.iloc[:7]
    shuffled = Z[["b", "c", "a"]]
    a, b = rs.prediction_range(Z), rs.prediction_range(shuffled)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    # by position, the shuffled frame is other rows: the ends differ (what was returned silently before)
    wrong = rs.prediction_range(pd.DataFrame(shuffled.to_numpy(), columns=list("abc")))
    assert not np.allclose(wrong.lower, a.lower)
    t = 0.0 if kind == "linear" else None  # a regression target that is not 0/1 needs a threshold
    m1, m2 = rs.multiplicity(Z, t), rs.multiplicity(shuffled, t)
    np.testing.assert_array_equal(m1.flips, m2.flips)
    assert m1.ambiguity == m2.ambiguity
    np.testing.assert_array_equal(rs.reference_.predict(Z), rs.reference_.predict(shuffled))
    smp = rs.sample(4, random_state=0)
    np.testing.assert_array_equal(smp.predict(Z), smp.predict(shuffled))
    assert list(rs.feature_names_in_) == ["a", "b", "c"]
    assert list(rs.reference_.feature_names_in_) == ["a", "b", "c"]


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_array_after_frame_warns_as_scikit_learn(kind):
    rs = _sets()[kind]
    with pytest.warns(
        UserWarning, match="X does not have valid feature names, but RashomonSet was fitted with feature names"
    ):
        a = rs.prediction_range(X[:5])
    np.testing.assert_array_equal(a.lower, rs.prediction_range(DF.iloc[:5]).lower)
    with pytest.warns(UserWarning, match="X does not have valid feature names, but Class(ifier)?Member was fitted"):
        rs.reference_.predict(X[:5])
    with pytest.warns(UserWarning, match="X has feature names, but RashomonSet was fitted without feature names"):
        RS.prediction_range(DF.iloc[:5])
    # integer column names are not feature names (scikit-learn's rule): no names stored, no warning
    rs_int = RashomonSet(LMC, 0.1).fit(pd.DataFrame(X), Y)
    assert not hasattr(rs_int, "feature_names_in_")


def test_relative_epsilon_above_one_warns_in_python_and_on_the_cli(tmp_path, capsys):
    with pytest.warns(rsh.RashomonWarning, match=r"'epsilon' parameter of RashomonSet.fit is 10, .* pass epsilon=0.1"):
        rs = RashomonSet(LMC, 10).fit(X, Y)
    assert rs.epsilon_abs_ == pytest.approx(11 * rs.e_ref_)  # kept: a valid (if wide) set
    with pytest.warns(rsh.RashomonWarning, match="model_class_reliance|RashomonSet.fit"):
        rsh.model_class_reliance(LMC, X, Y, 0, epsilon=5.0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RashomonSet(LMC, 1.0).fit(X, Y)  # 100 %: no warning
    with pytest.warns(rsh.RashomonWarning, match="null model") as rec:  # e_ref + 10 is above var(Y)
        RashomonSet(LMC, 10, epsilon_kind="additive").fit(X, Y)  # loss units: no percentage warning
    assert not any("read as a relative margin" in str(r.message) for r in rec)
    from rashomon.audit.cli import main

    DF.assign(t=Y).to_csv(tmp_path / "d.csv", index=False)
    with pytest.warns(rsh.RashomonWarning, match=r"'epsilon' parameter of audit is 10"):
        code = main(
            [
                "audit",
                "--quiet",
                "--no-plots",
                "--data",
                str(tmp_path / "d.csv"),
                "--target",
                "t",
                "--group",
                "g=a",
                "--model-class",
                "linear",
                "--epsilon",
                "10",
                "--cv",
                "3",
            ]
        )
    assert code == 0


def test_explicit_loss_equal_to_the_class_loss_is_accepted():
    a = RashomonSet(rsh.LogisticModelClass(), 0.1, loss="log_loss").fit(X, YB)
    b = RashomonSet(rsh.LogisticModelClass(), 0.1, loss="logistic").fit(X, YB)
    assert a.loss_ == b.loss_ == "log_loss" and a.e_ref_ == b.e_ref_


def test_functional_range_is_linear_in_c_at_any_scale():
    c = np.array([0.3, -1.0, 2.0, 0.5])
    base = RS.functional_range(c, c0=1.0)
    for s in (1e-300, 1e-150, 1e150, 1e300):
        r = RS.functional_range(c * s, c0=1.0 * s)
        assert r.lower[0] == pytest.approx(base.lower[0] * s, rel=1e-12)
        assert r.upper[0] == pytest.approx(base.upper[0] * s, rel=1e-12)
        assert np.all(r.gap >= 0)


def test_pimp_with_too_few_permutations_reports_empirical_p_values():
    res = rsh.pimp(LinearRegression(), X, Y, n_permutations=2, null="lognormal", random_state=0)
    assert res.null_kind == "empirical" and "n_permutations >= 30" in res.note
    assert np.all(res.p_values >= 1 / 3)  # the empirical floor 1/(1 + 2) (a lognormal fit gave 2.3e-11)
    ok = rsh.pimp(LinearRegression(), X, Y, n_permutations=30, null="lognormal", random_state=0)
    assert ok.null_kind == "lognormal" and ok.note == ""


def test_exactly_zero_loss_keeps_its_exact_answer():
    from sklearn.neighbors import KNeighborsRegressor

    m = KNeighborsRegressor(n_neighbors=1).fit(X, Y)
    r = rsh.model_reliance(m, X, Y, 0)
    assert r.e_orig == 0.0 and r.ratio == math.inf


@pytest.mark.parametrize("target", [-0.1, math.nan, "a", True])
def test_least_disparate_target_is_a_nonnegative_float(target):
    s = X[:, 0] > 0
    with pytest.raises(RashomonInputError, match="The 'target' parameter of RashomonSet.least_disparate must be"):
        RS.least_disparate(s, frontier=False, target=target)


@pytest.mark.parametrize("time_limit", [-1.0, math.nan, math.inf, "5", True])
def test_disparity_range_time_limit_is_a_nonnegative_float(time_limit):
    s = X[:, 0] > 0
    with pytest.raises(RashomonInputError, match="The 'time_limit' parameter of RashomonSet.disparity_range must be"):
        RS.disparity_range(s, time_limit=time_limit)
