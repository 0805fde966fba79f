"""The Poisson sampler of the mini-batch kernels (and of the Dask client) samples every row
independently with probability q: the sampled-Gaussian accounting assumes exactly that."""

import numpy as np
import pytest

from skdp.optimizers._glm import poisson_batch


def _draws(n, q, reps, seed=0):
    rng = np.random.default_rng(seed)
    perm = np.arange(n, dtype=np.int64)
    member = np.zeros((reps, n), dtype=bool)
    sizes = np.empty(reps, dtype=np.int64)
    for r in range(reps):
        m = poisson_batch(rng, n, q, perm)
        rows = perm[:m]
        assert np.all(np.diff(rows) > 0) and (m == 0 or (rows[0] >= 0 and rows[-1] < n))
        member[r, rows] = True
        sizes[r] = m
    return member, sizes


@pytest.mark.parametrize("n, q", [(2000, 0.05), (500, 0.5), (3000, 0.002)])
def test_rows_are_sampled_independently_with_probability_q(n, q):
    reps = 4000
    member, sizes = _draws(n, q, reps)
    # the batch size is Binomial(n, q): its mean and variance (5 standard errors)
    mean, var = n * q, n * q * (1 - q)
    assert abs(sizes.mean() - mean) < 5 * np.sqrt(var / reps)
    assert abs(sizes.var() - var) < 5 * var * np.sqrt(2.0 / reps) + 5 * np.sqrt(var / reps)
    # every row is in with probability q: the worst row over n (5.5 standard errors, a
    # family-wise bound for n rows), and the average row
    freq = member.mean(axis=0)
    se = np.sqrt(q * (1 - q) / reps)
    assert np.max(np.abs(freq - q)) < 5.5 * se
    assert abs(freq.mean() - q) < 5 * se / np.sqrt(n)
    # independence: neighbouring rows (what a skip-based sampler could correlate) are in
    # together with probability q^2
    both = (member[:, 1:] & member[:, :-1]).mean()
    se2 = np.sqrt(q * q * (1 - q * q) / (reps * (n - 1)))
    assert abs(both - q * q) < 6 * se2 * np.sqrt(2)  # neighbouring pairs overlap: generous


def test_a_full_batch_rate_takes_every_row():
    perm = np.arange(10, dtype=np.int64)
    assert poisson_batch(np.random.default_rng(0), 10, 1.0, perm) == 10
    np.testing.assert_array_equal(perm, np.arange(10))
