"""Cold start: ``import skdp`` imports no numba, a first fit that compiles says so once, a
full-batch fit compiles the gradient sum alone, and a mini-batch fit no more than it uses."""

import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest

from skdp import _compile_notice

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, **env):
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT, **env}, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_import_skdp_does_not_import_numba():
    out = _run("""
        import sys
        import skdp
        from skdp import DPLinearSVC, DPLogisticRegression, DPRidge, PrivacyLedger
        print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))
    """)
    assert out.strip() == "[]"


def test_compile_notice_logs_once_on_a_real_compile(monkeypatch, caplog, capsys):
    from numba import njit

    monkeypatch.setattr(_compile_notice, "_announced", False)

    @njit  # a new function: its first call compiles
    def fresh(x):
        return x + 1.0

    with caplog.at_level(logging.INFO, logger="skdp"):
        with _compile_notice.compile_notice("dp_test", verbose=1):
            fresh(1.0)
            fresh(2)  # a second compile in the same block: no second message
        with _compile_notice.compile_notice("dp_test", verbose=1):
            fresh(3j)  # announced already in this process: silent
    records = [r for r in caplog.records if r.name == "skdp"]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert "compiling numba kernels for dp_test" in records[0].getMessage()
    assert capsys.readouterr().out.count("compiling numba kernels for dp_test") == 1


def test_compile_notice_is_silent_without_a_compile(monkeypatch, caplog):
    from numba import njit

    monkeypatch.setattr(_compile_notice, "_announced", False)

    @njit
    def compiled(x):
        return x * 2.0

    compiled(1.0)  # compiled before the block
    with caplog.at_level(logging.INFO, logger="skdp"):
        with _compile_notice.compile_notice("dp_test"):
            compiled(2.0)
    assert not [r for r in caplog.records if r.name == "skdp"]
    assert not _compile_notice._announced


def test_full_batch_fits_in_memory_compile_the_gradient_sum_only():
    """dp_gdws, dp_nag_opt, dp_masg and dp_sgld in full batch (their default) run their steps in
    Python around ``block_gradient_sum``: no fused optimizer kernel is compiled or loaded, no
    jitted noise sampler either, and binary targets reach the sum 1-D (its scalar path alone).
    Outermost dispatchers only: they count a kernel loaded from the cache too."""
    out = _run("""
        import json, warnings
        import numpy as np
        from skdp import DPLogisticRegression
        from skdp.optimizers import _glm, _nesterov, dp_gdws, dp_sgld
        from skdp.privacy import noise
        rng = np.random.default_rng(0)
        X = rng.standard_normal((300, 4)); y = (X[:, 0] > 0).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in ("dp_gdws", "dp_nag_opt", "dp_masg", "dp_sgld"):
                DPLogisticRegression(optimizer=name, random_state=0).fit(X, y)
        fused = [dp_gdws._dp_gdws_kernel, _nesterov.nesterov_kernel, dp_sgld._sgld_kernel,
                 noise.add_noise, noise.add_gaussian_noise]
        sums = _glm.block_gradient_sum.signatures
        print(json.dumps({"fused": [len(k.signatures) for k in fused],
                          "target_ndim": [s[1].ndim for s in sums]}))
    """)
    res = json.loads(out.strip().splitlines()[-1])
    assert res["fused"] == [0, 0, 0, 0, 0]
    assert res["target_ndim"] == [1]


@pytest.mark.slow
def test_mini_batch_fit_compiles_what_it_uses_only(tmp_path):
    """A full-batch private fit (the default) leaves the Poisson sampler uncompiled; a Gaussian
    mini-batch fit of a binary model compiles the sampler, but neither the Laplace sampler nor
    the vector (multi-output) gradient path. In a fresh process with an empty numba cache (a
    kernel loaded from the cache compiles none of the functions it calls)."""
    out = _run("""
        import numpy as np
        from skdp import DPGDWS, DPLogisticRegression
        from skdp.optimizers._glm import _add_clipped_gradients, poisson_batch
        from skdp.privacy.noise import add_laplace_noise
        rng = np.random.default_rng(0)
        X = rng.standard_normal((200, 3)); y = (X[:, 0] > 0).astype(int)
        DPLogisticRegression(random_state=0).fit(X, y)
        print(len(poisson_batch.signatures))
        DPLogisticRegression(optimizer=DPGDWS(batch_size=50), random_state=0).fit(X, y)
        print(len(poisson_batch.signatures), len(add_laplace_noise.signatures),
              len(_add_clipped_gradients.signatures))
    """, NUMBA_CACHE_DIR=str(tmp_path))
    assert out.split() == ["0", "1", "0", "0"]


@pytest.mark.slow
def test_first_fit_with_an_empty_cache_says_so_once(tmp_path):
    """End to end with an empty numba cache: the first fit logs the message (and prints it at
    verbose=1) once; a later process on the filled cache compiles nothing and is silent."""
    code = """
        import logging, numpy as np
        from skdp import DPLogisticRegression
        logging.basicConfig(level=logging.INFO, format="LOG %(name)s %(message)s")
        rng = np.random.default_rng(0)
        X = rng.standard_normal((200, 3)); y = (X[:, 0] > 0).astype(int)
        DPLogisticRegression(random_state=0, verbose=1).fit(X, y)
        DPLogisticRegression(random_state=0).fit(X, y)
    """
    import subprocess as _sp

    def stderr_and_out():
        res = _sp.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT, "NUMBA_CACHE_DIR": str(tmp_path)},
            timeout=600,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        return res.stdout, res.stderr

    out, err = stderr_and_out()
    assert err.count("LOG skdp compiling numba kernels for dp_gdws") == 1
    assert out.count("[skdp] compiling numba kernels for dp_gdws") == 1
    out, err = stderr_and_out()
    assert "compiling numba kernels" not in err + out


@pytest.mark.slow  # a fresh interpreter compiling dp_scd's kernels: 15 s
def test_dp_scd_k1_fits_take_the_scalar_path(tmp_path):
    """dp_scd picks its update loop when the kernel is typed: binary logistic, binary squared
    hinge and ridge fits type the kernel with the scalar path tag, a multiclass fit with the
    vector one. With an empty cache, the K = 1 fits compile none of the vector updates
    (multinomial Newton, vector clipping), about half of dp_scd's compile time."""
    out = _run("""
        import json, warnings
        import numpy as np
        from skdp import DPLinearSVC, DPLogisticRegression, DPRidge
        from skdp.optimizers import _scd_kernels as k
        rng = np.random.default_rng(0)
        X = rng.standard_normal((300, 4)); y = (X[:, 0] > 0).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPLogisticRegression(optimizer="dp_scd", random_state=0).fit(X, y)
            DPLinearSVC(optimizer="dp_scd", random_state=0).fit(X, y)
            DPRidge(random_state=0).fit(X, X[:, 0])
            scalar = [s[-1].ndim for s in k.dp_scd_kernel.signatures]
            vector_callees = [len(f.signatures) for f in
                              (k.coordinate_update, k._multinomial_newton, k.clip_update)]
            DPLogisticRegression(optimizer="dp_scd", random_state=0).fit(X, X[:, 0].round() % 3)
        both = sorted({s[-1].ndim for s in k.dp_scd_kernel.signatures})
        print(json.dumps({"scalar": scalar, "vector_callees": vector_callees, "both": both}))
    """, NUMBA_CACHE_DIR=str(tmp_path))
    res = json.loads(out.strip().splitlines()[-1])
    assert res["scalar"] and set(res["scalar"]) == {1}
    assert res["vector_callees"] == [0, 0, 0]
    assert res["both"] == [1, 2]
