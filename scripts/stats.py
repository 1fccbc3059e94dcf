"""The scripts' statistics, one helper for all (base/stats.h is gbasim's twin): Student's t
confidence intervals of a mean and of a paired difference, over seeds.

    from stats import mean_interval, paired_difference
    m = mean_interval([0.75, 0.76, 0.74])      # Interval(n, mean, low, high)
    d = paired_difference(gba, sync)           # same seeds, in the same order
"""
import math
from collections import namedtuple

from scipy import stats as _scipy_stats

Interval = namedtuple("Interval", "n mean low high")


def mean_interval(values, level=0.95):
    """Mean and two-sided `level` interval of `values` (t with n - 1 degrees of freedom).
    Fewer than 2 values: the interval is NaN; none: the mean too."""
    values = [float(v) for v in values]
    n = len(values)
    nan = float("nan")
    if n == 0:
        return Interval(0, nan, nan, nan)
    mean = sum(values) / n
    if n < 2:
        return Interval(n, mean, nan, nan)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    q = _scipy_stats.t.ppf(0.5 + 0.5 * level, n - 1)
    return Interval(n, mean, mean - q * sd / math.sqrt(n), mean + q * sd / math.sqrt(n))


def paired_difference(a, b, level=0.95):
    """The interval of a[i] - b[i] (the same seeds in the same order)."""
    if len(a) != len(b):
        raise ValueError(f"paired_difference: {len(a)} values against {len(b)}")
    return mean_interval([x - y for x, y in zip(a, b)], level)


def excludes_zero(interval):
    """Whether a difference is outside the noise: its interval does not hold 0."""
    return interval.n >= 2 and (interval.low > 0 or interval.high < 0)


def text(interval, digits=4):
    """'mean [low, high]', or the mean alone without an interval."""
    if interval.n == 0:
        return "-"
    if interval.n < 2:
        return f"{interval.mean:.{digits}f}"
    return f"{interval.mean:.{digits}f} [{interval.low:.{digits}f}, {interval.high:.{digits}f}]"
