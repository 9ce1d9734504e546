"""Group metrics of a Rashomon set's members, as fairlearn defines them, in the form the engines need.

Every metric here is a weighted mean of one value per row over a group's rows (fairlearn's
``MetricFrame(...).by_group``): the row value is the prediction (``mean_prediction``), the residual
``y - prediction`` (``mean_residual``), the loss (``group_loss``), or the decision ``prediction >
threshold`` (``positive_rate``; over the rows with ``y = positive`` for ``true_positive_rate``, the others
for ``false_positive_rate``). A member's prediction on row i is ``P_i θ + p0_i`` (the score of a classifier
class; ``σ`` of it on the probability scale of the logistic class). So, per group g with row weights W_g:

* the prediction and the residual of a regression class (or the score of a classifier) are affine in θ, and
  so is their group mean: the disparity is a linear functional (exact ranges, :mod:`._functional`);
* the squared loss of a group is a quadratic in θ (exact ranges by the γ-search, :mod:`._disparity`);
* everything else is a mean of values each monotone in its row's score, so per-row certified score ranges
  give certified outer bounds (each row at its own extreme), and members give attained inner values.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ...model_classes.quadratics import Quadratic
from ...utils.validation import RashomonInputError
from ._fair_inputs import _aligned, _check_labels

__all__ = ["METRICS", "MetricSpec", "make_spec"]

METRICS = (
    "mean_prediction",
    "mean_residual",
    "group_loss",
    "positive_rate",
    "true_positive_rate",
    "false_positive_rate",
)


class MetricSpec:
    """One metric on the set's rows, per group: evaluation for any members, and its exact forms where it has them.

    Attributes
    ----------
    labels : list
        Group labels (sorted); ``ref`` is the index of the reference group.
    W : ndarray of shape (G, n)
        Row weights of each group's mean (rows sum to 1; zero outside the group or the metric's rows).
    scale : {"prediction", "score", "probability"}
    structure : {"linear", "quadratic", "rowwise"}
    """

    #: Rows solved exactly by the row-wise bound: set by the queries, read with getattr (0 when absent).
    exact_rows: int
    #: Processor seconds per end of the decision rates' branch and bound: set by the queries (0 when absent).
    time_limit: float

    def __init__(self, rs, metric, codes, labels, ref, positive, threshold, scale, func):
        self.metric, self.labels, self.ref, self.scale, self.func = metric, list(labels), int(ref), scale, func
        self.positive, self.threshold = positive, threshold
        self.codes = codes
        self.P, self.p0 = rs.parametrization_.prediction_map(rs.X_)
        y = np.asarray(rs.y_, dtype=float)
        self.y = y
        self.ybin = (y == positive).astype(float) if positive is not None else None
        self.margin = rs.loss_ in ("log_loss", "hinge")
        self.loss = rs.loss_
        n, G = len(y), len(labels)
        w = np.ones(n) if rs.sample_weight_ is None else np.asarray(rs.sample_weight_, dtype=float)
        rows = np.ones(n, dtype=bool)
        if metric == "true_positive_rate":
            rows = y == positive
        elif metric == "false_positive_rate":
            rows = y != positive
        W = np.zeros((G, n))
        for g in range(G):
            m = (codes == g) & rows & (w > 0)
            tot = float(w[m].sum())
            if tot <= 0:
                what = {
                    "true_positive_rate": f" with y = {positive!r}",
                    "false_positive_rate": f" with y != {positive!r}",
                }.get(metric, "")
                raise RashomonInputError(
                    f"The 'sensitive' parameter of {func}: group {labels[g]!r} has no rows{what}, "
                    f"so its {metric} is undefined."
                )
            W[g, m] = w[m] / tot
        self.W = W
        if metric in ("mean_prediction", "mean_residual") and scale in ("prediction", "score"):
            self.structure = "linear"
        elif metric == "group_loss" and not self.margin:
            self.structure = "quadratic"
        else:
            self.structure = "rowwise"

    # ------------------------------------------------------------ row values
    def _target(self):
        return self.ybin if (self.margin or self.scale == "probability") else self.y

    def pred_from_scores(self, S):
        return expit(S) if self.scale == "probability" else S

    def row_values_pred(self, pred, scores=None):
        """Row values (m, n) from predictions on the metric's scale (and the scores, for a classifier's loss)."""
        m = self.metric
        if m == "mean_prediction":
            return pred
        if m == "mean_residual":
            return self._target()[None, :] - pred
        if m == "group_loss":
            if not self.margin:
                return (self.y[None, :] - pred) ** 2
            if scores is None:
                raise RashomonInputError(f"{self.func}: a classifier's group_loss needs scores, not decisions.")
            assert self.ybin is not None  # a margin metric always has its 0/1 labels (set in __init__)
            ypm = 2.0 * self.ybin - 1.0
            marg = ypm[None, :] * scores
            return np.logaddexp(0.0, -marg) if self.loss == "log_loss" else np.maximum(0.0, 1.0 - marg)
        return (pred > self.threshold).astype(float)

    def group_values(self, thetas):
        """Per-group metric of members ``thetas`` (m, d): shape (m, G)."""
        S = np.atleast_2d(thetas) @ self.P.T + self.p0[None, :]
        return self.row_values_pred(self.pred_from_scores(S), S) @ self.W.T

    def group_values_pred(self, pred, scores=None):
        """Per-group metric of one column of predictions (a benchmark), shape (G,)."""
        pred = np.asarray(pred, dtype=float)[None, :]
        sc = None if scores is None else np.asarray(scores, dtype=float)[None, :]
        return (self.row_values_pred(pred, sc) @ self.W.T)[0]

    # ------------------------------------------------------------ exact forms
    def linear_forms(self):
        """``(A, a0)`` with group metric ``m_g(θ) = A_g θ + a0_g`` (structure "linear")."""
        sign = -1.0 if self.metric == "mean_residual" else 1.0
        A = sign * (self.W @ self.P)
        a0 = sign * (self.W @ self.p0)
        if self.metric == "mean_residual":
            a0 = a0 + self.W @ self._target()
        return A, a0

    def quadratic_forms(self):
        """The group squared losses as :class:`Quadratic` forms in θ (structure "quadratic")."""
        out = []
        r = self.y - self.p0
        for Wg in self.W:
            PW = self.P * Wg[:, None]
            out.append(Quadratic(PW.T @ self.P, PW.T @ r, float(Wg @ (r * r))))
        return out

    # ------------------------------------------------------------ outer bounds
    def rowwise_bounds(self, lo_s, hi_s):
        """Certified per-group bounds from per-row certified score bounds (every row value is monotone in its score)."""
        a = self.row_values_pred(self.pred_from_scores(lo_s[None, :]), lo_s[None, :])[0]
        b = self.row_values_pred(self.pred_from_scores(hi_s[None, :]), hi_s[None, :])[0]
        return self.W @ np.minimum(a, b), self.W @ np.maximum(a, b)


def _codes(rs, sensitive, func):
    if isinstance(sensitive, str) or np.isscalar(sensitive):
        cols = list(rs._columns) if rs._columns else []
        if sensitive not in cols:
            raise RashomonInputError(
                f"The 'sensitive' parameter of {func} must be a column name of the data the set "
                f"was fitted on ({cols[:8]}{'...' if len(cols) > 8 else ''}) or an array of one "
                f"group label per row. Got {sensitive!r} instead."
            )
        vals = np.asarray(rs.X_[:, cols.index(sensitive)])
    else:
        vals = _aligned(rs, sensitive, func)
        if vals.ndim != 1 or len(vals) != rs.X_.shape[0]:
            raise RashomonInputError(
                f"The 'sensitive' parameter of {func} must be a column name or a 1-d array of "
                f"{rs.X_.shape[0]} group labels (one per row the set was fitted on). Got shape "
                f"{vals.shape} instead."
            )
        if vals.dtype.kind == "f" and not np.all(np.isfinite(vals)):
            raise RashomonInputError(f"The 'sensitive' parameter of {func} must not contain missing values.")
        _check_labels(vals, sensitive, func)
    labels, codes = np.unique(vals, return_inverse=True)
    if len(labels) < 2:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must have two or more groups. Got one group ({labels[0]!r}) instead."
        )
    if len(labels) > 50:
        raise RashomonInputError(
            f"The 'sensitive' parameter of {func} must be a group label (at most 50 groups). "
            f"Got {len(labels)} distinct values instead (a continuous column?)."
        )
    return codes.ravel(), [v.item() if hasattr(v, "item") else v for v in labels]


def make_spec(rs, sensitive, metric, *, positive, threshold, scale, reference_group, func) -> MetricSpec:
    """Check the arguments of a fairness query and build its :class:`MetricSpec`."""
    from ..margin import margin_set

    rs._check_fitted(func.split(".")[-1])
    if not isinstance(rs.X_, np.ndarray):
        raise RashomonInputError(
            f"{func} needs the set's rows in memory (a set fitted on Dask input keeps only sufficient statistics)."
        )
    ms = margin_set(rs)
    if rs.loss_ != "squared_error" and ms is None:
        raise RashomonInputError(
            f"{func} needs a quadratic class (loss='squared_error') or a classifier class "
            f"(LogisticModelClass, HingeModelClass). Got loss={rs.loss_!r}."
        )
    if metric not in METRICS:
        raise RashomonInputError(
            f"The 'metric' parameter of {func} must be one of {list(METRICS)}. Got {metric!r} instead."
        )
    codes, labels = _codes(rs, sensitive, func)
    ref = 0
    if reference_group is not None:
        if reference_group not in labels:
            raise RashomonInputError(
                f"The 'reference_group' parameter of {func} must be one of the groups {labels}. "
                f"Got {reference_group!r} instead."
            )
        ref = labels.index(reference_group)
    y = np.asarray(rs.y_, dtype=float)
    yvals = np.unique(y)
    logistic = ms is not None and ms.loss.name == "logistic"
    if ms is None:
        if scale not in (None, "prediction"):
            raise RashomonInputError(
                f"The 'scale' parameter of {func} must be None or 'prediction' for a regression "
                f"class. Got {scale!r} instead."
            )
        scale = "prediction"
    else:
        scale = scale or ("probability" if logistic else "score")
        if scale not in ("score", "probability") or (scale == "probability" and not logistic):
            raise RashomonInputError(
                f"The 'scale' parameter of {func} must be 'score'{' or probability' if logistic else ''}"
                f" for {type(rs.model_class).__name__}. Got {scale!r} instead."
            )
        if metric == "mean_residual" and scale == "score":
            raise RashomonInputError(
                f"The 'metric' parameter of {func} is 'mean_residual', which needs probabilities "
                "(LogisticModelClass with scale='probability') or a regression class."
            )
    if ms is not None:
        pos_class = float(yvals.max())  # the classifier classes score the larger label (+1 or 1)
        if positive is not None and float(positive) != pos_class:
            raise RashomonInputError(
                f"The 'positive' parameter of {func} must be the label the class scores "
                f"({pos_class:g}) for {type(rs.model_class).__name__}. Got {positive!r} instead."
            )
        positive = pos_class
    elif positive is None and len(yvals) == 2:
        positive = float(yvals.max())
    elif positive is not None and float(positive) not in set(yvals.tolist()):
        raise RashomonInputError(f"The 'positive' parameter of {func} must be a value of y. Got {positive!r} instead.")
    needs_pos = metric in ("true_positive_rate", "false_positive_rate") or (
        metric == "mean_residual" and ms is not None
    )
    if needs_pos and positive is None:
        raise RashomonInputError(
            f"The 'positive' parameter of {func} must be given for metric={metric!r} when y is "
            "not binary (the label counted as positive)."
        )
    if metric in ("positive_rate", "true_positive_rate", "false_positive_rate"):
        if threshold is None:
            if scale == "prediction" and not set(yvals.tolist()) <= {0.0, 1.0}:
                raise RashomonInputError(
                    f"The 'threshold' parameter of {func} must be given for metric={metric!r} on "
                    "a regression target that is not 0/1 (decisions are prediction > threshold)."
                )
            threshold = 0.0 if scale == "score" else 0.5
        threshold = float(threshold)
        if scale == "probability" and not 0.0 < threshold < 1.0:
            raise RashomonInputError(
                f"The 'threshold' parameter of {func} must be in (0, 1) on the probability scale. "
                f"Got {threshold!r} instead."
            )
    elif threshold is not None:
        raise RashomonInputError(
            f"The 'threshold' parameter of {func} applies to positive_rate, true_positive_rate "
            f"and false_positive_rate only. Got threshold={threshold!r} with metric={metric!r}."
        )
    return MetricSpec(rs, metric, codes, labels, ref, positive, threshold, scale, func)
