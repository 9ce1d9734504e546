"""loss="auto": the loss that fits the estimator (issue 18, item 5) and one loss vocabulary.

Rules (rashomon.utils.losses.default_loss): regressor -> squared error on predict; classifier with
predict_proba -> log loss on predict_proba; classifier without it -> hinge on decision_function when
binary, zero-one on predict otherwise; anything else (a plain function) -> squared error. The loss
used is recorded on the result, and nothing is printed or warned.
"""

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import VotingClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

import rashomon
from rashomon.utils.losses import canonical_loss_name, default_loss, get_loss


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _data(n=80, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 3, n)
    score = X[:, 0] + 0.5 * X[:, 2] + 0.7 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _brute(loss_rows, X, group):
    """e_orig and the all-pairs e_switch by materialising the n(n-1) switched rows."""
    n = X.shape[0]
    i, j = np.where(~np.eye(n, dtype=bool))
    Xs = X[j].copy()
    Xs[:, group] = X[i][:, group]
    return float(np.mean(loss_rows(X, np.arange(n)))), float(np.mean(loss_rows(Xs, j)))


# ------------------------------------------------------------------ the rule
def test_default_loss_rules():
    X, y2 = _data()
    _, y3 = _data(classes=3)
    yr = X @ [1.0, 0.5, 0.0]
    hard = VotingClassifier([("a", LogisticRegression()), ("b", DecisionTreeClassifier(max_depth=2))], voting="hard")
    cases = [
        (LinearRegression().fit(X, yr), "squared_error"),
        (make_pipeline(StandardScaler(), Ridge()).fit(X, yr), "squared_error"),
        (LogisticRegression().fit(X, y2), "log_loss"),
        (make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y3), "log_loss"),
        (CalibratedClassifierCV(LinearSVC(), ensemble=False).fit(X, y2), "log_loss"),
        (LinearSVC().fit(X, y2), "hinge"),
        (SVC().fit(X, y2), "hinge"),
        (make_pipeline(StandardScaler(), LinearSVC()).fit(X, y2), "hinge"),
        (LinearSVC().fit(X, y3), "zero_one"),
        (make_pipeline(StandardScaler(), SVC()).fit(X, y3), "zero_one"),
        (hard.fit(X, y2), "zero_one"),  # no predict_proba, no decision_function
        (lambda Z: Z[:, 0], "squared_error"),  # a plain function
    ]
    for est, expected in cases:
        assert default_loss(est) == expected, est
    # unfitted learners (the inference functions): the classes are counted on y
    assert default_loss(LinearSVC(), y2) == "hinge" and default_loss(LinearSVC(), y3) == "zero_one"
    assert default_loss(LogisticRegression(), y3) == "log_loss" and default_loss(Ridge(), yr) == "squared_error"


def test_one_vocabulary():
    assert canonical_loss_name("logistic") == "log_loss" and canonical_loss_name("squared") == "squared_error"
    assert get_loss("logistic", "f").name == "log_loss"
    assert rashomon.LogisticModelClass.loss == "log_loss" and rashomon.HingeModelClass.loss == "hinge"
    X, y = _data(n=60)
    # the cross-validated norm bound is tiny here (r = 5e-6): the set holds the null model, as fit says
    warnings.filterwarnings("ignore", message=".*null model", category=rashomon.RashomonWarning)
    rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), 0.05).fit(X, y)
    assert rs.loss_ == "log_loss" and rs.model_class_reliance(0).loss == "log_loss"
    for spelling in ("logistic", "log_loss"):  # the alias is mapped in one place
        rs = rashomon.RashomonSet(rashomon.LinearModelClass(norm_bound=1.0), 0.05, loss=spelling).fit(X, y)
        assert rs.loss_ == "log_loss"
        assert rashomon.RashomonSet(rashomon.LogisticModelClass(), 0.05, loss=spelling).fit(X, y).loss_ == "log_loss"
    with pytest.raises(ValueError, match="'loss'.*'auto'.*Got 'logit'"):
        rashomon.model_reliance(LinearRegression().fit(X, y), X, y, 0, loss="logit")


# ------------------------------------------------------------------ model_reliance / feature_reliance
@pytest.mark.parametrize("case", ["regressor", "proba", "proba-pipeline", "hinge", "hinge-strings", "zero_one"])
def test_auto_equals_the_explicit_loss_and_a_brute_force_reference(case):
    X, y = _data(n=40, classes=3 if case == "zero_one" else 2)
    if case == "regressor":
        y = X @ [1.0, 0.5, -0.3] + np.random.default_rng(1).normal(size=len(y))
        est, name = make_pipeline(StandardScaler(), Ridge()).fit(X, y), "squared_error"
        rows = lambda Z, idx: (y[idx] - est.predict(Z)) ** 2  # noqa: E731
    elif case in ("proba", "proba-pipeline"):
        est = LogisticRegression() if case == "proba" else make_pipeline(StandardScaler(), LogisticRegression())
        est, name = est.fit(X, y), "log_loss"
        rows = lambda Z, idx: -np.log(est.predict_proba(Z)[np.arange(len(idx)), y[idx]])  # noqa: E731
    elif case.startswith("hinge"):
        if case == "hinge-strings":  # labels that are not numbers: +1 is classes_[1]
            y = np.where(y == 1, "yes", "no")
        est, name = LinearSVC().fit(X, y), "hinge"
        sign = np.where(y == est.classes_[1], 1.0, -1.0)
        rows = lambda Z, idx: np.maximum(0.0, 1.0 - sign[idx] * est.decision_function(Z))  # noqa: E731
    else:
        est, name = LinearSVC().fit(X, y), "zero_one"
        rows = lambda Z, idx: (est.predict(Z) != y[idx]).astype(float)  # noqa: E731
    for group in ([0], [2], [0, 2]):
        auto = rashomon.model_reliance(est, X, y, group)
        explicit = rashomon.model_reliance(est, X, y, group, loss=name)
        assert auto.loss == name and explicit.loss == name
        assert auto.e_orig == explicit.e_orig and auto.e_switch == explicit.e_switch
        e_orig, e_switch = _brute(rows, X, group)
        assert auto.e_orig == pytest.approx(e_orig, rel=1e-10, abs=1e-12)
        assert auto.e_switch == pytest.approx(e_switch, rel=1e-10, abs=1e-12)
    fr = rashomon.feature_reliance(est, X, y, method="permutation", n_repeats=3, random_state=0)
    fx = rashomon.feature_reliance(est, X, y, loss=name, method="permutation", n_repeats=3, random_state=0)
    assert fr.loss == name and np.array_equal(fr.ratio, fx.ratio)


def test_conditional_model_reliance_records_the_chosen_loss():
    X, y = _data(n=60)
    clf = LogisticRegression().fit(X, y)
    a = rashomon.conditional_model_reliance(clf, X, y, 0, strata=X[:, 2])
    b = rashomon.conditional_model_reliance(clf, X, y, 0, strata=X[:, 2], loss="log_loss")
    assert a.loss == "log_loss" and a.e_switch == b.e_switch


def test_a_callable_keeps_squared_error_and_a_custom_loss_is_used_as_given():
    X, y = _data(n=30)
    f = lambda Z: Z @ [0.3, 0.0, 0.2]  # noqa: E731
    assert rashomon.model_reliance(f, X, y, 0).loss == "squared_error"
    clf = LogisticRegression().fit(X, y)
    r = rashomon.model_reliance(clf, X, y, 0, loss=lambda yy, p: (yy - p) ** 2)
    assert r.loss == "<lambda>"


# ------------------------------------------------------------------ inference
def _pfi_reference(rows, X, groups, n_repeats, seed):
    """Per-row loss increase averaged over the permutations model_importance_ci draws."""
    from rashomon.utils import permutation_indices
    from rashomon.utils.validation import seed_from

    perms = permutation_indices(X.shape[0], n_repeats, seed_from(seed, "reference"))
    out = []
    for g in groups:
        acc = np.zeros(X.shape[0])
        for perm in perms:
            Xp = X.copy()
            Xp[:, g] = X[perm][:, g]
            acc += rows(Xp)
        out.append(acc / len(perms) - rows(X))
    return np.array(out)


def test_inference_auto_loss_on_classifiers():
    X, y = _data(n=60)
    clf = LogisticRegression().fit(X, y)
    a = rashomon.model_importance_ci(clf, X, y, n_repeats=3, random_state=0)
    b = rashomon.model_importance_ci(clf, X, y, n_repeats=3, random_state=0, loss="log_loss")
    assert a.loss == "log_loss" and np.array_equal(a.importances_mean, b.importances_mean)
    # the PFI rows are log-loss increases on predict_proba (not squared error on hard labels)
    ll = lambda Z: -np.log(clf.predict_proba(Z)[np.arange(len(y)), y])  # noqa: E731
    np.testing.assert_allclose(a.importances, _pfi_reference(ll, X, [[0], [1], [2]], 3, 0), rtol=1e-12, atol=1e-12)
    li = rashomon.learner_importance(LinearSVC(), X, y, n_refits=3, n_repeats=2, random_state=0)
    lx = rashomon.learner_importance(LinearSVC(), X, y, n_refits=3, n_repeats=2, random_state=0, loss="hinge")
    assert li.loss == "hinge" and np.array_equal(li.importances, lx.importances)
    t = rashomon.corrected_resampled_ttest(
        LogisticRegression(), LogisticRegression(C=0.01), X, y, n_refits=3, random_state=0
    )
    assert t.loss == "log_loss" and np.isfinite(t.t_statistic)
    with pytest.raises(ValueError, match="corrected_resampled_ttest.*'log_loss' for learner_a and 'hinge'"):
        rashomon.corrected_resampled_ttest(LogisticRegression(), LinearSVC(), X, y, n_refits=3)
    t2 = rashomon.corrected_resampled_ttest(
        LogisticRegression(), LinearSVC(), X, y, n_refits=3, loss="zero_one", random_state=0
    )
    assert t2.loss == "zero_one"
    p = rashomon.pimp(LogisticRegression(), X, y, n_permutations=3, n_repeats=1, random_state=0)
    assert p.loss == "log_loss" and np.all((p.p_values >= 0) & (p.p_values <= 1))


def test_inference_hinge_uses_decision_function_and_classes():
    """An explicit hinge loss in the inference functions reads decision_function with y as ±1 by classes_."""
    X, y = _data(n=50)
    ys = np.where(y == 1, "b", "a")
    svc = LinearSVC().fit(X, ys)
    res = rashomon.model_importance_ci(svc, X, ys, features=[0], n_repeats=2, random_state=3)
    sign = np.where(ys == "b", 1.0, -1.0)
    hinge = lambda Z: np.maximum(0, 1 - sign * svc.decision_function(Z))  # noqa: E731
    assert res.loss == "hinge"
    np.testing.assert_allclose(res.importances, _pfi_reference(hinge, X, [[0]], 2, 3), rtol=1e-12, atol=1e-12)
