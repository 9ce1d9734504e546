"""The fairness guide's source teaches every fairness query: each with code, printed output and a figure."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user_guide" / "fairness.rst"


def _sections() -> dict[str, str]:
    text = GUIDE.read_text(encoding="utf-8")
    parts = re.split(r"^(.+)\n-{3,}\n", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_each_query_has_code_output_and_a_figure():
    sections = _sections()
    for name in ("disparity_range", "least_disparate", "reliance_difference", "reliance_order", "--sensitive"):
        (body,) = [b for title, b in sections.items() if name in title]
        assert ".. code-block:: python" in body or ".. code-block:: text" in body, name
        assert body.count(".. code-block:: text") >= 1, f"{name}: no printed output"
        assert ".. image::" in body, f"{name}: no figure"
        assert "How to read it" in body or "certified" in body, name


def test_guide_explains_certified_against_attained_and_the_alternative_question():
    text = GUIDE.read_text(encoding="utf-8")
    assert "Certified and attained" in text
    assert "less discriminatory alternative" in text.lower()


def test_the_gallery_example_exists_and_uses_the_logistic_class():
    src = (ROOT / "examples" / "compas_fairness.py").read_text(encoding="utf-8")
    assert "LogisticModelClass" in src and "load_compas" in src
    for name in ("disparity_range", "least_disparate", "reliance_difference", "reliance_order"):
        assert f".{name}(" in src, name
