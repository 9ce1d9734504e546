"""Conditional importance: switch X1 only between rows with similar X2.

Marginal MR scrambles X1 against everything, so a variable that merely
duplicates information in X2 still looks important (Fisher et al. 2019, §8.2;
Strobl et al. 2008; Molnar et al. 2020). Conditional reliance switches X1 only
*within strata* of X2.

Exact estimator: for each stratum g with n_g >= 2 rows, the mean switched loss
over ordered pairs i ≠ j inside g (the within-stratum U-statistic); these are
averaged with weights ``n_g / n'`` where n' counts the rows in strata of two or
more. Singleton strata cannot be switched and are left out of ``e_switch`` (their
number is reported); ``e_orig`` is over all rows, as for :func:`model_reliance`.

Automatic strata (``strata=None``): if X2 is a single column, its quantile bins
(``n_bins``, default 10, ties kept together); otherwise the leaves of a shallow
regression tree fitted on X2 to predict X1 (conditional-subgroup PFI, Molnar et
al. 2020): ``DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=
max(10, n // 50))`` with X1's first principal direction as the target for a group.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..utils.validation import (
    Integral,
    NJobs,
    Options,
    RandomStateLike,
    RashomonInputError,
    check_choice,
    check_strata,
    check_X,
    resolve_group,
    seed_from,
    validate_params,
)
from ._exact import exact_e_switch
from ._linear import linear_squared_e_switch
from ._prepared import DEFAULT_MEMORY_LIMIT, _permuted_loss, _Prepared
from ._results import ModelRelianceResult, _ratio

__all__ = ["conditional_model_reliance", "make_strata"]


@validate_params({"n_bins": Integral(2), "max_depth": Integral(1), "random_state": Integral(0, 2**32 - 1)})
def make_strata(
    X: np.ndarray, group: tuple[int, ...], *, n_bins: int = 10, max_depth: int = 3, random_state: int = 0
) -> np.ndarray:
    """Automatic strata of the rows by the features outside ``group`` (see module notes)."""
    X, columns = check_X(X, "make_strata", min_rows=1)
    group = resolve_group(group, columns, X.shape[1], "make_strata", "group")
    n, p = X.shape
    rest = [j for j in range(p) if j not in group]
    if not rest:
        return np.zeros(n, dtype=int)
    if len(rest) == 1:
        x = X[:, rest[0]]
        edges = np.unique(np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1]))
        return np.searchsorted(edges, x, side="right")
    from sklearn.tree import DecisionTreeRegressor

    X1 = X[:, list(group)]
    if X1.shape[1] > 1:
        Xc = X1 - X1.mean(0)
        target = Xc @ np.linalg.svd(Xc, full_matrices=False)[2][0]
    else:
        target = X1[:, 0]
    tree = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=max(10, n // 50), random_state=random_state)
    return tree.fit(X[:, rest], target).apply(X[:, rest])


def _gaussian_draws(X, group, rng, n_repeats):
    """Draws of X1 | X2 from the Gaussian fitted to X: mean μ1 + Σ12 Σ22⁻¹ (x2 - μ2), covariance the Schur complement."""
    g = list(group)
    rest = [j for j in range(X.shape[1]) if j not in g]
    mu = X.mean(0)
    S = np.cov(X, rowvar=False).reshape(X.shape[1], X.shape[1])
    if rest:
        S22 = S[np.ix_(rest, rest)]
        S12 = S[np.ix_(g, rest)]
        K = np.linalg.lstsq(S22, S12.T, rcond=None)[0].T  # Σ12 Σ22⁻¹
        mean = mu[g] + (X[:, rest] - mu[rest]) @ K.T
        cov = S[np.ix_(g, g)] - K @ S12.T
    else:
        mean = np.broadcast_to(mu[g], (X.shape[0], len(g)))
        cov = S[np.ix_(g, g)]
    w, V = np.linalg.eigh(0.5 * (cov + cov.T))
    L = V * np.sqrt(np.clip(w, 0, None))
    return [mean + rng.normal(size=mean.shape) @ L.T for _ in range(n_repeats)]


@validate_params(
    {
        "method": Options(("exact", "permutation", "gaussian")),
        "n_repeats": Integral(1),
        "n_bins": Integral(2),
        "max_depth": Integral(1),
        "random_state": RandomStateLike(),
        "n_jobs": NJobs(),
        "memory_limit": Integral(1),
    }
)
def conditional_model_reliance(
    estimator: Any,
    X: Any,
    y: Any,
    features: Any,
    *,
    strata: Any = None,
    loss: str | Any = "auto",
    method: Literal["exact", "permutation", "gaussian"] = "exact",
    n_repeats: int = 5,
    n_bins: int = 10,
    max_depth: int = 3,
    random_state: Any = None,
    n_jobs: int | None = None,
    closed_form: Literal["auto"] | bool = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> ModelRelianceResult:
    """Conditional model reliance: switch X1 only within strata of X2.

    Parameters
    ----------
    strata : array-like of shape (n_samples,), default=None
        A stratum label per row (discrete X2 or a user grouping). None builds
        strata automatically (quantile bins of a single X2 column, else the
        leaves of a shallow tree on X2 predicting X1; module notes).
    method : {"exact", "permutation", "gaussian"}, default="exact"
        ``"exact"``: within-stratum U-statistic. ``"permutation"``: conditional
        PFI, X1 permuted within strata, ``n_repeats`` times. ``"gaussian"``: X1
        redrawn from the Gaussian conditional X1 | X2 fitted to X (continuous
        data), ``n_repeats`` times; strata are not used.
    n_bins, max_depth : int
        Automatic strata settings.
    Other parameters
        As in :func:`model_reliance`.

    Returns
    -------
    ModelRelianceResult
        ``method`` is ``"conditional-exact"``, ``"conditional-permutation"`` or
        ``"conditional-gaussian"``.

    References
    ----------
    Fisher, Rudin & Dominici (2019), §8.2. C. Molnar, G. König, B. Bischl and
    G. Casalicchio, "Model-agnostic feature importance and effects with
    dependent features: a conditional subgroup approach", 2020.
    """
    func = "conditional_model_reliance"
    check_choice(closed_form, ("auto", True, False), "closed_form", func)
    prep = _Prepared(estimator, X, y, loss, func)
    Xa, n = prep.X, prep.X.shape[0]
    group = resolve_group(features, prep.columns, Xa.shape[1], func)
    seed = seed_from(random_state, func)
    codes = (
        check_strata(strata, n, func)
        if strata is not None
        else make_strata(Xa, group, n_bins=n_bins, max_depth=max_depth, random_state=seed % (2**31 - 1))
    )
    codes = np.unique(codes, return_inverse=True)[1].ravel()
    names = tuple(prep.columns[i] if prep.columns else f"x{i}" for i in group)
    e_orig = prep.e_orig
    reps = None
    used_closed = False
    if method == "exact":
        sizes = np.bincount(codes)
        multi = np.where(sizes >= 2)[0]
        if multi.size == 0:
            raise RashomonInputError(
                f"The 'strata' parameter of {func} has no stratum with two or more rows; nothing can be switched."
            )
        lin = prep.linear() if closed_form in ("auto", True) else None
        max_rows = max(1, int(memory_limit // (8 * (Xa.shape[1] + 4))))
        total, weight = 0.0, 0
        for s_ in multi:
            idx = np.where(codes == s_)[0]
            if lin is not None:
                _, es = linear_squared_e_switch(Xa[idx], prep.y[idx], lin[1][idx], lin[0], group)
                used_closed = True
            else:
                es = exact_e_switch(prep.predictor, Xa[idx], prep.y_enc[idx], group, max_rows, n_jobs)
            total += len(idx) * es
            weight += len(idx)
        e_switch = total / weight
    elif method == "permutation":
        rs = np.random.RandomState(seed)
        vals = []
        for _ in range(n_repeats):
            perm = np.arange(n)
            for s_ in np.unique(codes):
                idx = np.where(codes == s_)[0]
                perm[idx] = idx[rs.permutation(len(idx))]
            vals.append(_permuted_loss(prep.predictor, Xa, prep.y_enc, group, perm))
        reps = np.asarray(vals)
        e_switch = float(reps.mean())
    else:
        draws = _gaussian_draws(Xa, group, np.random.RandomState(seed), n_repeats)
        vals = []
        for D1 in draws:
            Xs = Xa.copy()
            Xs[:, list(group)] = D1
            vals.append(float(np.mean(prep.predictor.losses(prep.y_enc, Xs))))
        reps = np.asarray(vals)
        e_switch = float(reps.mean())
    res = ModelRelianceResult(
        features=names,
        feature_indices=tuple(group),
        method=f"conditional-{method}",
        loss=prep.loss.name,
        e_orig=e_orig,
        e_switch=float(e_switch),
        ratio=float(_ratio(e_switch, e_orig)),
        difference=float(e_switch - e_orig),
        n_samples=n,
        e_switch_repeats=reps,
        ratio_repeats=None if reps is None else _ratio(reps, e_orig),
        difference_repeats=None if reps is None else reps - e_orig,
        closed_form=used_closed,
    )
    return res
