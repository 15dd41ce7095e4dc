"""metrics.stats.common: the shape and value checks every statistic shares."""
from __future__ import annotations

import numpy as np
import pytest

from metrics.errors import MetricsError
from metrics.stats import common


def test_as_diffs_makes_a_vector_one_comparison_column():
    d, single = common.as_diffs([0.1, -0.2, 0.3])
    assert single and d.shape == (3, 1) and d.dtype == np.float64
    assert d[:, 0].tolist() == [0.1, -0.2, 0.3]
    m, single = common.as_diffs([[0.1, 0.2], [0.3, 0.4]])
    assert not single and m.shape == (2, 2)


def test_as_diffs_refuses_non_finite_values_and_three_dimensions():
    with pytest.raises(MetricsError, match="NaN or infinity"):
        common.as_diffs([0.1, np.inf])
    with pytest.raises(MetricsError, match="got 3 dimensions"):
        common.as_diffs(np.zeros((2, 2, 2)))


def test_shaped_gives_a_float_for_one_comparison():
    values = np.array([0.25, 0.5])
    assert common.shaped(values, True) == 0.25 and isinstance(common.shaped(values, True), float)
    assert common.shaped(values, False) is values


@pytest.mark.parametrize("value", [0, -3, 2.5, True, "10"])
def test_check_count_refuses_what_is_not_a_positive_integer(value):
    with pytest.raises(MetricsError, match=r"resamples must be an integer >= 1"):
        common.check_count("resamples", value)


def test_check_count_and_level_accept_valid_values():
    assert common.check_count("permutations", np.int64(7)) == 7
    assert common.check_count("permutations", 0, minimum=0) == 0
    assert common.check_level(0.9) == 0.9
    for level in (0, 1, 1.5):
        with pytest.raises(MetricsError, match="level must be between 0 and 1"):
            common.check_level(level)


def test_paired_diffs_is_system_minus_baseline():
    # system - baseline per query: (0.5 - 0.2, 0.1 - 0.4) = (0.3, -0.3)
    assert common.paired_diffs([0.2, 0.4], [0.5, 0.1]) == pytest.approx([0.3, -0.3])
    with pytest.raises(MetricsError, match="baseline has"):
        common.paired_diffs([0.2, 0.4], [0.5])


def test_every_test_and_correction_has_a_label():
    assert set(common.TESTS) == {"t", "wilcoxon", "randomization", "bootstrap"}
    assert set(common.CORRECTIONS) == {"holm", "bonferroni", "bh", "none"}
