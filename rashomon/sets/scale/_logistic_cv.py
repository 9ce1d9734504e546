"""Cross-validated L2 logistic regression by passes: every fold of every penalty in one pass per Newton step.

The classifier audit chooses the logistic class's norm bound as :class:`~sklearn.linear_model.LogisticRegressionCV`
does (a penalty by cross-validated log loss, the norm of the fit on all the training rows at that penalty), with
two changes that let an out-of-core table and an in-memory one give the same numbers:

- **folds from a row hash**: row i belongs to fold ``floor(v_i · K)``, ``v_i ∈ [0, 1)`` a seeded 64-bit hash of
  its values (the caller's), so the folds depend neither on the partitioning nor on the row order;
- **exact fits**: every problem ``min_θ (1/n_k) Σ_{i ∉ fold k} log(1 + exp(-y_i d_i'θ)) + (λ/2) ||β̃||²`` (θ = (μ,
  β̃) on the standardised design ``d_i = (1, (x_i - mean)/sd)``, the intercept unpenalised) is solved by Newton
  steps with backtracking (full steps once the Newton decrement² is below ``1e-12``) until the decrement² is below
  ``1e-24`` or stops decreasing (rounding), not to a solver's default tolerance.

All ``len(lambdas) × (K + 1)`` problems (every fold, and all the training rows, for every λ) advance together:
one pass returns, for each problem still running, its training sums (``Σ ℓ``, ``Σ ℓ' y d``, ``Σ ℓ'' d d'`` over
the rows outside its fold, as totals minus the fold's rows by zero weights) and the loss of its fold's rows. The
passes are a ``reduce(fn, size)`` given by the caller: the rows at once in memory, a Dask reduction over the
partitions out of core (:func:`dask_reducer`); the iterations are the same, only the order of the sums differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError
from ._dask_inputs import _per_block

__all__ = ["penalised_logistic_cv", "dask_reducer", "memory_reducer", "folds_from_hash", "LOGISTIC_CV_LAMBDAS"]

#: the penalties λ (mean log loss + λ/2 ||β̃||²), strongest first (ties go to the simpler model)
LOGISTIC_CV_LAMBDAS = np.logspace(1, -5, 7)

_DECREMENT = 1e-24  # Newton decrement² at which a problem stops
_QUADRATIC = 1e-12  # below this decrement² the full Newton step is taken without a line search (quadratic region)
_MAX_PASSES = 200
_SLICE = 16_384  # rows per slice of a block


def folds_from_hash(v: np.ndarray, k: int) -> np.ndarray:
    """The fold of each row from its hash.

    Parameters
    ----------
    v : ndarray of shape (n,)
        Per-row numbers in [0, 1) (a seeded row hash).
    k : int
        The number of folds.

    Returns
    -------
    ndarray of shape (n,)
        ``floor(v·k)`` as floats (a column of a Dask block), in ``0..k-1``.
    """
    return np.minimum(np.floor(np.asarray(v, dtype=float) * k), k - 1.0)


def _losses(m: np.ndarray):
    """``(ℓ, ℓ', ℓ'')`` of ``ℓ(m) = log(1 + exp(-m))`` (stable)."""
    e = np.exp(-np.abs(m))
    l0 = np.maximum(-m, 0.0) + np.log1p(e)
    p = 1.0 / (1.0 + e)  # σ(|m|)
    sig_neg = np.where(m >= 0, e * p, p)  # σ(-m)
    return l0, -sig_neg, sig_neg * (1.0 - sig_neg)


def memory_reducer(X: np.ndarray, y01: np.ndarray, fold: np.ndarray) -> Callable:
    """The passes of :func:`penalised_logistic_cv` over rows in memory: one block.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y01 : ndarray of shape (n,)
        Labels; positive values are the positive class.
    fold : ndarray of shape (n,)
        The fold of each row.

    Returns
    -------
    callable
        ``reduce(fn, size) = fn(X, ye, fold)`` with ``ye`` in ±1.
    """
    X = np.asarray(X, dtype=float)
    ye = np.where(np.asarray(y01, dtype=float) > 0, 1.0, -1.0)
    fold = np.asarray(fold, dtype=float)
    return lambda fn, size: np.asarray(fn(X, ye, fold), dtype=float).reshape(size)


def dask_reducer(X: Any, y: Any, fold: Any) -> Callable:
    """The passes of :func:`penalised_logistic_cv` over Dask arrays: one reduction per call.

    Parameters
    ----------
    X : dask array of shape (n, p)
        One chunk across columns.
    y : dask array of shape (n,)
        Labels, row blocks matching X's; positive values are the positive class.
    fold : dask array of shape (n,)
        The fold of each row, row blocks matching X's.

    Returns
    -------
    callable
        ``reduce(fn, size)``: Σ over the row blocks of ``fn(X_b, ye_b, fold_b)`` (``ye`` in ±1), a vector of
        ``size``, in one pass; the sums are added in a fixed tree, so the bits do not depend on the workers.
    """

    def reduce(fn: Callable, size: int) -> np.ndarray:
        import dask

        def block(xb, yb, fb):
            ye = np.where(np.asarray(yb, dtype=float).reshape(-1) > 0, 1.0, -1.0)
            out = fn(np.asarray(xb, dtype=float), ye, np.asarray(fb, dtype=float).reshape(-1))
            return np.asarray(out, dtype=float).reshape(1, size)

        (out,) = dask.compute(_per_block(block, X, y, fold, size).sum(axis=0))
        return np.asarray(out, dtype=float).reshape(size)

    return reduce


def _sums(mean, sd, thetas, folds_of, order):
    """The block function of one pass: per problem ``[n_train, Σ ℓ train, Σ ℓ fold, grad (d), Hessian (d²)]``."""
    d = len(mean) + 1
    width = 3 + (d if order else 0) + (d * d if order > 1 else 0)

    def fn(X, ye, fold):
        out = np.zeros((len(thetas), width))
        for s in range(0, X.shape[0], _SLICE):  # row slices: the temporaries stay O(slice x problems)
            sl = slice(s, s + _SLICE)
            D = np.empty((len(ye[sl]), d))
            D[:, 0] = 1.0
            D[:, 1:] = (X[sl] - mean) / sd
            M = ye[sl, None] * (D @ thetas.T)  # rows x problems
            l0, l1, l2 = _losses(M)
            for j, k in enumerate(folds_of):
                tr = fold[sl] != k  # the problem's training rows (every row for k = -1)
                w = tr.astype(float)
                out[j, 0] += w.sum()
                out[j, 1] += l0[:, j] @ w
                out[j, 2] += l0[~tr, j].sum()
                if order:
                    out[j, 3 : 3 + d] += D.T @ (l1[:, j] * ye[sl] * w)
                if order > 1:
                    out[j, 3 + d :] += ((D.T * (l2[:, j] * w)) @ D).ravel()
        return out.ravel()

    return fn, width


def penalised_logistic_cv(
    reduce: Callable, mean: np.ndarray, sd: np.ndarray, n_folds: int, lambdas: Any = None, *, func: str = "audit"
) -> dict:
    """The penalty by ``n_folds``-fold cross-validated log loss, and the fit on every row at that penalty.

    Parameters
    ----------
    reduce : callable
        ``reduce(fn, size)``: Σ over the row blocks of ``fn(X_b, ye_b, fold_b)`` (:func:`memory_reducer`,
        :func:`dask_reducer`); ``ye`` in ±1, ``fold`` in ``0..n_folds-1``.
    mean, sd : ndarray of shape (p,)
        The standardisation of the columns (the class's: mean and population sd of the rows).
    n_folds : int
    lambdas : array-like, default=None
        The penalties; None: ``LOGISTIC_CV_LAMBDAS``.
    func : str
        The function named in errors.

    Returns
    -------
    dict
        ``lambda`` (chosen), ``norm`` (``||β̃||²`` of the fit on every row at that λ: the class's norm bound),
        ``theta`` (that fit), ``cv_loss`` (mean over folds of the fold's mean log loss at that λ), ``cv_losses``
        (per λ), ``lambdas``, ``fold_sizes``, ``passes``, ``converged``.
    """
    lams = np.asarray(LOGISTIC_CV_LAMBDAS if lambdas is None else lambdas, dtype=float)
    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    K, d = int(n_folds), len(mean) + 1
    folds = np.arange(-1, K)  # -1: every row
    probs = [(a, k) for a in range(len(lams)) for k in folds]
    J = len(probs)
    pen = np.ones(d)
    pen[0] = 0.0
    lam_of = np.array([lams[a] for a, _ in probs])
    theta = np.zeros((J, d))
    cand = theta.copy()
    f = np.full(J, np.inf)
    g = np.zeros((J, d))
    step = np.ones(J)
    direction = np.zeros((J, d))
    held = np.full(J, np.nan)
    dec = np.full(J, np.inf)  # the Newton decrement² at the accepted point
    n_tr = np.zeros(J)
    running = np.ones(J, dtype=bool)
    passes = 0
    while running.any() and passes < _MAX_PASSES:
        idx = np.flatnonzero(running)
        fn, width = _sums(mean, sd, cand[idx], [probs[j][1] for j in idx], 2)
        vals = reduce(fn, len(idx) * width).reshape(len(idx), width)
        passes += 1
        if passes == 1:
            sizes = vals[: K + 1, 0]
            empty = [k for k in range(K) if sizes[0] - sizes[k + 1] < 1]
            if empty:
                raise RashomonInputError(
                    f"The 'cv' parameter of {func} must leave rows in every fold of the training part (folds from "
                    f"a row hash). Got cv={K} with {len(empty)} empty fold(s) of {int(sizes[0])} rows instead; "
                    "pass a smaller cv."
                )
        for row, j in zip(vals, idx):
            n = row[0]
            n_tr[j] = n
            th = cand[j]
            fc = row[1] / n + 0.5 * lam_of[j] * float(th[1:] @ th[1:])
            slope = float(g[j] @ direction[j])
            if np.isfinite(f[j]) and not (fc <= f[j] + 1e-4 * step[j] * slope or dec[j] < _QUADRATIC):
                step[j] *= 0.5
                if step[j] < 1e-12:
                    running[j] = False
                else:
                    cand[j] = theta[j] + step[j] * direction[j]
                continue
            theta[j], f[j] = th, fc
            g[j] = row[3 : 3 + d] / n + lam_of[j] * pen * th
            H = row[3 + d :].reshape(d, d) / n
            H = 0.5 * (H + H.T) + np.diag(lam_of[j] * pen)
            k = probs[j][1]
            held[j] = row[2] / (n_tr[probs[j][0] * (K + 1)] - n) if k >= 0 else np.nan
            try:
                direction[j] = -np.linalg.solve(H, g[j])
            except np.linalg.LinAlgError:
                direction[j] = -np.linalg.lstsq(H, g[j], rcond=None)[0]
            step[j] = 1.0
            new = -float(g[j] @ direction[j])
            if new <= _DECREMENT or (dec[j] < _QUADRATIC and new >= dec[j]):  # converged, or at rounding level
                running[j] = False
            else:
                cand[j] = theta[j] + direction[j]
            dec[j] = new
    cv_losses = np.array([np.mean([held[a * (K + 1) + 1 + k] for k in range(K)]) for a in range(len(lams))])
    best = int(np.argmin(cv_losses))
    full = theta[best * (K + 1)]
    return {
        "lambda": float(lams[best]),
        "norm": float(full[1:] @ full[1:]),
        "theta": full.copy(),
        "cv_loss": float(cv_losses[best]),
        "cv_losses": cv_losses,
        "lambdas": lams,
        "fold_sizes": [int(n_tr[0] - n_tr[k + 1]) for k in range(K)],
        "passes": passes,
        "converged": not running.any(),
    }
