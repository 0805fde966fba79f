"""secure_mode: noise and batches from randomgen's ChaCha20, the privacy accounting unchanged."""

import sys

import numpy as np
import pytest
from scipy import stats

from skdp import DPLogisticRegression, DPRidge
from skdp._validation import make_generator
from skdp.optimizers import available_optimizers
from skdp.privacy.noise import add_gaussian_noise

from ._helpers import breast_cancer, diabetes

randomgen = pytest.importorskip("randomgen")


def test_secure_generator_is_chacha_and_seeded_like_the_default():
    g = make_generator(7, secure=True)
    assert isinstance(g.bit_generator, randomgen.ChaCha)
    a, b = make_generator(7, secure=True).random(5), make_generator(7, secure=True).random(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, make_generator(8, secure=True).random(5))
    assert not np.array_equal(a, make_generator(7).random(5))  # not numpy's PCG64 stream
    assert isinstance(make_generator(None, secure=True).bit_generator, randomgen.ChaCha)


def test_chacha_noise_in_the_jitted_chokepoint_is_gaussian():
    v = np.zeros(100_000)
    add_gaussian_noise(make_generator(3, secure=True), v, 2.0)
    assert stats.kstest(v / 2.0, "norm").pvalue > 1e-3


@pytest.mark.parametrize("optimizer", available_optimizers())
def test_secure_fit_is_reproducible_and_spends_the_same_budget(optimizer):
    X, y = breast_cancer()
    a = DPLogisticRegression(optimizer=optimizer, secure_mode=True, random_state=1).fit(X, y)
    b = DPLogisticRegression(optimizer=optimizer, secure_mode=True, random_state=1).fit(X, y)
    plain = DPLogisticRegression(optimizer=optimizer, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, plain.coef_)  # a different random stream
    assert a.epsilon_ == plain.epsilon_ and a.delta_ == plain.delta_
    assert a.score(X, y) > 0.7


def test_secure_mode_without_randomgen_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "randomgen", None)
    with pytest.raises(ImportError, match=r"skdp\[secure\]"):
        DPRidge(secure_mode=True).fit(*diabetes())
