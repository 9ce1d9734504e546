"""What the command line prints: every default in ``--help``, warnings in the user's terms, and a summary that
says when a bound is attained and when it is an outer bound."""

import argparse
import re

import numpy as np
import pandas as pd
import pytest

from rashomon.audit.cli import _fairness_line, build_parser
from rashomon.audit.cli import main as cli_main


def _audit_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["audit"]


def test_help_states_every_default(capsys):
    p = _audit_parser()
    missing = []
    for a in p._actions:
        if a.required or isinstance(a, argparse._HelpAction):
            continue
        text = (a.help or "") % {"default": a.default}
        if "default" not in text:
            missing.append(a.option_strings[0])
        elif a.default not in (None, False, "") and "%(default)" not in (a.help or ""):
            # a default written out by hand says the parser's value
            assert str(a.default) in text or a.option_strings[0] in ("--model-class", "--sep"), a.option_strings
    assert not missing, f"options whose --help gives no default: {missing}"
    with pytest.raises(SystemExit):
        cli_main(["audit", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for opt, default in (("--epsilon", "0.1"), ("--bootstrap", "0"), ("--seed", "0"), ("--cv", "10")):
        assert re.search(rf"{opt} {opt[2:].upper()} .*?\(?default: {re.escape(default)}\b", out), opt


def _table(n=120, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    df["y"] = 2 * df["a"] - df["b"] + 0.3 * rng.normal(size=n)
    return df


def test_warning_names_the_option_without_a_source_line(tmp_path, capsys):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    args = ["--data", p, "--target", "y", "--group", "g=a", "--model-class", "linear", "--cv", "3", "--no-plots"]
    code = cli_main(["audit", *map(str, args), "--epsilon", "10"])
    err = capsys.readouterr().err
    assert code == 0
    # at 1000 % the set also holds the null model, which fit says in a warning of its own
    lines = [ln for ln in err.splitlines() if "warning" in ln.lower() and "null model" not in ln]
    assert lines == [
        "rashomon audit: warning: The '--epsilon' option of rashomon audit is 10, read as a relative margin of "
        "1000 % of the cross-validated loss. If you meant 10 %, pass --epsilon 0.1."
    ], err
    assert "epsilon=" not in err and ".py:" not in err and "check_relative_epsilon" not in err


def _fairness(exact: bool) -> dict:
    row = {
        "disparity": "max - min",
        "lower": 0.0,
        "upper": 0.9536,
        "lower_attained": 0.0012,
        "upper_attained": 0.4012,
        "reference": 0.2,
        "exact": exact,
    }
    return {"sensitive": "race", "disparity": {"mean_prediction": {"rows": [row]}}}


def test_fairness_line_shows_attained_within_certified():
    line = _fairness_line(_fairness(False))
    assert "attained [0.0012, 0.4012]" in line and "within certified outer bounds [0, 0.9536]" in line
    exact = _fairness_line(_fairness(True))
    assert "over the set in [0, 0.9536] (exact)" in exact and "attained" not in exact
