"""engine.dp: the noise scale read back from OpenDP, exact true counts and domains, bad parameters named,
and the noise's distribution checked statistically (OpenDP cannot be seeded).

Every statistical check compares a mean with its expectation within 6 standard deviations of that mean
(computed here from the distribution): a correct implementation fails one with probability below 2e-9
(two-sided normal tail at 6σ; the means are over at least 2,000 draws, where the normal approximation holds).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, dp

SIGMAS = 6


def toy() -> pd.DataFrame:
    return pd.DataFrame({"sex": ["F", "M", "M", "F", "M"], "race": ["a", "a", "b", "b", "b"],
                         "age": ["20", "35", "41", "99", "17"]})


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("mechanism", ["laplace", "geometric"])
def test_scale_is_sensitivity_over_epsilon_and_opendp_spends_epsilon(epsilon, mechanism):
    count, measurement, scale = dp.counts_measurement(["F", "M"], epsilon, mechanism)
    assert scale == 1.0 / epsilon
    assert count.map(1) == 1  # sensitivity of the histogram under add/remove-one
    assert measurement.map(1) == pytest.approx(epsilon, rel=1e-12)
    assert measurement.map(1) >= epsilon  # OpenDP rounds the loss up, never down
    release = dp.dp_counts(toy(), ["sex"], epsilon, mechanism)
    assert release.scale == 1.0 / epsilon
    assert release.epsilon_spent == pytest.approx(epsilon, rel=1e-12)


def test_true_counts_over_the_product_domain_with_empty_cells_and_other():
    release = dp.dp_counts(toy(), ["sex", "race"], 1.0, "geometric")
    assert release.cells == ["F | a", "F | b", "M | a", "M | b", "(other)"]
    assert release.true_counts == [1, 1, 1, 2, 0]
    assert all(float(x).is_integer() for x in release.noisy_counts)
    assert len(release.noisy_counts) == 5


def test_declared_categories_put_the_rest_in_other():
    release = dp.dp_counts(toy(), ["race"], 1.0, categories={"race": ["b", "c"]})
    assert release.cells == ["b", "c", "(other)"]
    assert release.true_counts == [3, 0, 2]


def test_numeric_column_bins_within_declared_bounds():
    release = dp.dp_counts(toy(), ["age"], 1.0, numeric_columns={"age"}, bounds={"age": (20, 60)}, bins=2)
    assert release.cells == ["[20, 40)", "[40, 60]", "(other)"]
    assert release.true_counts == [2, 1, 2]  # 99 and 17 are outside


def test_cell_and_category_caps_named():
    table = pd.DataFrame({"id": [str(i) for i in range(30)], "c": ["a", "b", "c"] * 10})
    with pytest.raises(InputError, match=r"^the histogram would have 91 cells \(the product of the columns' domains "
                                         r"and '\(other\)'\), more than 50: choose fewer columns or fewer bins$"):
        dp.dp_counts(table, ["id", "c"], 1.0, max_cells=50)
    assert len(dp.dp_counts(table, ["id", "c"], 1.0, max_cells=91).cells) == 91
    with pytest.raises(InputError, match=r"^column 'id' has 30 categories, more than 29: randomized response is "
                                         r"for a categorical column$"):
        dp.randomized_response(table["id"], 1.0, max_categories=29)


def test_error_figures_exact():
    assert dp.error_figures([10, 0, 5], [12.0, -1.0, 5.0]) == {
        "mean_absolute_error": 1.0, "max_absolute_error": 2.0, "relative_error": 3 / 15}


@pytest.mark.parametrize("epsilon", [0, -1, "x", math.inf, math.nan, 0.0009, 20.5])
def test_epsilon_must_be_positive_within_the_working_range(epsilon):
    message = f"^ε must be a number above 0, from 0.001 to 20, got {epsilon!r}$".replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(InputError, match=message):
        dp.dp_counts(toy(), ["sex"], epsilon)
    with pytest.raises(InputError, match=message):
        dp.randomized_response(toy()["sex"], epsilon)


@pytest.mark.parametrize("epsilon", [0.001, 20.0])
def test_epsilon_range_ends_work(epsilon):
    release = dp.randomized_response(pd.Series(["a", "b"] * 5, name="s"), epsilon)
    assert math.isfinite(release.epsilon_spent) and release.keep_probability < 1
    counts = dp.dp_counts(toy(), ["sex"], epsilon, "geometric")
    assert all(abs(v) < 2**31 - 1 for v in counts.noisy_counts)


def test_bad_parameters_named():
    with pytest.raises(InputError, match=r"^unknown column 'zip'; the table has: sex, race, age$"):
        dp.dp_counts(toy(), ["zip"], 1.0)
    with pytest.raises(InputError, match=r"^column 'age' is numeric: declare its bounds"):
        dp.dp_counts(toy(), ["age"], 1.0, numeric_columns={"age"})
    with pytest.raises(InputError, match=r"^unknown mechanism 'gauss': choose laplace or geometric$"):
        dp.dp_counts(toy(), ["sex"], 1.0, "gauss")
    with pytest.raises(InputError, match=r"^column 'age': the bounds must be two numbers, lower below upper"):
        dp.dp_counts(toy(), ["age"], 1.0, numeric_columns={"age"}, bounds={"age": (5, 5)})
    with pytest.raises(InputError, match=r"^column 'age': the number of bins must be from 1 to 100,000, got 10000000000$"):
        dp.dp_counts(toy(), ["age"], 1.0, numeric_columns={"age"}, bounds={"age": (5, 6)}, bins=10**10)
    with pytest.raises(InputError, match=r"^column 'race': value 'b' is not one of the declared categories$"):
        dp.randomized_response(toy()["race"], 1.0, categories=["a", "c"])
    with pytest.raises(InputError, match=r"^column 'sex': randomized response needs at least 2 categories, got 1$"):
        dp.randomized_response(pd.Series(["F", "F"], name="sex"), 1.0)


def test_laplace_mean_absolute_error_is_the_scale():
    epsilon, runs = 0.5, 2000
    b = 1 / epsilon
    table = pd.DataFrame({"c": ["x"] * 7 + ["y"] * 3})
    errors = []
    for _ in range(runs):
        r = dp.dp_counts(table, ["c"], epsilon, "laplace")
        errors.extend(abs(n - t) for n, t in zip(r.noisy_counts, r.true_counts))
    n = len(errors)  # 3 cells per run: 6,000 draws of |Lap(b)| ~ Exp(mean b, sd b)
    assert abs(np.mean(errors) - b) <= SIGMAS * b / math.sqrt(n)


def test_geometric_mean_absolute_error_is_the_discrete_laplace_one():
    epsilon, runs = 0.5, 2000
    alpha = math.exp(-epsilon)
    mean = 2 * alpha / (1 - alpha ** 2)  # E|X|, P(X=k) = (1-α)/(1+α) α^|k|
    second = 2 * alpha / (1 - alpha) ** 2  # E X²
    sd = math.sqrt(second - mean ** 2)
    table = pd.DataFrame({"c": ["x"] * 7 + ["y"] * 3})
    errors = []
    for _ in range(runs):
        r = dp.dp_counts(table, ["c"], epsilon, "geometric")
        errors.extend(abs(n - t) for n, t in zip(r.noisy_counts, r.true_counts))
    assert abs(np.mean(errors) - mean) <= SIGMAS * sd / math.sqrt(len(errors))


def test_keep_probability_formula():
    assert dp.keep_probability(1.0, 3) == pytest.approx(math.e / (math.e + 2), rel=1e-15)
    assert dp.keep_probability(math.log(3), 2) == pytest.approx(0.75, rel=1e-15)


def test_randomized_response_keeps_with_the_stated_probability():
    n, epsilon = 6000, 1.0
    release = dp.randomized_response(pd.Series(["a"] * n, name="s"), epsilon, categories=["a", "b", "c"])
    p = math.e / (math.e + 2)
    assert release.keep_probability == pytest.approx(p, rel=1e-15)
    assert release.epsilon_spent == pytest.approx(epsilon, rel=1e-12)
    assert release.true_counts == [n, 0, 0]
    kept, b, c = release.perturbed_counts
    assert abs(kept - n * p) <= SIGMAS * math.sqrt(n * p * (1 - p))
    q = (1 - p) / 2  # each other category uniformly
    for other in (b, c):
        assert abs(other - n * q) <= SIGMAS * math.sqrt(n * q * (1 - q))


def test_randomized_response_estimate_is_unbiased():
    true = {"a": 600, "b": 300, "c": 100}
    series = pd.Series([k for k, v in true.items() for _ in range(v)], name="s")
    epsilon, runs = 0.5, 6
    p = dp.keep_probability(epsilon, 3)
    r = (1 - p) / 2
    estimates = np.array([dp.randomized_response(series, epsilon).estimated_counts for _ in range(runs)])
    n = sum(true.values())
    for j, (name, count) in enumerate(true.items()):
        # perturbed count of j: count Bernoulli(p) + (n - count) Bernoulli(r); the estimate divides by (p - r)
        var = (count * p * (1 - p) + (n - count) * r * (1 - r)) / (p - r) ** 2
        assert abs(estimates[:, j].mean() - count) <= SIGMAS * math.sqrt(var / runs), name


def test_estimate_distribution_exact():
    # K=2, p=0.75: r=0.25; 100 records perturbed into 60/40: true share (0.6-0.25)/0.5 = 0.7
    assert dp.estimate_distribution([60, 40], 0.75) == pytest.approx([70.0, 30.0], rel=1e-12)


def test_randomized_response_answers_stay_with_their_records():
    # Drawn per category in one composed OpenDP call (dp.draw_responses): at ε = 20 (p = 1 - 2e^-20 for K = 3,
    # a flip among 3,000 records has probability below 1.3e-5) every record must get back its own value, in
    # the series' own order and index.
    values = np.array(["b", "a", "c", "a", "b", "b", "c", "a", "c", "a"] * 300, dtype=object)
    series = pd.Series(values, index=np.arange(len(values))[::-1] * 7, name="s")
    release = dp.randomized_response(series, 20.0)
    assert release.perturbed.index.equals(series.index)
    assert release.perturbed.tolist() == values.tolist()


def test_randomized_response_each_record_drawn_independently_within_its_category():
    # Records of every category keep their value with probability p and move to each other category with r;
    # the records of one category are one composed OpenDP call, so a shared draw would show as all-or-nothing.
    n, epsilon = 3000, 1.0
    values = np.array(["a", "b", "c"] * n, dtype=object)
    release = dp.randomized_response(pd.Series(values, name="s"), epsilon)
    p = dp.keep_probability(epsilon, 3)
    r = (1 - p) / 2
    out = release.perturbed.to_numpy(dtype=object)
    for true in ("a", "b", "c"):
        mine = out[values == true]
        for answer in ("a", "b", "c"):
            q = p if answer == true else r
            assert abs((mine == answer).sum() - n * q) <= SIGMAS * math.sqrt(n * q * (1 - q)), (true, answer)
