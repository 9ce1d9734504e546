"""Members of a Rashomon set are scikit-learn estimators: classifier members (logistic, hinge) are binary
classifiers with ``classes_``, ``predict`` (labels), ``decision_function`` and (logistic) ``predict_proba``;
regression members are regressors; all work in scikit-learn's scorers, ``permutation_importance`` and
``CalibrationDisplay``, and survive a pickle round trip."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.base import is_classifier, is_regressor

from rashomon import (
    ClassifierMember,
    ClassMember,
    HingeModelClass,
    KernelModelClass,
    LinearModelClass,
    LogisticModelClass,
    RashomonSet,
)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = (X["a"] - 0.5 * X["b"] + rng.logistic(size=n) > 0).astype(int).to_numpy()
    return X, y


def _members(rs):
    """The reference, a sampled member and the member attaining a prediction range's upper end."""
    X = pd.DataFrame(rs.X_[:3], columns=rs.feature_names_in_)
    rng = rs.prediction_range(X, return_models=True)
    return [rs.reference_, rs.sample(2, random_state=0).estimators()[0], rng.member(0, "upper")]


@pytest.fixture(scope="module")
def logistic():
    X, y = _data()
    return RashomonSet(LogisticModelClass(norm_bound=2.0), 0.05).fit(X, y), X, y


@pytest.fixture(scope="module")
def hinge():
    X, y = _data()
    return RashomonSet(HingeModelClass(norm_bound=2.0), 0.05).fit(X, 2 * y - 1), X, 2 * y - 1


def _scores(m, X):
    """The member's scores from its parameters (the class's prediction map), independently of its methods."""
    P, p0 = m.parametrization_.prediction_map(np.asarray(X, dtype=float))
    return P @ m.theta_ + p0


def test_logistic_members_are_binary_classifiers(logistic):
    rs, X, y = logistic
    for m in [rs.reference_, rs.parametrization_.estimator(rs.theta_min_)]:
        assert isinstance(m, ClassifierMember) and isinstance(m, ClassMember)
        assert is_classifier(m) and not is_regressor(m)
        np.testing.assert_array_equal(m.classes_, [0, 1])
        assert m.classes_.dtype.kind == "i"
        s = _scores(m, X)
        np.testing.assert_array_equal(m.decision_function(X), s)
        np.testing.assert_array_equal(m.predict(X), np.where(s > 0, 1, 0))
        proba = m.predict_proba(X)
        assert proba.shape == (len(X), 2)
        np.testing.assert_allclose(proba[:, 1], expit(s), rtol=1e-15)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
        assert m.score(X, y) == pytest.approx(np.mean(m.predict(X) == y))  # accuracy, not R²


def test_hinge_members_have_no_probabilities(hinge):
    rs, X, y = hinge
    m = rs.reference_
    assert is_classifier(m)
    np.testing.assert_array_equal(m.classes_, [-1, 1])
    assert not hasattr(m, "predict_proba")  # as scikit-learn's SVC(probability=False)
    with pytest.raises(AttributeError):
        m.predict_proba(X)
    np.testing.assert_array_equal(m.predict(X), np.where(_scores(m, X) > 0, 1, -1))


def test_labels_follow_the_fitted_target():
    X, y = _data(n=120, seed=3)
    for labels, cls in (((0, 1), LogisticModelClass), ((-1, 1), LogisticModelClass), ((0, 1), HingeModelClass)):
        yy = np.where(y == 1, labels[1], labels[0])
        rs = RashomonSet(cls(norm_bound=2.0), 0.05).fit(X, yy)
        np.testing.assert_array_equal(rs.reference_.classes_, labels)
        assert set(np.unique(rs.reference_.predict(X))) <= set(labels)
    ref = LogisticModelClass(norm_bound=2.0).fit_reference(X, y)  # the class's own reference
    np.testing.assert_array_equal(ref.classes_, [0, 1])
    assert isinstance(ref, ClassifierMember)


def test_regression_members_stay_regressors():
    X, y = _data()
    yr = X["a"].to_numpy() + np.random.default_rng(1).normal(size=len(X))
    for mc in (LinearModelClass(), KernelModelClass(gamma=0.5)):
        m = RashomonSet(mc, 0.05).fit(X, yr).reference_
        assert type(m) is ClassMember and is_regressor(m) and not is_classifier(m)
        assert not hasattr(m, "classes_") and not hasattr(m, "decision_function")
        np.testing.assert_array_equal(m.predict(X), _scores(m, X))


def test_members_in_scikit_learn_scorers_and_permutation_importance(logistic, hinge):
    from sklearn.inspection import permutation_importance
    from sklearn.metrics import get_scorer, roc_auc_score

    for rs, X, y in (logistic, hinge):
        for m in _members(rs):
            auc = get_scorer("roc_auc")(m, X, y)
            assert auc == pytest.approx(roc_auc_score(y, _scores(m, X)), rel=1e-12)
            assert get_scorer("accuracy")(m, X, y) == pytest.approx(np.mean(m.predict(X) == y))
            pi = permutation_importance(m, X, y, n_repeats=3, random_state=0, scoring="roc_auc")
            assert pi.importances_mean.shape == (3,) and np.all(np.isfinite(pi.importances_mean))
            # feature a carries the signal: permuting it costs AUC
            assert pi.importances_mean[0] > 0


def test_calibration_display_from_member(logistic):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.calibration import CalibrationDisplay, calibration_curve

    rs, X, y = logistic
    m = rs.reference_
    disp = CalibrationDisplay.from_estimator(m, X, y, n_bins=5)
    true, pred = calibration_curve(y, expit(_scores(m, X)), n_bins=5)
    np.testing.assert_allclose(disp.prob_true, true, rtol=1e-12)
    np.testing.assert_allclose(disp.prob_pred, pred, rtol=1e-12)
    plt.close(disp.figure_)


@pytest.mark.parametrize("which", ["logistic", "hinge", "linear"])
def test_members_survive_pickle(which, logistic, hinge):
    if which == "linear":
        X, y = _data()
        rs = RashomonSet(LinearModelClass(), 0.05).fit(X, X["a"].to_numpy() + 0.1 * y)
    else:
        rs, X, y = logistic if which == "logistic" else hinge
    for m in _members(rs):
        back = pickle.loads(pickle.dumps(m))
        assert type(back) is type(m)
        np.testing.assert_array_equal(back.predict(X), m.predict(X))
        np.testing.assert_array_equal(back.theta_, m.theta_)
        if which != "linear":
            np.testing.assert_array_equal(back.classes_, m.classes_)
            np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
        if which == "logistic":
            np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
        assert list(back.feature_names_in_) == ["a", "b", "c"]


def test_model_reliance_reads_a_member_with_its_class_loss(logistic, hinge):
    """``loss="auto"`` on a classifier member is its class's loss (log loss on predict_proba, hinge on
    decision_function): the member's e_orig is the set's e_ref on the same rows."""
    from rashomon import model_reliance

    for (rs, X, y), name in ((logistic, "log_loss"), (hinge, "hinge")):
        res = model_reliance(rs.reference_, X, y, "a")
        assert res.loss == name
        # the set sums the same row losses in another order (and clips no probability): rounding only
        assert res.e_orig == pytest.approx(rs.e_ref_, rel=1e-9)
