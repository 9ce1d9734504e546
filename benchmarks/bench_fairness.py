"""Fairness over the Rashomon set: COMPAS kernel set (Fisher et al. 2019) and COMPAS two-year logistic set.

    python benchmarks/bench_fairness.py [--figures docs/]

1. The paper's kernel set on the violent decile score (examples/compas_fisher2019.py): the range over the set of the
   mean-score gap African-American - Caucasian (exact, checked against cvxpy/Clarabel and timed beside it), the least
   disparate member's loss and gap, where the COMPAS decile score itself falls, and whether every good model relies
   more on {priors, felony, age} than on {race, sex} (certified lower end of MR(adm) - MR(inadm)) up to which ε.
2. COMPAS two-year recidivism, African-American and Caucasian defendants, logistic set on the features without race:
   the ranges of the positive-rate gap at probability 0.5 and of the mean-probability gap; fairlearn's
   ExponentiatedGradient(LogisticRegression, DemographicParity) beside our least disparate member, timed in one run.
3. Probability-scale bounds that bind (COMPAS two-year at ε = 1 %, Pima by age > 40 at ε = 10 %): certified width /
   attained width of the mean-probability, positive-rate and group log-loss gaps, with wall-clock and CPU seconds;
   the least disparate member against an independent multi-start (SLSQP on gap² from sampled members); both answers
   of ``target=δ``.
4. Positive-rate gaps of both sets with and without the certified branch and bound (``time_limit=``), CPU seconds.
5. ``--only trace``: where the positive-rate gap's truth lies. For each end of both sets, the problem's size and
   the branch and bound's certified bound and best member over processor time (``--trace-time`` seconds per end),
   from the members of the smoothed ascent.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import rashomon
from rashomon.datasets import load_compas, load_compas_fisher2019


def _cvxpy_range(rs, c):
    import cvxpy as cp

    par, eo = rs.parametrization_, rs.e_orig_form_
    lam, U = np.linalg.eigh(0.5 * (eo.Q + eo.Q.T))
    L = U * np.sqrt(np.clip(lam, 0.0, None))
    lamb, Ub = np.linalg.eigh(0.5 * (par.B + par.B.T))
    Lb = Ub * np.sqrt(np.clip(lamb, 0.0, None))
    out = []
    for sign in (1.0, -1.0):
        th = cp.Variable(len(eo.c))
        cons = [cp.sum_squares(L.T @ th) - 2 * eo.c @ th + eo.k <= rs.epsilon_abs_, cp.sum_squares(Lb.T @ th) <= par.r]
        prob = cp.Problem(cp.Minimize(sign * (c @ th)), cons)
        prob.solve(solver="CLARABEL")
        out.append(sign * prob.value)
    return out


def compas_kernel(figures):
    print("== COMPAS, the paper's kernel set (violent decile score; race: 1 = African-American, 0 = Caucasian) ==")
    d = load_compas_fisher2019()
    s = d.settings
    mc = rashomon.KernelModelClass(kernel="rbf", gamma=s["sigma"], alpha=s["n_alpha"], intercept=s["mu"])
    ref = mc.fit_reference(d.X_train, d.y_train)
    rs = rashomon.RashomonSet(mc, 0.1 * s["cv_loss"], epsilon_kind="additive", reference=ref).fit(d.X_test, d.y_test)
    print(
        f"set: e_ref = {rs.e_ref_:.6f}, e_min = {rs.e_min_:.6f}, epsilon_abs = {rs.epsilon_abs_:.6f}, "
        f"{rs.parametrization_.dim} parameters, {len(d.y_test)} held-out rows"
    )
    t = time.perf_counter()
    res = rs.disparity_range("race", "mean_prediction", reference_group=0.0)
    t_ours = time.perf_counter() - t
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    g1, g0 = rs.X_[:, 0] == 1, rs.X_[:, 0] == 0
    c, c0 = P[g1].mean(0) - P[g0].mean(0), p0[g1].mean() - p0[g0].mean()
    t = time.perf_counter()
    theirs = _cvxpy_range(rs, c)
    t_cvx = time.perf_counter() - t
    print(res.to_frame().round(6).to_string(index=False))
    print(
        f"mean-score gap (AA - Caucasian) over the set: [{res.lower[0]:.4f}, {res.upper[0]:.4f}] (exact: "
        f"{bool(res.exact[0])}); reference {res.reference[0]:.4f}"
    )
    print(
        f"cvxpy/Clarabel: [{theirs[0] + c0:.6f}, {theirs[1] + c0:.6f}]; |difference| "
        f"{max(abs(theirs[0] + c0 - res.lower[0]), abs(theirs[1] + c0 - res.upper[0])):.2e}; time ours {t_ours:.2f} s, "
        f"cvxpy {t_cvx:.2f} s (ratio {t_cvx / t_ours:.1f}x)"
    )
    t = time.perf_counter()
    ld = rs.least_disparate(
        "race",
        "mean_prediction",
        reference_group=0.0,
        benchmark=d.y_test.to_numpy(),
        features=[["priors", "felony", "age"], ["race", "sex"]],
    )
    t_ld = time.perf_counter() - t
    print(ld)
    print(ld.to_frame().round(4).to_string(index=False))
    b = ld.benchmark
    print(
        f"the COMPAS decile score's own gap: {b['disparity']:.4f} -> {b['position']} the set's range "
        f"[{b['lower']:.4f}, {b['upper']:.4f}]; more disparate than every good model: "
        f"{b['more_disparate_than_every_member']}"
    )
    fr = ld.frontier
    print(
        f"least loss of a member with zero gap: in [{fr.zero_loss_lower:.6f}, {fr.zero_loss_upper:.6f}] "
        f"({100 * (fr.zero_loss_upper / rs.e_ref_ - 1):+.2f}% of e_ref = {rs.e_ref_:.6f}); least_disparate "
        f"with frontier {t_ld:.1f} s"
    )
    print(fr.to_frame().round(5).to_string(index=False))
    t = time.perf_counter()
    order = rs.reliance_order({"admissible": ["priors", "felony", "age"], "inadmissible": ["race", "sex"]})
    t_o = time.perf_counter() - t
    rd = order.differences[("admissible", "inadmissible")]
    print(rd)
    print(order.relations.drop(columns="note").round(6).to_string(index=False))
    for r in order.relations.itertuples():
        print(
            f"{r.a} > {r.b} for every good model: certified lower end of MR(adm) - MR(inadm) = {r.lower:.4f}; "
            f"holds up to epsilon_abs = {r.critical_epsilon_abs_lower:.5f} (additive epsilon "
            f"{r.critical_epsilon_lower:.5f} = {r.critical_epsilon_lower / s['cv_loss']:.3f} x CV loss; the set's "
            f"is 0.1 x), fails at {r.critical_epsilon_abs_upper:.5f} (a member with MR(adm) <= MR(inadm)) "
            f"{r.note}"
        )
    ra = rs.model_class_reliance(["priors", "felony", "age"])
    ri = rs.model_class_reliance(["race", "sex"])
    print(
        f"(from the two MCR intervals alone: MCR-(adm) - MCR+(inadm) = {ra.lower - ri.upper:.4f}); order with "
        f"critical epsilon {t_o:.1f} s"
    )
    if figures:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        fr.plot(ax=axes[0])
        axes[0].set_title("COMPAS kernel set: least |mean-score gap| vs ε", fontsize=10)
        order.plot(ax=axes[1])
        fig.tight_layout()
        fig.savefig(f"{figures}/fairness_compas_kernel.png", dpi=110)
        plt.close(fig)


def _compas_two_year():
    """COMPAS two-year recidivism, African-American and Caucasian defendants, features without race."""
    c = load_compas(races=("African-American", "Caucasian"))
    X = pd.DataFrame(
        {
            "age": c["age"].astype(float),
            "priors_count": c["priors_count"].astype(float),
            "male": (c["sex"] == "Male").astype(float),
            "felony": (c["c_charge_degree"] == "F").astype(float),
            "juv_fel_count": c["juv_fel_count"].astype(float),
            "juv_misd_count": c["juv_misd_count"].astype(float),
            "juv_other_count": c["juv_other_count"].astype(float),
        }
    )
    y = c["two_year_recid"].astype(float).to_numpy()
    return X, y, c["race"].to_numpy()


def compas_logistic(figures):
    from fairlearn.metrics import demographic_parity_difference
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    print("\n== COMPAS two-year recidivism, logistic set (features without race; African-American vs Caucasian) ==")
    X, y, race = _compas_two_year()
    t = time.perf_counter()
    rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), 0.01).fit(X, y)
    t_fit = time.perf_counter() - t
    print(
        f"set: {len(y)} rows, log loss e_ref = {rs.e_ref_:.5f}, epsilon = 1% (epsilon_abs = {rs.epsilon_abs_:.5f}); "
        f"fit {t_fit:.2f} s"
    )
    t = time.perf_counter()
    pr = rs.disparity_range(race, "positive_rate", reference_group="Caucasian")
    t_pr = time.perf_counter() - t
    print(pr.to_frame().round(4).to_string(index=False))
    print(
        f"positive-rate gap at p = 0.5: certified [{pr.lower[0]:.4f}, {pr.upper[0]:.4f}], attained "
        f"[{pr.lower_attained[0]:.4f}, {pr.upper_attained[0]:.4f}] by members, reference {pr.reference[0]:.4f} "
        f"({t_pr:.1f} s)"
    )
    t = time.perf_counter()
    mp = rs.disparity_range(race, "mean_prediction", reference_group="Caucasian")
    t_mp = time.perf_counter() - t
    print(
        f"mean-probability gap: certified [{mp.lower[0]:.4f}, {mp.upper[0]:.4f}], attained "
        f"[{mp.lower_attained[0]:.4f}, {mp.upper_attained[0]:.4f}], reference {mp.reference[0]:.4f} ({t_mp:.1f} s)"
    )
    sc = rs.disparity_range(race, "mean_prediction", reference_group="Caucasian", scale="score")
    print(f"mean-score (logit) gap, exact: [{sc.lower[0]:.4f}, {sc.upper[0]:.4f}]")
    t = time.perf_counter()
    ld = rs.least_disparate(race, "positive_rate", reference_group="Caucasian", frontier=False)
    t_ld = time.perf_counter() - t
    ldm = rs.least_disparate(race, "mean_prediction", reference_group="Caucasian", frontier=False)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eg = ExponentiatedGradient(LogisticRegression(max_iter=1000), DemographicParity(), eps=0.01)
        eg.fit(X, y, sensitive_features=race)
    t_eg = time.perf_counter() - t
    w = eg.weights_.to_numpy()
    p_mix = sum(wj * est.predict_proba(X)[:, 1] for wj, est in zip(w, eg.predictors_) if wj > 0)
    sel = eg._pmf_predict(X)[:, 1]  # the randomised classifier's probability of predicting 1
    aa, ca = race == "African-American", race == "Caucasian"
    eg_gap = float(sel[aa].mean() - sel[ca].mean())
    det = eg.predict(X, random_state=0)
    lr = LogisticRegression(max_iter=1000).fit(X, y)
    lr_gap = demographic_parity_difference(y, lr.predict(X), sensitive_features=race)
    eg_loss = log_loss(y, np.clip(p_mix, 1e-15, 1 - 1e-15))
    t = time.perf_counter()  # our set widened to the mitigated model's loss: one member, deterministic
    rs_eg = rashomon.RashomonSet(rashomon.LogisticModelClass(), eg_loss, epsilon_kind="absolute").fit(X, y)
    ld_eg = rs_eg.least_disparate(race, "positive_rate", reference_group="Caucasian", frontier=False)
    t_ld_eg = time.perf_counter() - t
    rows = [
        ("unconstrained LogisticRegression", log_loss(y, lr.predict_proba(X)[:, 1]), lr_gap, math_nan()),
        ("rashomon reference (logistic class)", rs.e_ref_, pr.reference[0], math_nan()),
        ("ExponentiatedGradient (DP, eps=0.01)", log_loss(y, np.clip(p_mix, 1e-15, 1 - 1e-15)), eg_gap, t_eg),
        ("least disparate member (positive rate)", ld.loss, ld.disparity, t_ld),
        ("least disparate member (mean probability)", ldm.loss, ldm.disparity, math_nan()),
        ("least disparate member, set at EG's log loss", ld_eg.loss, ld_eg.disparity, t_ld_eg),
    ]
    print(f"{'model':<44}{'log loss':>10}{'gap':>9}{'seconds':>9}")
    for name, ll, gap, sec in rows:
        print(f"{name:<44}{ll:>10.5f}{gap:>9.4f}{sec:>9.2f}")
    print(
        f"(ExponentiatedGradient: expected positive-rate gap of its randomised classifier; one draw of it "
        f"{demographic_parity_difference(y, det, sensitive_features=race):.4f}; its log loss is that of the "
        f"weight-averaged probabilities of its {int((w > 0).sum())} predictors. Ours: a single member of the set, "
        f"certified least |gap| >= {ld.certified_lower:.4f} (outer bound), loss <= epsilon_abs; the positive-rate "
        f"gap of our member at p = 0.5 as fairlearn defines it.)"
    )
    print(
        f"time: ExponentiatedGradient {t_eg:.2f} s, our least_disparate {t_ld:.2f} s (ratio {t_ld / t_eg:.2f}x), "
        f"our set fit {t_fit:.2f} s"
    )
    print(
        f"at the mitigated model's log loss ({eg_loss:.5f}, {100 * (eg_loss / rs.e_ref_ - 1):.1f}% above e_ref) our set's "
        f"least disparate member has positive-rate gap {ld_eg.disparity:.4f} (certified least |gap| >= "
        f"{ld_eg.certified_lower:.4f}), log loss {ld_eg.loss:.5f}"
    )
    binding("COMPAS two-year, African-American vs Caucasian", rs, race, "Caucasian")
    if figures:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8.0, 2.6))
        pr.plot(ax=ax, benchmark=eg_gap)
        ax.set_title("COMPAS two-year, logistic set (ε = 1%): positive-rate gap at p = 0.5", fontsize=9)
        fig.tight_layout()
        fig.savefig(f"{figures}/fairness_compas_logistic.png", dpi=110)
        plt.close(fig)


def _slsqp_least(rs, s, metric_gap, starts):
    """Independent reference: the least |gap| found by SLSQP from each start, under the set's two constraints."""
    from scipy.optimize import minimize

    ms, par = rs._margin, rs.parametrization_
    cons = [
        {"type": "ineq", "fun": lambda t: rs.epsilon_abs_ - ms.orig.e_orig(t, ms.loss)},
        {"type": "ineq", "fun": lambda t: par.r - t @ par.B @ t},
    ]
    best = np.inf
    for t0 in starts:
        r = minimize(lambda t: 1e4 * metric_gap(t) ** 2, t0, constraints=cons, method="SLSQP", options={"ftol": 1e-16})
        if ms.orig.e_orig(r.x, ms.loss) <= rs.epsilon_abs_ and r.x @ par.B @ r.x <= par.r:
            best = min(best, abs(metric_gap(r.x)))
    return best


def binding(name, rs, sens, ref):
    """Certified / attained widths on the probability scale, the least member, and target=δ."""
    from scipy.special import expit

    print(f"\n== {name}: probability-scale bounds (logistic, epsilon_abs = {rs.epsilon_abs_:.5f}) ==")
    print(f"{'gap':<18}{'certified':>22}{'attained':>22}{'ratio':>8}{'seconds':>9}{'CPU s':>7}")
    for metric in ("mean_prediction", "positive_rate", "group_loss"):
        t, c = time.perf_counter(), time.process_time()
        r = rs.disparity_range(sens, metric, reference_group=ref)
        sec, cpu = time.perf_counter() - t, time.process_time() - c
        ratio = (r.upper[0] - r.lower[0]) / (r.upper_attained[0] - r.lower_attained[0])
        print(
            f"{metric:<18}{f'[{r.lower[0]:.4f}, {r.upper[0]:.4f}]':>22}"
            f"{f'[{r.lower_attained[0]:.4f}, {r.upper_attained[0]:.4f}]':>22}{ratio:>8.3f}{sec:>9.1f}{cpu:>7.1f}"
        )
    print("(ratio: certified width / attained width; CPU s: this process's processor time, the wall-clock seconds")
    print(" include waiting for the processor on a shared machine)")
    t = time.perf_counter()
    ld = rs.least_disparate(sens, "mean_prediction", reference_group=ref, frontier=False)
    sec = time.perf_counter() - t
    P, p0 = rs.parametrization_.prediction_map(rs.X_)
    g = np.asarray(sens) != ref
    w = np.where(g, 1 / g.sum(), -1 / (~g).sum())

    def gap(th):
        return float(w @ expit(P @ th + p0))

    smp = rs.sample(200, random_state=0).thetas
    order = np.argsort([abs(gap(th)) for th in smp])
    best = _slsqp_least(rs, sens, gap, smp[order[:10]])
    print(
        f"least disparate mean-probability member: gap {ld.disparity:.3e} (certified least |gap| >= "
        f"{ld.certified_lower:.4g}), loss {ld.loss:.5f} ({sec:.1f} s); SLSQP from 10 sampled starts: least |gap| "
        f"{best:.3e}; ours within 1e-6 of it: {abs(ld.disparity) <= best + 1e-6}"
    )
    for delta in (abs(ld.disparity) + 0.01, 0.5 * ld.certified_lower if ld.certified_lower > 0 else None):
        if delta is None:
            continue
        a = rs.least_disparate(sens, "mean_prediction", reference_group=ref, frontier=False, target=delta)
        print(f"target {delta:.4g}: {a.target_outcome}. {a.alternative}")


def pima(figures):
    from rashomon.datasets import load_pima_diabetes

    d = load_pima_diabetes()
    X, y = d.drop(columns="Outcome"), d["Outcome"]
    rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), 0.1).fit(X, y)
    binding("Pima diabetes, age > 40 vs not", rs, (X["Age"] > 40).to_numpy(), False)


def _rate_cases():
    """The positive-rate cases: ``(name, X, y, ε, sensitive, reference group)`` for COMPAS two-year and Pima."""
    from rashomon.datasets import load_pima_diabetes

    d = load_pima_diabetes()
    Xp, yp = d.drop(columns="Outcome"), d["Outcome"]
    X, y, race = _compas_two_year()
    return [
        ("COMPAS two-year, ε = 1 %", X, y, 0.01, race, "Caucasian"),
        ("Pima, age > 40, ε = 10 %", Xp, yp, 0.1, (Xp["Age"] > 40).to_numpy(), False),
    ]


def decisions(figures, time_limit=60.0):
    """Positive-rate gaps, both data sets: the bound without and with the branch and bound (``time_limit``)."""
    from threadpoolctl import threadpool_limits

    cases = _rate_cases()
    print(
        f"\n== Positive-rate gap at p = 0.5 (logistic): certified / attained, one BLAS thread, time_limit {time_limit} s =="
    )
    print(f"{'data':<26}{'time_limit':>11}{'certified':>20}{'attained':>20}{'ratio':>8}{'CPU s':>8}")
    with threadpool_limits(1):
        for name, X_, y_, eps, sens, ref in cases:
            rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), eps).fit(X_, y_)
            for tl in (0.0, time_limit):
                c = time.process_time()
                r = rs.disparity_range(sens, "positive_rate", reference_group=ref, time_limit=tl)
                cpu = time.process_time() - c
                ratio = (r.upper[0] - r.lower[0]) / (r.upper_attained[0] - r.lower_attained[0])
                print(
                    f"{name:<26}{tl:>11g}{f'[{r.lower[0]:.4f}, {r.upper[0]:.4f}]':>20}"
                    f"{f'[{r.lower_attained[0]:.4f}, {r.upper_attained[0]:.4f}]':>20}{ratio:>8.3f}{cpu:>8.1f}",
                    flush=True,
                )


def _decision_rows(rs, sens, ref):
    """The positive-rate gap's distinct rows as the pipeline builds them: ``(P, p0, w, lo_s, hi_s, t, spec)``."""
    from rashomon.sets.fairness._fair_metrics import make_spec
    from rashomon.sets.fairness._joint import exact_row_bounds, row_functions
    from rashomon.sets.fairness._rowwise import _row_score_bounds

    func = "bench"
    spec = make_spec(
        rs, sens, "positive_rate", positive=None, threshold=None, scale=None, reference_group=ref, func=func
    )
    spec.exact_rows = 32
    lo_s, hi_s = _row_score_bounds(rs, spec, rs.epsilon_abs_, 1e-8, func)
    lo_s, hi_s = exact_row_bounds(rs, spec, lo_s, hi_s, rs.epsilon_abs_, func)
    g = next(i for i in range(len(spec.labels)) if i != spec.ref)
    return spec, spec.W[g] - spec.W[spec.ref], lo_s, hi_s, row_functions(spec)[3]


def trace(figures, time_limit=600.0, checkpoints=(0, 10, 30, 60, 120, 300, 600, 1200)):
    """Certified bound and best member of each end of the positive-rate gap over processor time (one BLAS thread)."""
    from threadpoolctl import threadpool_limits

    from rashomon.sets.fairness._step_bnb import step_bnb
    from rashomon.sets.fairness._step_bound import _rows
    from rashomon.sets.fairness._step_search import smooth_ascent

    cases = _rate_cases()
    print(f"\n== Positive-rate gap at p = 0.5: branch and bound over processor time, {time_limit:g} s per end ==")
    with threadpool_limits(1):
        for name, X_, y_, eps, sens, ref in cases:
            rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), eps).fit(X_, y_)
            spec, w, lo_s, hi_s, t = _decision_rows(rs, sens, ref)
            r0 = rs.disparity_range(sens, "positive_rate", reference_group=ref)  # every bound but the search's
            for sign, end in ((1.0, "upper"), (-1.0, "lower")):
                P, p0, c, lr, ur, keep = _rows(spec, sign * w, lo_s, hi_s)
                P, p0, c, lr, ur = P[keep], p0[keep], c[keep], lr[keep], ur[keep]
                opn = (lr <= t) & (t < ur)
                b_lp = float(r0.upper[0] if sign > 0 else -r0.lower[0])
                cpu = time.process_time()
                members = smooth_ascent(rs, P, p0, c, t, rs.epsilon_abs_, rs.theta_min_[None])
                cpu = time.process_time() - cpu
                att = float(c @ (P @ members[-1] + p0 > t))
                print(
                    f"{name}, {end} end: {len(c)} distinct rows, {int(opn.sum())} open, {P.shape[1]} parameters; "
                    f"bound without the search {sign * b_lp:.4f}; smoothed ascent {sign * att:.4f} ({cpu:.1f} s)"
                )
                _, _, info = step_bnb(rs, P, p0, c, lr, ur, t, rs.epsilon_abs_, "bench", members, time_limit, 0.0)
                tr = info["trace"]
                cells = []
                for k in checkpoints:
                    seen = [x for x in tr if x[0] <= k + 0.5]
                    if seen and k <= time_limit:
                        cells.append(f"{k:g} s: {sign * min(seen[-1][1], b_lp):.4f} / {sign * seen[-1][2]:.4f}")
                print("   bound / member at " + "; ".join(cells), flush=True)
                print(f"   ({info['nodes']} boxes, {info['lps']} programmes, {info['open']} boxes open at the end)")


def math_nan():
    return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figures", default=None, help="folder for the PNG figures")
    ap.add_argument(
        "--only", choices=("kernel", "logistic", "pima", "decisions", "trace"), default=None, help="run one part"
    )
    ap.add_argument("--time-limit", type=float, default=60.0, help="CPU seconds per end of the decision-rate search")
    ap.add_argument("--trace-time", type=float, default=600.0, help="CPU seconds per end of the trace (--only trace)")
    args = ap.parse_args(argv)
    parts = {"kernel": compas_kernel, "logistic": compas_logistic, "pima": pima}
    for name, part in parts.items():
        if args.only in (None, name):
            part(args.figures)
    if args.only in (None, "decisions"):
        decisions(args.figures, args.time_limit)
    if args.only == "trace":
        trace(args.figures, args.trace_time)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
