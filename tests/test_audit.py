"""The COMPAS audit on a small subsample, the HTML report, the command line."""

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import rashomon
from rashomon.audit.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from compas_audit import GROUPS, compas_frame  # noqa: E402


@pytest.fixture(scope="module")
def small():
    return compas_frame().sample(n=400, random_state=1).reset_index(drop=True)


@pytest.fixture(scope="module")
def result(small):
    return rashomon.audit(small, "v_decile_score", GROUPS, train_size=120, cv=5, bootstrap=6, random_state=3, n_jobs=1)


def test_audit_table_and_reference_inside_mcr(result, small):
    for g in result.groups.values():
        assert g.mcr_lower - 1e-9 <= g.mr_ref <= g.mcr_upper + 1e-9  # the reference is in its own Rashomon set
        assert g.mcr.lower_tight and g.mcr.upper_tight
        assert set(g.ci) == {"mr_ref", "mcr_lower", "mcr_upper"}
        assert all(lo <= hi for lo, hi in g.ci.values())
        assert len(g.bootstrap_draws["mr_ref"]) == 6
    assert list(result.to_frame().index) == ["inadmissible", "admissible"]
    assert result.n_train == 120 and result.n_test == 280


def test_reference_mr_equals_black_box_estimator(result):
    # MR(f_ref) comes from the class's quadratic forms at θ_ref; the reference is a fitted estimator
    # of the class, so the generic exact estimator on its predictions must give the same number.
    rs = result.rashomon_set
    feats = list(result.features)
    for name, cols in GROUPS.items():
        idx = [feats.index(c) for c in cols]
        mr = rashomon.model_reliance(rs.reference_, rs.X_, rs.y_, idx)
        # 1e-8: the Hadamard all-pairs identity subtracts O(n²) sums (cancellation ~1e-9 here)
        assert mr.ratio == pytest.approx(result.groups[name].mr_ref, rel=1e-8)
        assert result.groups[name].mcr.reference_model.mr == pytest.approx(mr.ratio, rel=1e-8)


def test_same_seed_same_results_any_n_jobs(small, result):
    again = rashomon.audit(small, "v_decile_score", GROUPS, train_size=120, cv=5, bootstrap=6, random_state=3, n_jobs=2)
    for name in GROUPS:
        a, b = result.groups[name], again.groups[name]
        assert (a.mr_ref, a.mcr_lower, a.mcr_upper) == (b.mr_ref, b.mcr_lower, b.mcr_upper)
        for k in a.bootstrap_draws:
            np.testing.assert_array_equal(a.bootstrap_draws[k], b.bootstrap_draws[k])


class _Imgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tables = [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs)["src"])
        if tag == "table":
            self.tables += 1


def test_html_report_parses_and_embeds_figures(result, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    result.to_html(tmp_path / "report.html")
    text = (tmp_path / "report.html").read_text()
    p = _Imgs()
    p.feed(text)
    assert p.tables == 1 and len(p.imgs) == 3
    assert all(src.startswith("data:image/png;base64,") and len(src) > 1000 for src in p.imgs)
    for name in ["envelope_inadmissible", "envelope_admissible", "summary"]:
        assert (tmp_path / f"{name}.png").stat().st_size > 1000 and (tmp_path / f"{name}.svg").exists()
    assert "What MCR does and does not show" in text
    result.to_json(tmp_path / "new" / "folder" / "r.json")  # folders are created (make demo writes into a new one)
    js = json.loads((tmp_path / "new" / "folder" / "r.json").read_text())
    assert set(js["inadmissible"]) >= {"mr_ref", "mcr_lower", "mcr_upper", "mcr_lower_ci"}


def test_example_script_json(tmp_path):
    out = tmp_path / "c.json"
    import compas_audit

    assert compas_audit.main(["--subsample", "300", "--train-size", "100", "--no-plots", "--json", str(out)]) == 0
    js = json.loads(out.read_text())
    assert set(js) >= {"admissible", "inadmissible"}
    assert {"mr_ref", "mcr_lower", "mcr_upper"} <= set(js["admissible"])


@pytest.fixture(scope="module")
def csv_path(small, tmp_path_factory):
    p = tmp_path_factory.mktemp("cli") / "compas.csv"
    small.assign(label=["x"] * len(small)).to_csv(p, index=False)
    return p


@pytest.mark.parametrize(
    "extra,match",
    [
        (["--target", "nope", "--group", "g=race"], "'--target' option.*unknown column 'nope'"),
        (["--target", "label", "--group", "g=race"], "'--target' option.*numeric"),
        (["--target", "v_decile_score", "--group", "g=race,zz"], "unknown column 'zz'"),
        (
            ["--target", "v_decile_score", "--group", "g=race", "--epsilon", "0.5", "--epsilon-kind", "absolute"],
            "below the best loss",
        ),
    ],
)
def test_cli_errors_are_clear(csv_path, extra, match, capsys):
    code = cli_main(["audit", "--data", str(csv_path), "--train-size", "120", "--no-plots", *extra])
    assert code == 2
    assert re.search(match, capsys.readouterr().err)


def test_cli_runs_as_module(csv_path, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rashomon",
            "audit",
            "--data",
            str(csv_path),
            "--target",
            "v_decile_score",
            "--group",
            "inadmissible=race,sex",
            "--train-size",
            "120",
            "--json",
            str(tmp_path / "o.json"),
            "--out",
            str(tmp_path / "rep"),
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "MPLBACKEND": "Agg"},
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rep" / "report.html").exists()
    assert "inadmissible" in json.loads((tmp_path / "o.json").read_text())


def test_kernel_ridge_grid_cv_equals_gridsearchcv():
    # The audit's fast CV (one eigendecomposition per (gamma, fold)) against scikit-learn's GridSearchCV.
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, KFold

    from rashomon.audit._fit import kernel_ridge_grid_cv

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    X[10:20] = X[:10]  # duplicate rows, as in real tables
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=90)
    gammas, alphas = [0.03, 0.3, 1.0], list(np.logspace(-3, 2, 6))
    folds = KFold(5, shuffle=True, random_state=4)
    mse = kernel_ridge_grid_cv(X, y, gammas, alphas, folds)
    gs = GridSearchCV(
        KernelRidge(kernel="rbf"), {"gamma": gammas, "alpha": alphas}, cv=folds, scoring="neg_mean_squared_error"
    ).fit(X, y)
    np.testing.assert_allclose(mse.ravel(), -gs.cv_results_["mean_test_score"], rtol=1e-8)
    i, j = np.unravel_index(int(np.argmin(mse)), mse.shape)
    assert (alphas[i], gammas[j]) == (gs.best_params_["alpha"], gs.best_params_["gamma"])
