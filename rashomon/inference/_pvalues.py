"""p-values over refits: the Nadeau–Bengio corrected resampled t-test comparing two learners, and PIMP
(Altmann et al. 2010), the learner's PFI against a null of refits on permuted y.

PIMP: the learner is refitted on ``n_permutations`` copies of the data with y permuted; the PFIs of these
fits form a null distribution per feature (Gaussian, log-normal or gamma fitted to it, or the empirical
one), and the observed PFI gets a p-value. The refits and PFIs are those of ``_inference.py``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

from ..utils import permutation_indices, single_blas_thread
from ..utils.losses import default_loss, resolve_loss
from ..utils.validation import (
    Boolean,
    Integral,
    NJobs,
    Options,
    RandomStateLike,
    RashomonInputError,
    Real,
    check_X,
    check_y,
    resolve_features,
    seed_from,
    validate_params,
)
from ._inference import _check_data, _check_learner, _corrected_ci, _frame, _pfi_rows, _run_refits
from ._results import PIMPResult, TTestResult

__all__ = ["corrected_resampled_ttest", "pimp", "PIMPResult", "TTestResult"]


@validate_params(
    {
        "n_refits": Integral(2),
        "resampling": Options(("bootstrap", "subsampling")),
        "train_fraction": Real(0.0, 1.0, "neither"),
        "correction": Boolean(),
        "confidence_level": Real(0.0, 1.0, "neither"),
        "random_state": RandomStateLike(),
        "n_jobs": NJobs(),
    }
)
def corrected_resampled_ttest(
    learner_a: Any,
    learner_b: Any,
    X: Any,
    y: Any,
    *,
    n_refits: int = 15,
    resampling: Literal["bootstrap", "subsampling"] = "subsampling",
    train_fraction: float = 0.632,
    correction: bool = True,
    confidence_level: float = 0.95,
    loss: str | Any = "auto",
    random_state: Any = None,
    n_jobs: int | None = None,
) -> TTestResult:
    """Nadeau–Bengio corrected resampled t-test comparing two learners on the same resamples.

    ``t = mean(d) / sqrt((1/m + n_test/n_train)·s²)`` with m - 1 degrees of freedom, d the
    per-resample held-out loss differences (a - b); two-sided p-value.
    """
    func = "corrected_resampled_ttest"
    _check_learner(learner_a, func, "learner_a")
    _check_learner(learner_b, func, "learner_b")
    Xa, ya, columns = _check_data(X, y, func)
    if isinstance(loss, str) and loss == "auto":
        la, lb = default_loss(learner_a, ya), default_loss(learner_b, ya)
        if la != lb:
            raise RashomonInputError(
                f"The 'loss' parameter of {func} is 'auto', which picks {la!r} for learner_a and {lb!r} for learner_b; "
                "the test compares the two learners on one loss: give it explicitly (e.g. loss='zero_one' for any two "
                "classifiers)."
            )
    L = resolve_loss(loss, learner_a, func, ya)
    out = []
    for learner in (learner_a, learner_b):
        res = _run_refits(
            learner, Xa, ya, columns, n_refits, resampling, train_fraction, None, 1, L, None, random_state, n_jobs, func
        )
        out.append(res)
    d = np.array([a["loss"] - b["loss"] for a, b in zip(*out)])
    c = float(np.mean([o["n_test"] / o["n_train"] for o in out[0]])) if correction else 0.0
    mean, se, lo, hi = _corrected_ci(d, c, confidence_level)
    t = float(mean / se) if se > 0 else (math.inf if mean != 0 else 0.0)
    p = float(2 * stats.t.sf(abs(t), n_refits - 1))
    return TTestResult(float(mean), t, p, d, c, float(lo), float(hi), L.name)


#: fewest null draws a parametric null (gaussian, lognormal, gamma) is fitted to: the fitted scale's relative standard
#: error is about 1/sqrt(2(k - 1)), 13 % at k = 30 (71 % at k = 2), and a tail p-value moves with it by orders of
#: magnitude; Altmann et al. (2010) used 50 to 100 permutations
MIN_PARAMETRIC_PERMUTATIONS = 30


def _null_p(obs, null, kind):
    if kind == "empirical":
        return (1 + np.sum(null >= obs)) / (1 + len(null))
    if kind == "gaussian":
        mu, sd = np.mean(null), np.std(null, ddof=1)
        return float(stats.norm.sf(obs, mu, max(sd, 1e-300)))
    # Log-normal and gamma need positive support while a PFI can be <= 0: the null is shifted
    # so that its smallest value sits one null standard deviation above zero (a location fixed
    # before the two-parameter fit; putting the minimum at ~0 would let log(min) dominate).
    loc = float(np.min(null)) - max(float(np.std(null, ddof=1)), 1e-12)
    if obs <= loc:
        return 1.0
    dist = stats.lognorm if kind == "lognormal" else stats.gamma
    params = dist.fit(null - loc, floc=0.0)
    return float(dist.sf(obs - loc, *params))


def _adjust_p(p, correction):
    """Bonferroni or Holm (step-down) adjusted p-values across features; ``None`` leaves them as they are."""
    p = np.asarray(p, dtype=float)
    k = len(p)
    if correction == "bonferroni":
        return np.minimum(1.0, p * k)
    if correction == "holm":
        order = np.argsort(p, kind="stable")
        adj = np.empty(k)
        adj[order] = np.minimum(1.0, np.maximum.accumulate(p[order] * (k - np.arange(k))))
        return adj
    return p.copy()


def _pimp_task(learner, X, y, columns, seed, groups, n_repeats, loss, permute_y, func="pimp"):
    from sklearn.base import clone

    rng = np.random.RandomState(seed)
    yy = y[rng.permutation(len(y))] if permute_y else y
    model = clone(learner).fit(_frame(X, columns), yy)
    perms = permutation_indices(len(y), n_repeats, int(rng.randint(2**31 - 1)))
    return _pfi_rows(model, X, yy, groups, perms, loss, columns, func).mean(axis=1)


@validate_params(
    {
        "n_permutations": Integral(2),
        "null": Options(("gaussian", "lognormal", "gamma", "empirical")),
        "correction": Options(("bonferroni", "holm"), allow_none=True),
        "n_repeats": Integral(1),
        "random_state": RandomStateLike(),
        "n_jobs": NJobs(),
    }
)
def pimp(
    learner: Any,
    X: Any,
    y: Any,
    *,
    features: Any = None,
    n_permutations: int = 100,
    null: Literal["gaussian", "lognormal", "gamma", "empirical"] = "gaussian",
    correction: Literal["bonferroni", "holm"] | None = "holm",
    n_repeats: int = 5,
    loss: str | Any = "auto",
    random_state: Any = None,
    n_jobs: int | None = None,
) -> PIMPResult:
    """Permutation importance p-values (PIMP; Altmann et al. 2010).

    The learner is fitted on (X, y) and its PFI computed; then refitted ``n_permutations``
    times on y permuted, giving a null PFI distribution per feature. ``null`` chooses the
    distribution fitted to it; ``correction`` adjusts the p-values across features. A parametric
    null needs ``n_permutations >= 30`` (``MIN_PARAMETRIC_PERMUTATIONS``); with fewer, the p-values are the
    empirical ones (valid, never below ``1/(1 + n_permutations)``) and ``result.note`` says so.
    """
    func = "pimp"
    _check_learner(learner, func)
    Xa, columns = check_X(X, func, min_rows=4)
    ya = check_y(y, Xa.shape[0], func, numeric=False)
    L = resolve_loss(loss, learner, func, ya)
    items = resolve_features(features, columns, Xa.shape[1], func)
    groups = list(items.values())
    seeds = np.random.RandomState(seed_from(random_state, func)).randint(0, 2**31 - 1, size=n_permutations + 1)
    obs = single_blas_thread(_pimp_task, learner, Xa, ya, columns, int(seeds[0]), groups, n_repeats, L, False)
    nulls = Parallel(n_jobs=n_jobs)(
        delayed(single_blas_thread)(_pimp_task, learner, Xa, ya, columns, int(s), groups, n_repeats, L, True)
        for s in seeds[1:]
    )
    null_arr = np.column_stack(nulls)
    note = ""
    if null != "empirical" and n_permutations < MIN_PARAMETRIC_PERMUTATIONS:
        note = (
            f"null={null!r} needs n_permutations >= {MIN_PARAMETRIC_PERMUTATIONS} (a distribution fitted to fewer "
            "draws extrapolates its tail from a scale known to no better than 13 %: 2 draws gave p = 2.3e-11); "
            f"with n_permutations={n_permutations} the p-values are the empirical ones, (1 + #null >= observed) / "
            f"(1 + {n_permutations}), never below {1 / (1 + n_permutations):.3g}."
        )
        null = "empirical"
    p = np.array([_null_p(o, nl, null) for o, nl in zip(obs, null_arr)])
    return PIMPResult(list(items), obs, null_arr, p, _adjust_p(p, correction), null, correction, L.name, note)
