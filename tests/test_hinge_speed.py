"""The hinge class's faster pieces against brute-force references.

* The SVM path's exact line search (``_svm_path._line_search``), which sorts only the breakpoints inside a
  bracket of the root, against the root found from every breakpoint sorted (the piecewise-linear derivative
  evaluated at each): equal to 1e-12 relative (both are exact up to rounding of sums over the rows).
"""

import numpy as np
import pytest

from rashomon.model_classes._svm_path import _line_search


def _root_from_all_breakpoints(phi0, dd, u, delta, cw, tau):
    """The root of φ'(t) = φ'(0) + tΔ'Δ - Σ cw δ (h'(u - tδ) - h'(u)) from φ' at every breakpoint (brute force)."""

    def dphi(t):
        return phi0 + t * dd - cw * delta @ (np.clip((u - t * delta) / tau, 0, 1) - np.clip(u / tau, 0, 1))

    nz = delta != 0
    ts = np.concatenate([[0.0], u[nz] / delta[nz], (u[nz] - tau) / delta[nz], [-phi0 / dd]])
    ts = np.unique(ts[ts >= 0])
    vals = np.array([dphi(t) for t in ts])
    j = int(np.argmax(vals >= 0))
    t0, t1 = ts[j - 1], ts[j]
    return t0 - vals[j - 1] * (t1 - t0) / (vals[j] - vals[j - 1])


@pytest.mark.parametrize("seed", range(20))
def test_line_search_equals_the_root_over_every_breakpoint(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    tau = float(10.0 ** rng.uniform(-5, 0))
    u = rng.normal(size=n) * rng.choice([tau, 1.0])
    delta = rng.normal(size=n) * rng.choice([1e-3, 1.0, 10.0])
    delta[rng.random(n) < 0.1] = 0.0
    cw = rng.uniform(0.1, 3.0, size=n) * 10.0 ** rng.uniform(-3, 2)
    dd = float(10.0 ** rng.uniform(-3, 2))
    phi0 = -float(10.0 ** rng.uniform(-3, 2))
    got = _line_search(phi0, dd, u, delta, cw, tau)
    ref = _root_from_all_breakpoints(phi0, dd, u, delta, cw, tau)
    assert abs(got - ref) <= 1e-12 * max(1.0, abs(ref))
