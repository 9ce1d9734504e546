"""Exact e_switch of a tree ensemble on one feature by following each row's prediction along that feature.

For a row j (its other features x2_j fixed), the ensemble's raw output ``v ↦ Σ_t f_t(v, x2_j)`` is a
step function of the switched value v, constant on the threshold cells of :mod:`._tree_cells`.
Only the *occupied* cells (those holding some x1_i) matter. Each tree's pieces ``[lo, hi) ↦ leaf
value`` for row j are found either by walking the occupied cells left to right with one
``apply`` per piece (scikit-learn trees: a leaf's box gives the range of cells it covers, so the
next query starts where the leaf ends), or by a vectorised walk of all trees that follows both
branches at splits on the switched feature (histogram gradient boosting). The pieces are added as
``+value`` at ``lo`` and ``−value`` at ``hi`` and summed along the cells, giving every row's
output at every occupied cell, and

``Σ_{i≠j} L(y_j, f(x1_i, x2_j)) = Σ_cells count(cell) · L(y_j, f(cell, x2_j)) − L(y_j, f(x_j))``.

The cost is one tree lookup per piece (tens per tree and row for a deep forest, a few for
boosting) instead of a full ensemble prediction per (cell, row). Leaf values are put on a
fixed-point grid (integers in float64, all partial sums below 2**52) so each ``+value``/``−value``
pair cancels exactly: a class no tree predicts keeps probability exactly 0.

The raw output is turned into the response as the model does (mean of the trees for forests,
``init + learning_rate · Σ`` for gradient boosting, scikit-learn's own inverse link or
``predict_proba`` of the model's loss for boosting). Safety net: the response each row gets back
at its own value must equal the model's own prediction for that row (relative 1e-9), else None is
returned and the caller uses the threshold-cell path. Classifiers only through ``predict_proba``
(a label from an argmax could flip on a rounding-level tie); one switched feature only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..utils.losses import Predictor
from ._tree_cells import _GB, _HGB, _SKLEARN_TREES, _is_sklearn_class, tree_thresholds

__all__ = ["forest_path_e_switch"]

# (left, right, feature (-1 at leaves), threshold, values of shape (n_nodes, K), scikit-learn Tree or None)
Tree = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]


def _sk_tree(t: Any, values: np.ndarray) -> Tree:
    left = t.children_left.astype(np.intp)
    feat = np.where(left < 0, -1, t.feature).astype(np.intp)
    return left, t.children_right.astype(np.intp), feat, t.threshold, values, t


def _spec(estimator: Any, predictor: Predictor, X: np.ndarray) -> tuple[list[Tree], np.ndarray, Callable, str] | None:
    """Trees with their (scaled, centred) leaf values, the constant, the response map and the comparison rule."""
    from sklearn.base import is_classifier, is_regressor

    proba = predictor.method_name == "predict_proba"
    if not ((is_regressor(estimator) and predictor.method_name == "predict") or (is_classifier(estimator) and proba)):
        return None
    if getattr(estimator, "n_outputs_", 1) != 1:
        return None
    if _is_sklearn_class(estimator, _SKLEARN_TREES):
        ests = [estimator] if hasattr(estimator, "tree_") else list(estimator.estimators_)
        T = len(ests)
        trees, const = [], np.zeros(len(estimator.classes_) if proba else 1)
        for e in ests:
            v = e.tree_.value[:, 0, :]
            if proba:
                v = v[:, : len(estimator.classes_)]
                norm = v.sum(axis=1, keepdims=True)
                norm[norm == 0.0] = 1.0
                v = v / norm / T
                trees.append(_sk_tree(e.tree_, v))
            else:
                v = v[:, :1] / T
                const = const + v[0]
                trees.append(_sk_tree(e.tree_, v - v[0]))
        return trees, const, (lambda raw: raw) if proba else (lambda raw: raw[:, 0]), "float32"
    if _is_sklearn_class(estimator, _GB):
        init = estimator.init_
        if isinstance(init, str):
            const = np.zeros(estimator.estimators_.shape[1])
        else:
            row = X[:1] if not hasattr(estimator, "feature_names_in_") else _frame(X[:1], estimator.feature_names_in_)
            const = np.asarray(estimator._raw_predict_init(row), dtype=float)[0]
        K = estimator.estimators_.shape[1]
        trees = []
        for stage in estimator.estimators_:
            for k, e in enumerate(stage):
                v = np.zeros((e.tree_.node_count, K))
                v[:, k] = estimator.learning_rate * e.tree_.value[:, 0, 0]
                trees.append(_sk_tree(e.tree_, v))
        finish = _boost_finish(estimator, proba, link=False)
        return trees, const, finish, "float32"
    if _is_sklearn_class(estimator, _HGB):
        if getattr(estimator, "_preprocessor", None) is not None:
            return None
        K = estimator.n_trees_per_iteration_
        trees = []
        for it in estimator._predictors:
            for k, pred in enumerate(it):
                nodes = pred.nodes
                if np.any(nodes["is_categorical"] & (nodes["is_leaf"] == 0)):
                    return None
                v = np.zeros((len(nodes), K))
                v[:, k] = nodes["value"]
                leaf = nodes["is_leaf"] != 0
                left = np.where(leaf, -1, nodes["left"]).astype(np.intp)
                feat = np.where(leaf, -1, nodes["feature_idx"]).astype(np.intp)
                trees.append((left, nodes["right"].astype(np.intp), feat, nodes["num_threshold"], v, None))
        const = np.asarray(estimator._baseline_prediction, dtype=float).reshape(-1)
        return trees, const, _boost_finish(estimator, proba, link=True), "float64"
    return None


def _frame(rows: np.ndarray, names: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(rows, columns=list(names))


def _boost_finish(estimator: Any, proba: bool, link: bool) -> Callable:
    loss = estimator._loss

    def finish(raw: np.ndarray) -> np.ndarray:
        r = raw[:, 0] if raw.shape[1] == 1 else raw
        if proba:
            return loss.predict_proba(r)
        return loss.link.inverse(r) if link else r

    return finish


def _node_cells(tree: Tree, k: int, T_k: np.ndarray, occ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Range [lo, hi) of occupied cells (indices into ``occ``) of feature k admitted by every node's box."""
    left, right, feat, thr = tree[:4]
    lo, hi = np.zeros(len(left), dtype=np.intp), np.full(len(left), len(occ), dtype=np.intp)
    frontier = np.zeros(1, dtype=np.intp)
    while frontier.size:
        inner = frontier[feat[frontier] >= 0]
        lc, rc = left[inner], right[inner]
        lo[lc], hi[lc], lo[rc], hi[rc] = lo[inner], hi[inner], lo[inner], hi[inner]
        onk = feat[inner] == k
        # a split x <= T_k[m] sends cells 0..m left: the occupied cells below index cut go left
        cut = np.searchsorted(occ, np.searchsorted(T_k, thr[inner[onk]], side="left") + 1, side="left")
        hi[lc[onk]] = np.minimum(hi[inner[onk]], cut)
        lo[rc[onk]] = np.maximum(lo[inner[onk]], cut)
        frontier = np.concatenate([lc, rc])
    return lo, hi


def _apply_steps(trees, qvals, spans, Xb: np.ndarray, k: int, rep: np.ndarray, n_occ: int):
    """Pieces of every scikit-learn tree for every row of ``Xb`` (float32): walk the occupied cells of
    feature k left to right, one ``apply`` per piece: (row, lo, hi, values)."""
    rows, los, his, vals = [], [], [], []
    B = Xb.shape[0]
    for tree, values, (_, hi_node) in zip(trees, qvals, spans):
        act, pos = np.arange(B), np.zeros(B, dtype=np.intp)
        while act.size:
            Xq = Xb[act]
            Xq[:, k] = rep[pos]
            leaf = tree[5].apply(Xq)
            h = hi_node[leaf]
            rows.append(act)
            los.append(pos)
            his.append(h)
            vals.append(values[leaf])
            more = h < n_occ
            act, pos = act[more], h[more]
    return np.concatenate(rows), np.concatenate(los), np.concatenate(his), np.concatenate(vals)


def _stack(trees, qvals, spans):
    """All trees as one node table (global node ids) and the roots."""
    off = np.r_[0, np.cumsum([len(t[0]) for t in trees])[:-1]].astype(np.intp)
    left = np.concatenate([np.where(t[0] >= 0, t[0] + o, -1) for t, o in zip(trees, off)])
    right = np.concatenate([np.where(t[0] >= 0, t[1] + o, -1) for t, o in zip(trees, off)])
    cat = np.concatenate
    return (
        left,
        right,
        cat([t[2] for t in trees]),
        cat([t[3] for t in trees]).astype(np.float64),
        cat(qvals),
        cat([s[0] for s in spans]),
        cat([s[1] for s in spans]),
        off,
    )


def _walk(table, Xb: np.ndarray, k: int):
    """Pieces of every tree for every row of ``Xb`` by a vectorised walk of all trees at once that
    follows both branches at splits on k: (row, lo, hi, values)."""
    left, right, feat, thr, values, lo_node, hi_node, roots = table
    B, p = Xb.shape
    Xf = Xb.ravel()
    r, node = np.repeat(np.arange(B), len(roots)), np.tile(roots, B)
    out = []
    while r.size:
        f = feat[node]
        leaf = f < 0
        if leaf.any():
            out.append((r[leaf], node[leaf]))
            r, node, f = r[~leaf], node[~leaf], f[~leaf]
        onk = f == k
        # rows follow predict at other splits, and both children at splits on k
        nxt = np.where(Xf[r * p + f] <= thr[node], left[node], right[node])
        both = np.flatnonzero(onk)
        if both.size:
            r = np.concatenate([r, r[both]])
            node = np.concatenate([np.where(onk, left[node], nxt), right[node[both]]])
            keep = lo_node[node] < hi_node[node]
            r, node = r[keep], node[keep]
        else:
            node = nxt
    rows, nodes = (np.concatenate(a) for a in zip(*out))
    return rows, lo_node[nodes], hi_node[nodes], values[nodes]


def forest_path_e_switch(
    estimator: Any,
    predictor: Predictor,
    X: np.ndarray,
    y_enc: np.ndarray,
    group: tuple[int, ...],
    prediction: np.ndarray,
    memory_limit: int,
) -> float | None:
    """Exact e_switch of a scikit-learn tree ensemble on one feature (module notes), or None if not applicable."""
    if len(group) != 1 or predictor.is_callable:
        return None
    info = tree_thresholds(estimator, X.shape[1])
    if info is None:
        return None
    spec = _spec(estimator, predictor, X)
    if spec is None:
        return None
    trees, const, finish, rule = spec
    k = group[0]
    T_k = info[0][k]
    Xr = np.ascontiguousarray(X, dtype=np.float32) if rule == "float32" else X
    cell = np.searchsorted(T_k, Xr[:, k].astype(np.float64), side="left")
    occ, first, own, counts = np.unique(cell, return_index=True, return_inverse=True, return_counts=True)
    own = own.ravel()
    n_occ = len(occ)
    rep = Xr[first, k]
    spans = [_node_cells(t, k, T_k, occ) for t in trees]
    K = trees[0][4].shape[1]
    n = X.shape[0]
    pred = np.asarray(prediction, dtype=float)
    atol = 1e-12 * (1.0 + float(np.max(np.abs(pred))))
    use_apply = trees[0][5] is not None
    # Leaf values on a fixed-point grid (integers held in float64, all partial sums below 2**52): the
    # +value / -value of a piece then cancel exactly, so a class no tree predicts stays exactly 0
    # (log-loss clips it as the model's own output would be clipped), at a cost of ~trees * 2**-52.
    vmax = max(float(np.max(np.abs(t[4]))) for t in trees) or 1.0
    scale = 2.0 ** (52 - int(np.ceil(np.log2(2 * len(trees) * vmax))) - 1)
    qvals = [np.round(t[4] * scale) for t in trees]
    total = 0.0
    pieces = 8.0 * len(trees)  # per row; re-estimated after each block
    cnt = counts.astype(float)
    table = None if use_apply else _stack(trees, qvals, spans)
    j0 = 0
    while j0 < n:
        # rows per block: the dense (B, n_occ + 1, K) outputs and the pieces (row, lo, hi, K values,
        # keys and weights); losses are then taken a few rows at a time
        per_row = 8 * ((n_occ + 1) * K + pieces * (6 + 3 * K))
        j1 = min(n, j0 + int(max(1, memory_limit // 2 // per_row)))
        b = j1 - j0
        if use_apply:
            rows, lo, hi, vals = _apply_steps(trees, qvals, spans, Xr[j0:j1], k, rep, n_occ)
        else:
            rows, lo, hi, vals = _walk(table, Xr[j0:j1], k)
        pieces = len(rows) / b
        keys = np.concatenate([rows * (n_occ + 1) + lo, rows * (n_occ + 1) + hi])
        del rows, lo, hi
        V = np.empty((b, n_occ + 1, K))
        for c in range(K):
            d = np.bincount(keys, weights=np.concatenate([vals[:, c], -vals[:, c]]), minlength=b * (n_occ + 1))
            V[:, :, c] = d.reshape(b, n_occ + 1)
        del keys, vals, d
        np.cumsum(V, axis=1, out=V)
        V /= scale
        V += const
        if not np.allclose(finish(V[np.arange(b), own[j0:j1]]), pred[j0:j1], rtol=1e-9, atol=atol):
            return None
        step = max(1, (1 << 20) // (n_occ + 1))
        for s in range(0, b, step):
            t = min(b, s + step)
            losses = predictor.losses_from(
                np.repeat(y_enc[j0 + s : j0 + t], n_occ), finish(V[s:t, :n_occ].reshape((t - s) * n_occ, K))
            )
            total += float(np.sum(losses.reshape(t - s, n_occ) @ cnt))
        j0 = j1
    diag = float(np.sum(predictor.losses_from(y_enc, prediction)))
    return (total - diag) / (n * (n - 1))
