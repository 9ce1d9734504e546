"""The bundled COMPAS split of Fisher, Rudin & Dominici (2019, §10) reproduces the authors' reference."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel

from rashomon import datasets


@pytest.fixture(scope="module")
def split():
    return datasets.load_compas_fisher2019()


def test_sizes_and_ids(split):
    assert split.X_train.shape == (500, 5) and split.X_test.shape == (2873, 5)
    assert len(split.y_train) == 500 and len(split.y_test) == 2873
    assert list(split.X_train.columns) == ["race", "sex", "priors", "felony", "age"] == split.feature_names
    assert len(split.frame) == 3373 and split.train_mask.sum() == 500
    ids = split.train_ids
    assert len(ids) == 500 and len(set(ids)) == 500
    np.testing.assert_array_equal(ids, split.frame.loc[split.X_train.index, "id"].to_numpy())
    assert set(split.frame.loc[split.X_test.index, "id"]).isdisjoint(ids)
    # first training rows of the authors' list: positions 5, 33, 42 are ids 22, 136, 159
    assert list(split.X_train.index[:3]) == [5, 33, 42] and list(ids[:3]) == [22, 136, 159]


def test_standardisation_uses_sample_sd_of_training_rows(split):
    for col in ("priors", "age"):
        assert split.X_train[col].mean() == pytest.approx(0.0, abs=1e-12)
        assert split.X_train[col].std(ddof=1) == pytest.approx(1.0, rel=1e-12)
        mean, sd = split.settings["standardisation"][col]
        raw = split.frame.loc[split.X_train.index, {"priors": "priors_count", "age": "age"}[col]]
        assert sd == pytest.approx(raw.std(ddof=1)) and mean == pytest.approx(raw.mean())
    for col in ("race", "sex", "felony"):
        assert set(split.X_train[col]) | set(split.X_test[col]) == {0.0, 1.0}
    assert split.settings["mu"] == pytest.approx(3.59, abs=1e-12)


def test_reference_reproduces_published_numbers(split):
    s = split.settings
    assert s["alpha_paper"] == pytest.approx(0.0034551, rel=1e-4)
    assert s["n_alpha"] == pytest.approx(500 * s["alpha_paper"]) == pytest.approx(1.72755, abs=1e-5)
    Xtr, Xte = split.X_train.to_numpy(), split.X_test.to_numpy()
    mu = split.y_train.mean()
    kr = KernelRidge(kernel="rbf", gamma=s["sigma"], alpha=s["n_alpha"]).fit(Xtr, split.y_train - mu)
    e_ref = np.mean((split.y_test.to_numpy() - mu - kr.predict(Xte)) ** 2)
    c = kr.dual_coef_
    norm = c @ rbf_kernel(Xtr, gamma=s["sigma"]) @ c  # squared RKHS norm (a quadratic form), not its root
    assert e_ref == pytest.approx(s["e_ref"], abs=1e-4)  # measured 2.848676
    assert norm == pytest.approx(s["norm"], abs=1e-3)  # measured 177.79922
    assert s["epsilon_abs"] == pytest.approx(2.848652 + 0.3226485)

    # Duplicate training rows: the dictionary of the 402 unique rows gives the same fit.
    U, inv = np.unique(Xtr, axis=0, return_inverse=True)
    inv = inv.ravel()
    assert len(U) == 402
    w = np.bincount(inv, weights=c, minlength=len(U))  # summed dual weights of identical rows
    KD = rbf_kernel(U, gamma=s["sigma"])
    np.testing.assert_allclose(rbf_kernel(Xte, U, gamma=s["sigma"]) @ w, kr.predict(Xte), atol=1e-8)
    assert w @ KD @ w == pytest.approx(norm, rel=1e-10)
    # and w solves the dictionary problem min ||y - mu - K_nD w||^2 + n alpha w' K_D w
    KnD = KD[inv]
    grad = KnD.T @ (KnD @ w - (split.y_train.to_numpy() - mu)) + s["n_alpha"] * KD @ w
    assert np.abs(grad).max() < 1e-8


def test_published_reliance_values(split):
    pub = split.settings["published"]
    assert pub["admissible"]["mr"] == 2.7806 and pub["admissible"]["mcr"] == (1.7715, 3.6054)
    assert pub["inadmissible"]["mr"] == 1.0885 and pub["inadmissible"]["mcr"] == (0.7951, 1.5644)


def test_class_reference_and_set_reproduce_the_paper_setting(split):
    # The reference fitted by the kernel class itself (dictionary = unique training rows, μ fixed,
    # penalty n·α) is the paper's: held-out loss 2.848652 (1e-4) and RKHS norm 177.7997 (1e-3).
    import rashomon

    s = split.settings
    mc = rashomon.KernelModelClass(kernel="rbf", gamma=s["sigma"], alpha=s["n_alpha"], intercept=s["mu"])
    ref = mc.fit_reference(split.X_train, split.y_train)
    assert ref.parametrization_.info["dictionary_size"] == 402
    assert ref.parametrization_.r == pytest.approx(s["norm"], abs=1e-3)
    rs = rashomon.RashomonSet(mc, 0.1 * s["cv_loss"], epsilon_kind="additive", reference=ref).fit(
        split.X_test, split.y_test
    )
    assert rs.e_ref_ == pytest.approx(s["e_ref"], abs=1e-4)
    assert rs.epsilon_abs_ == pytest.approx(s["epsilon_abs"], abs=1e-4)
    # the reference is the class's member: its predictions equal scikit-learn's KernelRidge fit
    kr = KernelRidge(kernel="rbf", gamma=s["sigma"], alpha=s["n_alpha"]).fit(split.X_train, split.y_train - s["mu"])
    np.testing.assert_allclose(ref.predict(split.X_test), kr.predict(split.X_test) + s["mu"], atol=1e-5)


@pytest.mark.slow
def test_fisher2019_example_json(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "f.json"
    subprocess.run([sys.executable, str(root / "examples" / "compas_fisher2019.py"), "--json", str(out)], check=True)
    res = json.loads(out.read_text())
    for g in ("admissible", "inadmissible"):
        r = res[g]
        assert set(r) >= {"e_ref", "epsilon_abs", "mr_ref", "mcr_lower", "mcr_upper", "lower_tight", "upper_tight"}
        assert r["e_ref"] == pytest.approx(2.848652, abs=1e-4)
        assert r["mcr_lower"] <= r["mr_ref"] <= r["mcr_upper"] and r["lower_tight"] and r["upper_tight"]
    # the published intervals (sampled pairs, lower search stopped at γ = 0) contain the exact ones
    assert 1.7715 <= res["admissible"]["mcr_lower"] and res["admissible"]["mcr_upper"] <= 3.6054
    assert 0.7951 <= res["inadmissible"]["mcr_lower"] and res["inadmissible"]["mcr_upper"] <= 1.5644


def test_nadaraya_watson_selection_finds_the_papers_bandwidth(split):
    # The paper chose σ by 5-fold CV of Nadaraya–Watson regression over 5^linspace(-5, 5, 40);
    # with our fold split (seed 0) the same grid point, σ = 5^(15/39) = 1.857097, wins.
    import rashomon
    from rashomon.model_classes import nadaraya_watson_gamma

    g, err = nadaraya_watson_gamma(split.X_train.to_numpy(), split.y_train.to_numpy())
    assert g == pytest.approx(split.settings["sigma"], rel=1e-6) and len(err) == 40
    mc = rashomon.KernelModelClass(
        gamma="nadaraya_watson", alpha=split.settings["n_alpha"], intercept=split.settings["mu"]
    )
    ref = mc.fit_reference(split.X_train, split.y_train)
    assert ref.gamma_ == pytest.approx(split.settings["sigma"], rel=1e-6)
    assert ref.parametrization_.r == pytest.approx(split.settings["norm"], abs=1e-3)
    with pytest.raises(rashomon.RashomonInputError, match="'gamma' parameter of KernelModelClass"):
        rashomon.KernelModelClass(gamma="silverman").fit_reference(split.X_train, split.y_train)
