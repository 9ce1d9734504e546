"""The logistic class on Dask: the classifier set fitted by Newton passes over the rows.

``RashomonSet(LogisticModelClass(norm_bound=r), ε).fit(X, y)`` with X a Dask array or DataFrame and y in
{0, 1} or {-1, +1} never holds the rows:

1. **one pass** summarises the rows of each class apart (``block_statistics`` of the rows with ``y > 0`` and of
   the others, merged exactly): the standardisation (mean and sd of every column), the label check and the class means of
   the design that bound the intercept (Jensen's interval of :func:`rashomon.sets.margin.MarginSet.fit`);
2. θ_min by the **same projected Newton** as in memory (:class:`~rashomon.solvers.SmoothBallProgram`), whose
   oracle is **one pass per call**: every partition returns its sums of the loss, the gradient and the Hessian
   (``Σ ℓ(m_i)``, ``Σ ℓ'(m_i) y_i d_i``, ``Σ ℓ''(m_i) d_i d_i'``), O(d²) each, added in a fixed tree;
3. e_min and the reference's loss from one more pass; e_null (the entropy of the base rate) and ε_abs from the
   class counts, as in memory;
4. when the ball does not bind at θ_min, the norm bound is tightened to the bound certified from the
   self-concordant minorant around θ_min (:func:`rashomon.model_classes.norm_bounds.margin_norm_bound`), one pass
   per step of its fixed point.

Every pass is a ``dask.array`` reduction on whatever scheduler is active (a ``distributed.Client`` if one
exists, threads otherwise); the graph does not depend on the number of workers, so neither do the bits. With
other partitions only the order of the sums changes (agreement to rounding, about 1e-15 relative).

The fitted set keeps O(d²) state; :class:`DaskMarginRows` stands for its rows and answers what needs them with
a clear error naming the in-memory route.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...utils.validation import RashomonInputError
from .._row_statistics import RowStatistics, block_statistics, merge_statistics, packed_size
from ._dask_inputs import _merge_halves, _per_block, _reduce_rows

__all__ = ["DaskMarginRows", "fit_dask_margin", "is_dask_margin"]


def _derivs(loss, m):
    """``(ℓ, ℓ', ℓ'')`` of ``s·softplus((c - m)/s)`` with one exponential (the in-memory engine's formulas)."""
    u = (loss.c - m) / loss.s
    e = np.exp(-np.abs(u))
    inv = 1.0 / (1.0 + e)
    ei = e * inv
    return loss.s * (np.maximum(u, 0.0) + np.log1p(e)), -np.where(u >= 0, inv, ei), ei * inv / loss.s


class DaskMarginRows:
    """The rows of a classifier set fitted on Dask input: the dask arrays and the passes over them.

    Attributes
    ----------
    X, y : dask arrays (X with one chunk across columns, y the raw labels).
    n_rows, n_positive : int
    shape : tuple of int
        ``(n_rows, n_features)``, like the array it replaces.
    """

    def __init__(self, X: Any, y: Any, n_rows: int, n_positive: int, columns: list[str] | None, func: str):
        self.X, self.y, self.columns, self.func = X, y, columns, func
        self.n_rows, self.n_positive = int(n_rows), int(n_positive)
        self.shape = (self.n_rows, int(X.shape[1]))
        self.par: Any = None
        self.zbar_pos = self.zbar_neg = np.zeros(0)  # the class means of the design's features
        self.zero_label = 0.0  # the label of the negative class: 0 for {0, 1} labels, -1 for ±1

    def __repr__(self) -> str:
        return f"DaskMarginRows(n_rows={self.n_rows}, n_features={self.shape[1]})"

    def _raw_rows(self, *_: Any, **__: Any):
        raise RashomonInputError(
            "This RashomonSet was fitted on Dask input with a classifier class and keeps O(d²) state, not the rows: "
            "model_class_reliance (MCR), envelope, prediction_range, multiplicity, disparity_range, pd_band, sample "
            "and reweighted need every row at once (no certified method on O(d²) statistics). Compute an in-memory sample (X.compute(), y.compute()) and fit the set in memory for them."
        )

    __array__ = __getitem__ = __iter__ = __len__ = _raw_rows

    # ------------------------------------------------------------------ passes
    def reduce(self, fn, size: int) -> np.ndarray:
        """``Σ_blocks fn(D_b, ye_b)`` (a vector of ``size``) in one pass; D_b the design rows of the block."""
        import dask

        par = self.par

        def block(xb, yb):
            xb = np.asarray(xb, dtype=float)
            ye = np.where(np.asarray(yb, dtype=float).reshape(-1) > 0, 1.0, -1.0)
            return np.asarray(fn(par.design(xb), ye), dtype=float).reshape(1, size)

        (out,) = dask.compute(_per_block(block, self.X, self.y, None, size).sum(axis=0))
        return np.asarray(out, dtype=float)

    def loss_parts(self, theta: np.ndarray, loss, order: int):
        """``(e,)``, ``(e, ∇e)`` or ``(e, ∇e, ∇²e)`` of the mean smooth loss at θ: one pass."""
        d = len(theta)
        size = 1 + (d if order else 0) + (d * d if order > 1 else 0)

        def fn(D, ye):
            m = ye * (D @ theta)
            l0, l1, l2 = _derivs(loss, m)
            out = [np.array([l0.sum()])]
            if order:
                out.append(D.T @ (l1 * ye))
            if order > 1:
                out.append(((D.T * l2) @ D).ravel())
            return np.concatenate(out)

        v = self.reduce(fn, size) / self.n_rows
        parts: list = [float(v[0])]
        if order:
            parts.append(v[1 : d + 1])
        if order > 1:
            H = v[d + 1 :].reshape(d, d)
            parts.append(0.5 * (H + H.T))
        return tuple(parts)

    def e_orig(self, theta: np.ndarray, loss) -> float:
        """The mean exact loss at θ (one pass)."""

        def fn(D, ye):
            return np.array([float(np.sum(loss.exact(ye * (D @ theta))))])

        return float(self.reduce(fn, 1)[0] / self.n_rows)

    def oracle(self, loss):
        """``f(θ, order)`` of the mean smooth loss for :class:`~rashomon.solvers.SmoothBallProgram`."""
        return lambda theta, order: self.loss_parts(np.asarray(theta, dtype=float), loss, order)


class _RowsNeeded:
    """The set's classifier engine on Dask input: what the in-memory engine would read (the design, the labels)
    belongs to a query that needs every row, answered by the clear error of :class:`DaskMarginRows`."""

    def __init__(self, rows: DaskMarginRows, loss: Any):
        self.rows, self.loss = rows, loss

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        self.rows._raw_rows()


def is_dask_margin(rs: Any) -> bool:
    """True for a classifier set fitted on Dask input."""
    return isinstance(rs.__dict__.get("X_"), DaskMarginRows)


def _check(rs: Any, func: str):
    from ...model_classes import ClassMember, HingeModelClass, LinearModelClass, LogisticModelClass

    mc = rs.model_class
    if isinstance(mc, HingeModelClass) or rs.loss_ == "hinge":
        raise RashomonInputError(
            f"The 'model_class' parameter of {func} must be a LogisticModelClass for a classifier on Dask input: "
            "the hinge loss is not smooth, so its fit needs the smoothing schedule and dual certificate of the "
            "in-memory engine over every row. Got the hinge loss instead; compute() a sample and fit it in memory."
        )
    if not isinstance(mc, LogisticModelClass):
        mc = LogisticModelClass(mc.norm_bound, mc.penalty_matrix, mc.fit_intercept, mc.standardize)
    if mc.norm_bound is None or (isinstance(mc.norm_bound, float) and math.isinf(mc.norm_bound)):
        raise RashomonInputError(
            f"The 'norm_bound' parameter of LogisticModelClass must be a finite number in {func} when X is a Dask "
            "collection (None takes the norm of a cross-validated LogisticRegressionCV and np.inf a bound from "
            "linear programmes over the rows, both in memory). Got "
            f"{mc.norm_bound!r} instead; e.g. fit LogisticModelClass() on an in-memory sample and pass its "
            "parametrization_.r."
        )
    if rs.reference is not None and not isinstance(rs.reference, ClassMember):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be None when X is a Dask collection with a classifier "
            f"class (the reference is the loss minimiser, fitted by the passes). Got {type(rs.reference).__name__}"
            " instead."
        )
    if isinstance(rs.reference, ClassMember):
        raise RashomonInputError(
            f"The 'reference' parameter of {func} must be None when X is a Dask collection with a classifier "
            "class. Got a ClassMember instead; fit the set in memory to use another reference."
        )
    assert isinstance(mc, LinearModelClass)
    return mc


def _statistics(Xd: Any, yd: Any, columns: list[str] | None, func: str):
    """``(rows, mean, var, class means of x (pos, neg))`` from one pass (the rows of each class summarised apart,
    merged exactly); checks the labels."""
    import dask

    if yd is None:
        raise RashomonInputError(f"The 'y' parameter of {func} must be given. Got None instead.")
    K = packed_size(Xd.shape[1])

    def both(xb, yb):
        xb, yb = np.asarray(xb, dtype=float), np.asarray(yb, dtype=float).reshape(-1)
        sel = yb > 0
        return np.concatenate([block_statistics(xb[sel], yb[sel]), block_statistics(xb[~sel], yb[~sel])], axis=1)

    total = _reduce_rows(_per_block(both, Xd, yd, None, 2 * K), _merge_halves(merge_statistics, K))
    (packed,) = dask.compute(total)
    packed = np.asarray(packed)[0]
    n_pos, n_neg = int(round(packed[1])), int(round(packed[K + 1]))
    if min(n_pos, n_neg) < 3:
        raise RashomonInputError(
            f"The 'y' parameter of {func} must contain both classes, with at least 3 rows each on Dask input. "
            f"Got {n_pos} positive and {n_neg} other row(s) instead."
        )
    pos, neg = RowStatistics(packed[:K], func, columns), RowStatistics(packed[K:], func, columns)
    ok_pos = pos.mean[-1] == 1.0 and pos.comoment[-1, -1] == 0.0
    ok_neg = neg.comoment[-1, -1] == 0.0 and neg.mean[-1] in (0.0, -1.0)
    if not (ok_pos and ok_neg):
        raise RashomonInputError(
            f"The 'y' parameter of {func} must hold labels in {{-1, +1}} or {{0, 1}} for a classifier class. Got "
            "other values instead."
        )
    n = n_pos + n_neg
    p = Xd.shape[1]
    mean = (n_pos * pos.mean[:p] + n_neg * neg.mean[:p]) / n
    dp, dn = pos.mean[:p] - mean, neg.mean[:p] - mean
    var = (np.diag(pos.comoment)[:p] + np.diag(neg.comoment)[:p] + n_pos * dp**2 + n_neg * dn**2) / n
    rows = DaskMarginRows(Xd, yd, n, n_pos, columns, func)
    rows.zero_label = float(neg.mean[-1])  # 0 for {0, 1} labels, -1 for ±1
    return rows, mean, var, pos.mean[:p], neg.mean[:p]


def _parametrize(mc: Any, mean, var, columns, func):
    """The class's parametrisation from the column means and variances (what ``parametrize`` does in memory:
    without an intercept nothing is centred and sd is the root mean square)."""
    from ...model_classes import LinearParametrization
    from ...utils.validation import check_model_class_params, check_norm_bound

    check_model_class_params(mc)
    if not mc.fit_intercept:
        var, mean = var + mean**2, np.zeros_like(mean)
    sd = np.sqrt(var)
    if np.any(sd <= 0):
        bad = [columns[i] if columns else i for i in np.where(sd <= 0)[0]]
        raise RashomonInputError(f"The 'X' parameter of {func} has constant (or all-zero) column(s) {bad}; drop them.")
    Ms = mc.standard_penalty(sd)
    ev = np.linalg.eigvalsh(Ms)
    if ev[0] <= 1e-12 * max(ev[-1], 1e-300):
        raise RashomonInputError(
            f"The 'penalty_matrix' parameter of {type(mc).__name__} must be positive definite (a singular penalty "
            "leaves the scores unbounded)."
        )
    r = check_norm_bound(mc.norm_bound, "LinearModelClass")
    if not r > 0:
        raise RashomonInputError(
            f"The norm bound of {func} must be > 0 (got {r!r}); give LinearModelClass a norm_bound."
        )
    info = {"norm_bound": r, "loss": mc.loss}
    par = LinearParametrization(mean, sd, mc.ball(Ms), r, None, info, repr(mc), 1 if mc.fit_intercept else 0)
    par.class_name = repr(mc)
    par.info["margin_loss"] = mc.margin_loss()
    return par


def _intercept_interval(par, rows, zbar_pos, zbar_neg, loss, eps):
    """Jensen's interval of the intercept (:func:`rashomon.sets.margin.MarginSet.fit`) from the class means."""
    if not par.o:
        return np.zeros(0), np.zeros(0)
    Minv = np.linalg.inv(par.B[1:, 1:])
    out = []
    for sign, zbar, k in ((1.0, zbar_pos, rows.n_positive), (-1.0, zbar_neg, rows.n_rows - rows.n_positive)):
        rad = math.sqrt(max(par.r * float(zbar @ Minv @ zbar), 0.0))
        m = loss.inverse(rows.n_rows * eps / k)
        out.append(m - rad if sign > 0 else -m + rad)
    return np.array([out[0]]), np.array([out[1]])


def _minimise(rows, par, loss, zbar_pos, zbar_neg):
    """θ_min and e_min: the projected Newton of the in-memory fit, its oracle one pass per call."""
    from ...solvers import SmoothBallProgram

    d = par.B.shape[0]
    x0 = np.zeros(d)
    n, k = rows.n_rows, rows.n_positive
    if par.o:
        q = k / n
        x0[0] = math.log(q / (1 - q))
    e0 = rows.e_orig(x0, loss)
    lo, hi = _intercept_interval(par, rows, zbar_pos, zbar_neg, loss, e0 * (1 + 1e-9) + 1e-12)
    res = SmoothBallProgram(par.B, par.r, lo, hi, tol=1e-11, max_iter=200).minimize(rows.oracle(loss), x0)
    return res.x, rows.e_orig(res.x, loss), int(res.info.get("iterations", res.info.get("n_iter", 0)) or 0)


def fit_dask_margin(rs: Any, Xd: Any, yd: Any, columns: list[str] | None, sample_weight: Any, func: str) -> Any:
    """The body of :meth:`RashomonSet.fit` for a logistic class on Dask input (see the module docstring): ``Xd``
    and ``yd`` are dask arrays with matching row blocks (X with one chunk across columns)."""
    mc = _check(rs, func)
    if sample_weight is not None:
        raise RashomonInputError(
            f"The 'sample_weight' parameter of {func} is not supported by {type(mc).__name__}. Got a value instead."
        )
    rows, mean, var, xpos, xneg = _statistics(Xd, yd, columns, func)
    par = _parametrize(mc, mean, var, columns, func)
    rows.par = par
    design = lambda v: (v - par.mean) / par.sd  # noqa: E731
    loss = par.info["margin_loss"]
    rows.zbar_pos, rows.zbar_neg = design(xpos), design(xneg)
    theta, e_min, _ = _minimise(rows, par, loss, rows.zbar_pos, rows.zbar_neg)
    labels = np.array([int(rows.zero_label), 1])
    par.classes_ = labels
    if columns is not None:
        rs.feature_names_in_ = np.asarray(columns, dtype=object)
    _install(rs, rows, par, loss, columns, theta, e_min, theta, e_min, func)
    return rs


def _install(rs, rows, par, loss, columns, theta, e_min, theta_ref, e_ref, func) -> None:
    """The fitted attributes of a logistic set on Dask input (the rows' oracle, θ_min, the reference, e_null, ε_abs
    and the share of the explained loss it keeps), then the norm bound tightened: shared by the fit and the fit
    about a given reference."""
    from .._epsilon import epsilon_threshold, explained_share

    rs.n_features_in_ = rows.shape[1]
    rs._columns, rs.X_, rs.y_, rs.sample_weight_ = columns, rows, rows, None
    rs._cache, rs._margin, rs._degenerate = {}, _RowsNeeded(rows, loss), False
    rs.parametrization_ = par
    rs.theta_min_, rs.e_min_ = theta, e_min
    rs.reference_theta_, rs.reference_ = theta_ref, par.estimator(theta_ref)
    rs.e_ref_ = e_ref
    q = rows.n_positive / rows.n_rows
    rs.e_null_ = -sum(v * math.log(v) for v in (q, 1.0 - q) if v > 0) if par.o else math.log(2.0)
    rs.epsilon_abs_ = epsilon_threshold(float(rs.epsilon), rs.epsilon_kind, rs.e_ref_, rs.e_min_, func, rs.e_null_)
    rs.explained_share_ = explained_share(rs.e_min_, rs.e_null_, rs.epsilon_abs_)
    _tighten(rs, rows, loss)
    rows.par = rs.parametrization_


def _tighten(rs, rows, loss) -> None:
    """The in-memory ``tighten_margin`` of the logistic class: r* from the minorant around θ_min, by passes."""
    from .._loss_only import _tightened

    par = rs.parametrization_
    theta = np.asarray(rs.theta_min_, dtype=float)
    if float(theta @ par.B @ theta) >= par.r * (1 - 1e-6):
        return  # the ball binds at the minimiser
    from ._dask_margin_bounds import dask_margin_norm_bound

    r_star = dask_margin_norm_bound(rows, theta, float(rs.epsilon_abs_), par.B, loss)
    requested = par.info.get("norm_bound_requested", par.r)
    if r_star < requested and r_star < par.r:
        new = _tightened(par, r_star)
        new.info["norm_bound_requested"] = requested
        rs.parametrization_ = new
