"""The upper hull behind the slab bounds (``._slabs.upper_hull``) against a brute-force vertex test, on the rows the
two vertex searches (removal rounds, monotone chain) each take: every row strictly concave, few rows, many rows."""

import numpy as np
import pytest

from rashomon.sets.margin._slabs import _ROUNDS_ROWS, _equal_x_max, upper_hull


def _brute_vertices(x, f):
    """Indices of the upper hull's vertices of one row (distinct abscissae): point i is a vertex iff it lies strictly
    above the chord of every pair of points on either side of it."""
    K = len(x)
    out = [0]
    for i in range(1, K - 1):
        ok = True
        for p in range(i):
            for q in range(i + 1, K):
                chord = f[p] + (f[q] - f[p]) * (x[i] - x[p]) / (x[q] - x[p])
                if not f[i] > chord + 1e-12 * (1.0 + abs(chord)):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            out.append(i)
    return out + [K - 1]


@pytest.mark.parametrize("n", [1, 7, _ROUNDS_ROWS + 20])
@pytest.mark.parametrize("shape", ["noise", "concave", "convex"])
def test_upper_hull_equals_brute_force(n, shape):
    rng = np.random.default_rng(n + len(shape))
    K = 13
    X = np.sort(rng.uniform(-2, 2, size=(n, K)), axis=1)
    if shape == "noise":
        F = rng.normal(size=(n, K))
    elif shape == "concave":  # most rows their own hull (no vertex search), a few perturbed
        F = -(X**2)
        F[::3] += 0.5 * rng.normal(size=F[::3].shape)
    else:
        F = X**2 + 1e-3 * rng.normal(size=(n, K))
    x0, f0, sl = upper_hull(X, F)
    Fm = _equal_x_max(X, F)
    for j in range(n):
        v = _brute_vertices(X[j], Fm[j])
        P = len(v) - 1
        # piece i joins vertices i and i + 1; past the last piece the last one repeats
        assert np.array_equal(x0[j, :P], X[j, v[:-1]])
        assert np.allclose(f0[j, :P], Fm[j, v[:-1]])
        assert np.allclose(sl[j, :P], np.diff(Fm[j, v]) / np.diff(X[j, v]))
        assert np.all(x0[j, P:] == x0[j, P - 1]) and np.all(sl[j, P:] == sl[j, P - 1])
        # the least concave majorant: above every point, through every vertex
        vals = (f0[j][None, :] + sl[j][None, :] * (X[j][:, None] - x0[j][None, :])).min(axis=1)
        assert np.all(vals >= Fm[j] - 1e-12)
        assert np.allclose(vals[v], Fm[j, v])
