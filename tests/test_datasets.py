import pytest

from rashomon import datasets


def test_compas_filters_and_counts():
    assert len(datasets.load_compas(propublica_filters=False)) == 7214
    assert len(datasets.load_compas()) == 6172  # ProPublica's published count
    v = datasets.load_compas("violent")
    assert len(v) == 4015
    assert set(v["score_text"]) <= {"Low", "Medium", "High"}
    assert v["days_b_screening_arrest"].abs().max() <= 30
    two = datasets.load_compas("violent", races=("African-American", "Caucasian"))
    assert set(two["race"]) == {"African-American", "Caucasian"}
    assert two["v_decile_score"].between(1, 10).all()


@pytest.mark.parametrize(
    "loader,shape",
    [
        (lambda: datasets.load_wine_quality("red"), (1599, 12)),
        (lambda: datasets.load_wine_quality("white"), (4898, 12)),
        (datasets.load_concrete, (1030, 9)),
        (datasets.load_pima_diabetes, (768, 9)),
        (lambda: datasets.load_bike_sharing("day"), (731, 16)),
        (lambda: datasets.load_bike_sharing("hour"), (17379, 17)),
    ],
)
def test_shapes(loader, shape):
    assert loader().shape == shape


def test_values_match_documented_sums():
    assert datasets.load_bike_sharing("day")["cnt"].sum() == 3292679
    assert datasets.load_bike_sharing("hour")["cnt"].sum() == 3292679
    assert datasets.load_pima_diabetes()["Outcome"].sum() == 268
    c = datasets.load_concrete()
    assert c.loc[1, "strength"] == pytest.approx(61.887366, abs=1e-6)  # full precision, not 61.89
    assert datasets.load_pima_diabetes(zeros_as_missing=True)["Insulin"].isna().sum() > 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="'kind'"):
        datasets.load_compas("x")
    with pytest.raises(ValueError, match="'races'"):
        datasets.load_compas(races=("Martian",))
    with pytest.raises(ValueError, match="'color'"):
        datasets.load_wine_quality("rose")
