"""The kept e_switch values of the margin terms (rashomon/sets/margin/_terms.py): a repeated θ returns the value of
a fresh evaluation bit for bit, for each loss and smoothing apart, the store stays bounded, and the value equals
the definition (every pair of rows i != j, row j with row i's value of the feature)."""

import numpy as np

from rashomon.model_classes._classifiers import MarginLoss
from rashomon.sets.margin import _terms
from rashomon.sets.margin._terms import MarginTerms

from ._brute import three_param_data


def test_e_switch_memo_equals_fresh_and_definition():
    X, y01 = three_param_data(seed=4, n=40)
    D = np.column_stack([np.ones(len(X)), X])
    y = np.where(y01 > 0, 1.0, -1.0)
    T = MarginTerms(D, y, np.array([1]))
    rng = np.random.default_rng(0)
    thetas = rng.normal(size=(_terms._MEMO + 5, 3))
    losses = (MarginLoss("logistic"), MarginLoss("hinge", 0.05, 1.0))
    first = {(i, j): T.e_switch(th, L) for i, th in enumerate(thetas) for j, L in enumerate(losses)}
    assert len(T._es_memo) <= _terms._MEMO
    for (i, j), v in first.items():
        fresh = MarginTerms(D, y, np.array([1])).e_switch(thetas[i], losses[j])
        assert T.e_switch(thetas[i], losses[j]) == v == fresh
    th, L = thetas[0], losses[0]
    n = len(y)
    s = D @ th
    sw = s[None, :] + (D[:, 1][:, None] - D[:, 1][None, :]) * th[1]  # [i, j]: row j with row i's value
    Lm = np.logaddexp(0.0, -y[None, :] * sw)
    assert np.isclose(T.e_switch(th, L), (Lm.sum() - np.trace(Lm)) / (n * (n - 1)), rtol=1e-12)
    # the exact and the smooth evaluation of the hinge are kept apart
    H = losses[1]
    assert T.e_switch(th, H, exact=False) >= T.e_switch(th, H) - 1e-15
