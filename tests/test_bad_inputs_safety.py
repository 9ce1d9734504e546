"""The bad-input catalogue, continued: a reference member from another class, the fairness queries' inputs
(frontier ε, benchmarks, ratio denominators, sensitive labels), model files and figures' text. Each case ends in
a clear :class:`~rashomon.RashomonInputError` naming the argument, or gives an answer checked against an
independent computation (test functions below the catalogue)."""

import functools
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

import rashomon as rsh
from rashomon import RashomonInputError, RashomonSet

RNG = np.random.default_rng(3)
N = 80
DF = pd.DataFrame({"a": RNG.normal(size=N), "b": RNG.normal(size=N)})
S = pd.Series(np.where(RNG.random(N) < 0.5, "A", "B"), index=DF.index, name="grp")
YB = ((DF.a + 0.5 * (S == "B") + RNG.normal(size=N)) > 0).astype(int)
YR = DF.a - 0.5 * DF.b + 0.3 * (S == "B") + RNG.normal(size=N)


@functools.cache
def _sets():
    import warnings

    with warnings.catch_warnings():  # the classifier classes' norm bounds leave these sets holding the null model
        warnings.filterwarnings("ignore", message=".*null model", category=rsh.RashomonWarning)
        return {
            "logistic": RashomonSet(rsh.LogisticModelClass(), 0.1).fit(DF, YB),
            "hinge": RashomonSet(rsh.HingeModelClass(), 0.1).fit(DF, YB),
            "linear": RashomonSet(rsh.LinearModelClass(), 0.1).fit(DF, YR),
        }


def _member(kind):
    return _sets()[kind].reference_


def _with(series, pos, value):
    out = series.astype(object).copy()
    out.iloc[pos] = value
    return out


def _cases():
    cases = []

    def add(cid, fn, param):
        cases.append(pytest.param(fn, rf"'{param}'", id=cid))

    # ---- a reference member of another class or loss
    add("logistic member as a hinge reference", lambda: RashomonSet(rsh.HingeModelClass(), 0.1, reference=_member("logistic")).fit(DF, YB), "reference")  # fmt: skip
    add("hinge member as a logistic reference", lambda: RashomonSet(rsh.LogisticModelClass(), 0.1, reference=_member("hinge")).fit(DF, YB), "reference")  # fmt: skip
    add("logistic member as a linear reference", lambda: RashomonSet(rsh.LinearModelClass(), 0.1, reference=_member("logistic")).fit(DF, YR), "reference")  # fmt: skip
    add("linear member as a kernel reference", lambda: RashomonSet(rsh.KernelModelClass(), 0.1, reference=_member("linear")).fit(DF, YR), "reference")  # fmt: skip
    add("linear member as a logistic reference", lambda: RashomonSet(rsh.LogisticModelClass(), 0.1, reference=_member("linear")).fit(DF, YB), "reference")  # fmt: skip
    add("logistic member with loss=hinge", lambda: RashomonSet(rsh.LinearModelClass(), 0.1, loss="hinge", reference=_member("logistic")).fit(DF, YB), "reference")  # fmt: skip
    # ---- frontier ε values
    for name, eps in {"nan": [np.nan], "inf": [np.inf], "text": "abc", "empty": [], "2-D": [[0.1]], "huge": [1e101]}.items():  # fmt: skip
        add(f"least_disparate epsilons {name}", lambda eps=eps: _sets()["linear"].least_disparate(S, epsilons=eps), "epsilons")  # fmt: skip
    # ---- benchmarks on the wrong scale or from another kind of model
    deciles = RNG.integers(1, 11, size=N)
    reg = LinearRegression().fit(DF, YB)
    bench = {
        "decile scores on the probability scale": ("logistic", deciles, {}),
        "a regressor on the probability scale": ("logistic", reg, {}),
        "a regressor's output on the probability scale": ("logistic", reg.predict(DF), {}),
        "a regressor on the score scale": ("logistic", reg, {"scale": "score"}),
        "a regressor for a hinge set": ("hinge", reg, {}),
        "text": ("logistic", "abc", {}),
        "text for a regression set": ("linear", "abc", {}),
        "a number": ("linear", 0.5, {}),
        "too short": ("linear", np.zeros(N - 1), {}),
        "with NaN": ("linear", np.r_[np.nan, np.zeros(N - 1)], {}),
        "with inf": ("logistic", np.r_[np.inf, np.zeros(N - 1)], {"scale": "score"}),
        "2-D": ("linear", np.zeros((N, 2)), {}),
        "strings": ("linear", np.array(["x"] * N), {}),
    }
    for name, (kind, b, kw) in bench.items():
        add(f"benchmark {name}", lambda kind=kind, b=b, kw=kw: _sets()[kind].least_disparate(S, benchmark=b, frontier=False, **kw), "benchmark")  # fmt: skip
    # ---- a ratio whose denominator is (or can be) zero
    add("ratio, reference group's rate 0", lambda: _sets()["logistic"].disparity_range(S, "positive_rate", threshold=0.99, kind="ratio"), "kind")  # fmt: skip
    add("ratio, a member's rate 0", lambda: _sets()["logistic"].disparity_range(S, "positive_rate", threshold=0.85, kind="ratio"), "kind")  # fmt: skip
    add("least_disparate ratio, rate 0", lambda: _sets()["logistic"].least_disparate(S, "positive_rate", threshold=0.99, kind="ratio"), "kind")  # fmt: skip
    add("ratio of hinge rates, rate 0", lambda: _sets()["hinge"].disparity_range(S, "positive_rate", threshold=50.0, kind="ratio"), "kind")  # fmt: skip
    # ---- sensitive labels
    sens = {
        "object labels with None": _with(S, 3, None),
        "object labels with NaN": _with(S, 5, np.nan),
        "object labels with pd.NA": _with(S, 7, pd.NA),
        "mixed text and numbers": _with(S, 2, 7),
        "a Series with another index": pd.Series(S.to_numpy(), index=DF.index + 1000),
        "a Series with a repeated index": pd.Series(S.to_numpy(), index=[0] * N),
        "a Series of another length": S.iloc[:-1],
        "array with None": np.r_[S.to_numpy()[:-1], None],
    }
    for name, s in sens.items():
        add(f"sensitive {name}", lambda s=s: _sets()["linear"].disparity_range(s), "sensitive")
        add(f"sensitive {name} (least_disparate)", lambda s=s: _sets()["logistic"].least_disparate(s, frontier=False), "sensitive")  # fmt: skip
    # ---- model files and their trusted types (audit)
    tab = DF.assign(y=YR)
    audit = functools.partial(rsh.audit, tab, "y", {"g": ["a"]}, model_class="linear", cv=3)
    add("audit trusted_types a number", lambda: audit(trusted_types=5), "trusted_types")
    add("audit trusted_types numbers", lambda: audit(trusted_types=[1, 2]), "trusted_types")
    add("audit trusted_types empty name", lambda: audit(trusted_types=[" "]), "trusted_types")
    add("audit estimator missing file", lambda: audit(estimator="no-such-model.joblib"), "estimator")
    add("audit estimator a folder", lambda: audit(estimator="."), "estimator")
    return cases


CASES = _cases()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("call, pattern", CASES)
def test_bad_input_gives_a_clear_error(call, pattern):
    with pytest.raises(RashomonInputError, match=pattern) as info:
        call()
    msg = str(info.value)
    assert "Got" in msg and "Traceback" not in msg, msg
    assert "could not convert" not in msg and "not supported between" not in msg, msg


def test_catalogue_size():
    assert len(CASES) >= 40


# ---------------------------------------------------------------- checked answers
def test_reference_of_the_same_class_is_kept():
    a = _sets()["logistic"]
    b = RashomonSet(rsh.LogisticModelClass(), 0.1, reference=a.reference_).fit(DF, YB)
    assert b.loss_ == "log_loss" and b.e_ref_ == pytest.approx(a.e_ref_, rel=1e-12)
    lin = RashomonSet(rsh.LinearModelClass(), 0.1, loss="log_loss", reference=a.reference_).fit(DF, YB)
    assert lin.e_ref_ == pytest.approx(a.e_ref_, rel=1e-12)


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_sensitive_series_is_aligned_by_index(kind):
    rs = _sets()[kind]
    shuffled = S.sample(frac=1, random_state=0)
    assert not shuffled.index.equals(DF.index)
    got = rs.disparity_range(shuffled)
    # independent: the labels put in the fitted rows' order by hand, passed as a plain array (positional)
    want = rs.disparity_range(np.array([shuffled[i] for i in DF.index]))
    assert np.array_equal(got.lower, want.lower) and np.array_equal(got.upper, want.upper)
    positional = rs.disparity_range(shuffled.to_numpy())  # what the old reading by position gave: different
    assert not np.allclose(positional.reference, got.reference)


def test_frontier_epsilons_within_the_cap_are_read_as_the_set_reads_epsilon():
    rs = _sets()["linear"]
    ld = rs.least_disparate(S, epsilons=[0.05, 0.2])
    from rashomon.sets._epsilon import epsilon_threshold

    want = [epsilon_threshold(e, rs.epsilon_kind, rs.e_ref_, rs.e_min_, "t") for e in (0.05, 0.2)]
    assert np.all(np.isfinite(ld.frontier.lower)) and np.all(np.isfinite(ld.frontier.attained))
    for w in want:
        assert np.any(np.isclose(ld.frontier.epsilons, w, rtol=1e-12))


def test_probability_benchmarks_are_placed_as_computed_by_hand():
    rs = _sets()["logistic"]
    clf = LogisticRegression().fit(DF, YB)
    p = clf.predict_proba(DF)[:, 1]
    a = rs.least_disparate(S, benchmark=clf, frontier=False).benchmark
    b = rs.least_disparate(S, benchmark=p, frontier=False).benchmark
    # independent: the benchmark's B - A difference of mean probabilities
    want = p[S.to_numpy() == "B"].mean() - p[S.to_numpy() == "A"].mean()
    assert a["disparity"] == pytest.approx(want, rel=1e-12) and b["disparity"] == pytest.approx(want, rel=1e-12)
    log_loss = -np.mean(YB * np.log(p) + (1 - YB) * np.log1p(-p))
    assert b["loss"] == pytest.approx(log_loss, rel=1e-12)


def test_finite_ratio_still_answers():
    rs = _sets()["logistic"]
    d = rs.disparity_range(S, "positive_rate", threshold=0.5, kind="ratio")
    assert np.all(np.isfinite(d.lower)) and np.all(np.isfinite(d.upper))
    # independent: the reference model's own rates, from its score (its decision_function) through the logistic
    prob = 1.0 / (1.0 + np.exp(-rs.reference_.decision_function(DF)))
    dec, s = prob > 0.5, S.to_numpy()
    assert d.reference[0] == pytest.approx(dec[s == "B"].mean() / dec[s == "A"].mean(), rel=1e-12)


def test_skops_file_without_skops_is_a_clear_error(tmp_path, monkeypatch):
    import sys

    (tmp_path / "m.skops").write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "skops", None)
    monkeypatch.setitem(sys.modules, "skops.io", None)
    with pytest.raises(RashomonInputError, match=r"'estimator'.*needs the skops package"):
        rsh.audit(DF.assign(y=YR), "y", {"g": ["a"]}, model_class="linear", cv=3, estimator=tmp_path / "m.skops")


def test_docs_warn_that_loading_a_pickle_runs_code():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    from rashomon.audit.cli import build_parser

    texts = {
        "README.md": (root / "README.md").read_text(encoding="utf-8"),
        "audit guide": (root / "docs" / "user_guide" / "audit.rst").read_text(encoding="utf-8"),
        "--help": build_parser()._subparsers._group_actions[0].choices["audit"].format_help(),
        "audit docstring": rsh.audit.__doc__,
    }
    for name, text in texts.items():
        flat = " ".join(text.split())
        assert re.search(r"pickle.{0,40}? runs code from the file", flat, flags=re.IGNORECASE), name
