"""Brute-force references: plain Python loops over all pairs, written independently of rashomon."""

import numpy as np


def switched_rows(X, group):
    """All n(n-1) switched rows (x1_i, x2_j), i != j, built in a Python loop, with the y index j."""
    n = X.shape[0]
    rows, js = [], []
    for i in range(n):
        for j in range(n):
            if i != j:
                r = X[j].copy()
                for g in group:
                    r[g] = X[i, g]
                rows.append(r)
                js.append(j)
    return np.array(rows), np.array(js)


def brute_e_switch(predict, loss_rows, X, y, group):
    rows, js = switched_rows(X, group)
    preds = predict(rows)
    total = 0.0
    for k in range(len(js)):
        total += loss_rows(y[js[k]], preds[k])
    return total / len(js)


def brute_e_divide(predict, loss_rows, X, y, group):
    n = X.shape[0]
    h = n // 2
    total = 0.0
    for i in range(h):
        a = X[i].copy()
        b = X[i + h].copy()
        for g in group:
            a[g] = X[i + h, g]
            b[g] = X[i, g]
        total += loss_rows(y[i], predict(a[None])[0]) + loss_rows(y[i + h], predict(b[None])[0])
    return total / (2 * h)


def margin_loss(m, name="logistic"):
    """The logistic loss log(1 + e^-m) or the hinge max(0, 1 - m) of margins m, from their definitions."""
    return np.logaddexp(0.0, -m) if name == "logistic" else np.maximum(0.0, 1.0 - m)


def three_param_data(seed=0, n=70):
    """Two correlated rounded features and a logistic label: with an intercept, the 3-parameter classifier sets of
    the margin tests."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 1)
    X[:, 1] += 0.5 * X[:, 0]
    y = (X @ [1.0, 0.3] + rng.logistic(size=n) > 0).astype(float)
    return X, y
