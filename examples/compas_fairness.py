"""
Fairness over the Rashomon set: COMPAS two-year recidivism
==========================================================

ProPublica's question about COMPAS was whether its risk score treats Black and white defendants alike. Here we
ask it of *every good model* of two-year recidivism, not only of one fitted model:

1. how far apart can good models put the two groups' mean predicted risk? (:meth:`~rashomon.RashomonSet.disparity_range`)
2. is there a good model closer to parity, a *less discriminatory alternative*, and what does it cost in loss?
   (:meth:`~rashomon.RashomonSet.least_disparate`)
3. does every good model rely more on prior convictions than on age? (:meth:`~rashomon.RashomonSet.reliance_difference`)
4. which reliances are ordered the same way by all good models? (:meth:`~rashomon.RashomonSet.reliance_order`)

Data: ProPublica's ``compas-scores-two-years.csv`` as bundled in :mod:`rashomon.datasets` (ProPublica's filters),
restricted to the African-American and Caucasian defendants (5,278 rows). Five features, race among them, so that
its reliance can be measured. The whole script runs in well under a minute.

Run it::

    python examples/compas_fairness.py
"""

# %%
# The data and a logistic Rashomon set
# ------------------------------------
# The Rashomon set holds every logistic model (in the class's norm ball) whose log loss is within 5 % of the
# best. ``race`` is the sensitive attribute: one label per row, not necessarily a model input.

import matplotlib.pyplot as plt
import pandas as pd

import rashomon
from rashomon.datasets import load_compas

raw = load_compas("two_year")
raw = raw[raw["race"].isin(["African-American", "Caucasian"])].reset_index(drop=True)
X = pd.DataFrame(
    {
        "age": raw["age"],
        "priors_count": raw["priors_count"],
        "felony": (raw["c_charge_degree"] == "F").astype(float),
        "male": (raw["sex"] == "Male").astype(float),
        "black": (raw["race"] == "African-American").astype(float),
    }
)
y = raw["two_year_recid"]
race = raw["race"].map({"African-American": "Black", "Caucasian": "white"})

rs = rashomon.RashomonSet(rashomon.LogisticModelClass(), epsilon=0.05).fit(X, y)
print(rs)

# %%
# 1. How far apart can good models put the groups?
# ------------------------------------------------
# The disparity is the difference in mean predicted probability of recidivism between the groups (the
# reference group is the first label in sorted order). On the probability scale, a logistic set's bounds are
# *certified outer* bounds: no good model lies outside ``certified [c, d]``, and members of the set were found at
# both ends of ``attained [a, b]``. The true range lies between the two.

disp = rs.disparity_range(race)
print(disp)
_ = disp.plot()

# %%
# On the score (log-odds) scale the mean is linear in the parameters, so the range is exact: attained and
# certified coincide.

print(rs.disparity_range(race, scale="score"))

# %%
# 2. Is there a less discriminatory alternative?
# ----------------------------------------------
# :meth:`~rashomon.RashomonSet.least_disparate` returns the good model closest to parity, a certificate that no
# good model is closer (``certified least |.| >= …``), its loss beside the reference's, and its reliance on the
# features we name. The frontier says how close to parity a model can get at each loss threshold ε (here at 1 %
# and 2 % above the best loss, and at the set's own 5 %).

least = rs.least_disparate(race, features=["black", "priors_count"], epsilons=[0.01, 0.02])
print(least)
print(least.to_frame().round(4).to_string(index=False))
_ = least.plot()

# %%
# Read it as the less-discriminatory-alternative question: the deployed (reference) model's gap is printed
# as ``reference disparity``; a member with a gap near 0 at a loss below the set's threshold is an equally good
# alternative that treats the groups more equally. If ``certified least |.|`` were above 0, *no* good model of
# the class would reach parity, and the frontier shows the loss one must give up to get there.

# %%
# 3. Does every good model rely more on prior convictions than on age?
# --------------------------------------------------------------------
# For reliance questions we use the linear class on the same 0/1 outcome (squared loss): its ranges are exact
# and take a fraction of a second. (On the logistic set the same calls give certified outer bounds beside the
# attained values, and take minutes.) A certified lower end above 0 would say that *every* good model relies
# more on the first feature than on the second.

lin = rashomon.RashomonSet(rashomon.LinearModelClass(), epsilon=0.05).fit(X, y)
diff = lin.reliance_difference("priors_count", "age")
print(diff)
_ = diff.plot()

# %%
# The interval straddles 0: some good models rely more on age than on prior convictions, others the reverse.

# %%
# 4. The certified order of the reliances
# ---------------------------------------
# :meth:`~rashomon.RashomonSet.reliance_order` compares every pair; an arrow ``a → b`` means every good model
# relies more on ``a`` than on ``b``, up to the critical ε printed in ``relations`` (beyond it, a member of the
# larger set reverses the order).

order = lin.reliance_order(["age", "priors_count", "black", "male", "felony"])
print(order)
print(order.relations[["a", "b", "lower", "critical_epsilon_lower"]].round(4).to_string(index=False))
fig, ax = plt.subplots(figsize=(6, 2.8), layout="constrained")  # compact: the labels read at the page's width
_ = order.plot(ax=ax)
