"""The bad-input catalogue: every case must end in the library's error class with a message naming
the function and the argument (or give the mathematically right answer, in test_bad_input_answers).

Each row: (public call, expected exception type, message regex). The regexes name the argument,
so an error that only says "invalid" or leaks a third-party message fails.
"""
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

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
            if fname in ("model_reliance", "feature_reliance", "conditional_model_reliance", "pimp",
                         "learner_importance") and dname in ("y 1e-150",):
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
    for v in BAD_POSINT:
        add(f"model_class_reliance: max_iter={v!r}", (lambda v=v: rsh.model_class_reliance(LMC, X, Y, 0, max_iter=v)),
            "max_iter")
        add(f"pimp: n_repeats={v!r}", (lambda v=v: rsh.pimp(LinearRegression(), X, Y, n_repeats=v)), "n_repeats")
        add(f"RashomonSet.sample: n_models={v!r}", (lambda v=v: RS.sample(v)), "n_models")
        add(f"conditional_model_reliance: n_bins={v!r}",
            (lambda v=v: rsh.conditional_model_reliance(LR, X, Y, 0, n_bins=v)), "n_bins")
    # ---- choices
    choice_calls = {
        "model_class_reliance kind": (lambda: rsh.model_class_reliance(LMC, X, Y, 0, kind="ratios"), "kind"),
        "model_class_reliance epsilon_kind": (lambda: rsh.model_class_reliance(LMC, X, Y, 0, epsilon_kind="rel"),
                                              "epsilon_kind"),
        "rashomon_pd_band epsilon_kind": (lambda: rsh.rashomon_pd_band(LMC, X, Y, 0, epsilon_kind="foo"),
                                          "epsilon_kind"),
        "RashomonSet loss": (lambda: RashomonSet(LMC, 0.1, loss="l2").fit(X, Y), "loss"),
        "RashomonSet.sample method": (lambda: RS.sample(5, method="mcmc"), "method"),
        "RashomonSet.envelope epsilon_kind": (lambda: RS.envelope(0, [0.1], epsilon_kind="x"), "epsilon_kind"),
        "entropy_importance summary": (lambda: rsh.entropy_importance(LR, X, summary="foo"), "summary"),
        "likelihood_importance summary": (lambda: rsh.likelihood_importance(LR, X, Y, summary="foo"), "summary"),
        "partial_dependence kind": (lambda: rsh.partial_dependence(LR, X, 0, kind="mean"), "kind"),
        "pimp null": (lambda: rsh.pimp(LinearRegression(), X, Y, null="normal"), "null"),
        "learner_importance resampling": (lambda: rsh.learner_importance(LinearRegression(), X, Y, resampling="cv"),
                                          "resampling"),
        "select_epsilon rule": (lambda: rsh.select_epsilon(LMC, X, Y, rule="aic"), "rule"),
        "model_reliance method": (lambda: rsh.model_reliance(LR, X, Y, 0, method="shap"), "method"),
        "conditional_model_reliance method": (lambda: rsh.conditional_model_reliance(LR, X, Y, 0, method="knn"),
                                              "method"),
        "learner_importance confidence_level 1": (
            lambda: rsh.learner_importance(LinearRegression(), X, Y, confidence_level=1.0), "confidence_level"),
        "learner_importance train_fraction 0": (
            lambda: rsh.learner_importance(LinearRegression(), X, Y, train_fraction=0.0), "train_fraction"),
        "RashomonSet.multiplicity threshold nan": (lambda: RS.multiplicity(threshold=math.nan), "threshold"),
        "RashomonSet.functional_range c shape": (lambda: RS.functional_range(np.ones(9)), "c"),
        "RashomonSet.prediction_range X columns": (lambda: RS.prediction_range(np.ones((3, 5))), "X"),
        "RashomonSet.pd_band grid empty": (lambda: RS.pd_band(0, grid=[]), "grid"),
        "RashomonSet.pd_band group": (lambda: RS.pd_band([0, 1]), "feature"),
        "features unknown name": (lambda: rsh.model_reliance(LR, pd.DataFrame(X, columns=list("abc")), Y, "z"),
                                  "features"),
        "features out of range": (lambda: rsh.model_class_reliance(LMC, X, Y, 7), "features"),
        "features repeated": (lambda: rsh.model_class_reliance(LMC, X, Y, [0, 0]), "features"),
        "features empty": (lambda: rsh.model_class_reliance(LMC, X, Y, []), "features"),
        "model_class not a class": (lambda: RashomonSet("linear", 0.1).fit(X, Y), "model_class"),
        "norm_bound negative": (lambda: RashomonSet(LinearModelClass(norm_bound=-1.0), 0.1).fit(X, Y), "norm_bound"),
        "epsilon negative": (lambda: RashomonSet(LMC, -0.1).fit(X, Y), "epsilon"),
        "sample_weight negative": (lambda: RashomonSet(LMC, 0.1).fit(X, Y, sample_weight=-np.ones(40)),
                                   "sample_weight"),
        "alphas negative": (lambda: RashomonSet(LinearModelClass(alphas=[-1.0]), 0.1).fit(X, Y), "alphas"),
        "alphas empty": (lambda: RashomonSet(LinearModelClass(alphas=[]), 0.1).fit(X, Y), "alphas"),
        "kernel alphas nan": (lambda: RashomonSet(KernelModelClass(alphas=[np.nan]), 0.1).fit(X, Y), "alphas"),
        "kernel gammas zero": (lambda: RashomonSet(KernelModelClass(gammas=[0.0]), 0.1).fit(X, Y), "gammas"),
        "y constant 1e-8": (lambda: RashomonSet(LMC, 0.1).fit(X, np.full(40, 1e-8)), "y"),
        "sample_weight on one row": (lambda: RashomonSet(LMC, 0.1).fit(X, Y, sample_weight=np.r_[5.0, np.zeros(39)]),
                                     "sample_weight"),
        "sample_weight on one row, reweighted": (lambda: RS.reweighted(np.r_[np.zeros(39), 40.0]), "sample_weight"),
        "audit epsilon nan": (lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")).assign(t=Y), "t",
                                                {"g": ["a"]}, epsilon=math.nan), "epsilon"),
        "audit target in group": (lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")).assign(t=Y), "t",
                                                    {"g": ["t"]}), "groups"),
        "audit unknown target": (lambda: rsh.audit(pd.DataFrame(X, columns=list("abc")), "t", {"g": ["a"]}),
                                 "target"),
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
