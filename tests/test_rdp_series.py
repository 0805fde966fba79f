"""The subsampled-Gaussian RDP series, evaluated for all orders at once, against a 50-digit
computation of the same sums and against the same series taken one order at a time."""

from decimal import Decimal, getcontext
import math

import numpy as np
import pytest

from skdp.privacy.rdp import DEFAULT_ORDERS, EXTRA_ORDERS, rdp_poisson_subsampled_gaussian


def _decimal_rdp(q, sigma, alpha):
    """RDP at integer ``alpha``: log(A_alpha) / (alpha - 1), A_alpha summed in 50-digit decimals
    (Mironov, Talwar, Zhang 2019: sum_k C(alpha, k) q^k (1 - q)^(alpha - k) e^((k^2 - k) / 2 sigma^2))."""
    getcontext().prec = 50
    q, sigma = Decimal(q), Decimal(sigma)
    total = sum(
        Decimal(math.comb(alpha, k)) * q**k * (1 - q) ** (alpha - k)
        * (Decimal(k * k - k) / (2 * sigma * sigma)).exp()
        for k in range(alpha + 1)
    )
    return float(total.ln() / (alpha - 1))


@pytest.mark.parametrize("q", [1e-5, 1e-3, 0.05, 0.5, 0.99])
@pytest.mark.parametrize("sigma", [0.5, 1.0, 4.0, 50.0])
def test_integer_orders_match_a_fifty_digit_sum(q, sigma):
    orders = np.array([2.0, 3.0, 7.0, 16.0, 63.0, 128.0, 256.0])
    mine = rdp_poisson_subsampled_gaussian(q, sigma, orders)
    reference = np.array([_decimal_rdp(q, sigma, int(a)) for a in orders])
    # atol: log C(alpha, k) is a difference of gammaln values near log(alpha!) (~1e3 at alpha
    # 256, rounding ~1e-13), which leaves ~1e-16 of absolute error in a tiny RDP (q = 1e-5)
    np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("q,sigma", [(1e-4, 0.4), (0.01, 1.0), (0.2, 2.5), (0.7, 0.7), (0.01, 30.0)])
def test_all_orders_at_once_equal_one_order_at_a_time(q, sigma):
    # integer, fractional, huge and infinite orders mixed, out of order: each position gets its
    # own order's value (no mixing of rows or segments), non-converged fractional orders stay inf
    orders = np.concatenate([DEFAULT_ORDERS[::-1], EXTRA_ORDERS[:3], [np.inf, 1.05, 2.5e3 + 0.5]])
    together = rdp_poisson_subsampled_gaussian(q, sigma, orders)
    alone = np.array([rdp_poisson_subsampled_gaussian(q, sigma, [a])[0] for a in orders])
    assert np.array_equal(np.isfinite(together), np.isfinite(alone))
    finite = np.isfinite(alone)
    fractional = finite & (orders != np.round(orders))
    assert np.array_equal(together[fractional], alone[fractional])  # the same operations per row
    np.testing.assert_allclose(together[finite], alone[finite], rtol=1e-12, atol=1e-20)
    assert np.isinf(together[orders == np.inf]).all()


def test_rdp_of_no_orders_is_empty():
    assert rdp_poisson_subsampled_gaussian(0.01, 1.0, []).shape == (0,)
