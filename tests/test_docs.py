"""The documentation's executable parts, without Sphinx.

* every gallery script ``examples/plot_*.py`` runs as plain Python (in this process, with a
  non-interactive matplotlib backend), so a broken example fails CI even where Sphinx is not
  installed; the scripts' own claims are checked where they make one;
* the API reference generator (``docs/_api.py``) covers every public name of the package;
* the full Sphinx build runs when Sphinx is installed (``-m slow``).
"""

import importlib
import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))
DOCS = ROOT / "docs"


@pytest.fixture
def agg_backend():
    mpl = pytest.importorskip("matplotlib")
    previous = mpl.get_backend()
    mpl.use("Agg", force=True)
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
    mpl.use(previous, force=True)


_NAMESPACES = {}  # path -> globals of its run: the claims tests reuse the run of the smoke test


def run_example(path, tmp_path):
    """Run an example script as ``__main__`` in ``tmp_path`` (once); return its global namespace."""
    path = Path(path)
    if path in _NAMESPACES:
        return _NAMESPACES[path]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the gallery shows warnings; here errors matter
            _NAMESPACES[path] = runpy.run_path(str(path), run_name="__main__")
    finally:
        os.chdir(cwd)
    return _NAMESPACES[path]


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    for required in ("plot_quickstart.py", "plot_pipeline.py", "plot_grid_search_epsilon.py",
                     "plot_utility_vs_epsilon.py"):
        assert required in names


# Examples too long for the default run (over ~20 s): run with ``pytest -m slow``.
SLOW_EXAMPLES = frozenset()


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_EXAMPLES else p for p in EXAMPLES],
    ids=[p.stem for p in EXAMPLES],
)
def test_example_runs(path, tmp_path, agg_backend):
    text = path.read_text()
    # sphinx-gallery needs a docstring header whose first line is the title, underlined.
    assert text.lstrip().startswith('"""'), f"{path.name}: no header docstring"
    header = text.lstrip()[3:].lstrip("\n").splitlines()
    assert len(header) >= 2 and set(header[1].strip()) == {"="}, f"{path.name}: no title"
    run_example(path, tmp_path)


def test_quickstart_claims(tmp_path, agg_backend):
    ns = run_example(ROOT / "examples" / "plot_quickstart.py", tmp_path)
    clf, exact = ns["clf"], ns["exact"]
    assert 0 < clf.epsilon_ <= 1.0
    assert clf.delta_ == pytest.approx(min(1e-5, 0.1 / ns["X_private"].shape[0]))
    assert np.isinf(exact.epsilon_)
    # raw data: no preprocessing, the row bound was released inside the fit's budget
    assert clf.get_params()["data_norm"] == "auto"
    assert "data_norm" in clf.privacy_record_.details["private_bounds"]
    assert clf.score(ns["X_test"], ns["y_test"]) > 0.8


def test_pipeline_example_one_budget(tmp_path, agg_backend):
    ns = run_example(ROOT / "examples" / "plot_pipeline.py", tmp_path)
    for model, eps in ((ns["model"], 1.0), (ns["small"], 0.1)):
        assert 0 < model.epsilon_ <= eps
    assert ns["model"].score(ns["X_test"], ns["y_test"]) > 0.75
    assert 0 < ns["ridge"].epsilon_ <= 1.0


def test_grid_search_example_composes_every_fit(tmp_path, agg_backend):
    ns = run_example(ROOT / "examples" / "plot_grid_search_epsilon.py", tmp_path)
    n_cand, n_folds = ns["n_candidates"], ns["n_folds"]
    assert len(ns["fits"]) == n_cand * n_folds
    assert {fold for fold, _, _ in ns["fits"]} == set(range(n_folds))
    # one record is in (n_folds - 1) training folds of every candidate, and in the refit
    assert ns["n_releases"] == n_cand * (n_folds - 1) + 1
    refit_eps = ns["refit"].epsilon_
    composed, basic = max(ns["composed_eps"]), max(ns["basic_eps"])
    # the search costs more than the model it returns, and RDP composition beats adding up
    assert refit_eps < composed < basic
    expected_basic = (n_folds - 1) * sum(
        p["dplogisticregression__epsilon"] for p in ns["search"].cv_results_["params"]
    ) + ns["search"].best_params_["dplogisticregression__epsilon"]
    assert basic <= expected_basic + 1e-9


def test_utility_example_shapes(tmp_path, agg_backend):
    ns = run_example(ROOT / "examples" / "plot_utility_vs_epsilon.py", tmp_path)
    from skdp.optimizers import available_optimizers

    assert set(ns["scores"]) == set(available_optimizers())
    for arr in ns["scores"].values():
        assert arr.shape == (len(ns["epsilons"]), ns["n_seeds"])
        assert np.all((arr >= 0) & (arr <= 1))
    # with the largest budget every optimizer beats always predicting the majority class
    best = np.array([arr[-1].mean() for arr in ns["scores"].values()])
    assert np.all(best > ns["majority"]), best


# -- the API reference --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def api():
    sys.path.insert(0, str(DOCS))
    try:
        import _api

        yield _api
    finally:
        sys.path.remove(str(DOCS))


def test_api_reference_covers_every_public_name(api):
    sections, aliases, failures = api.collect()
    modules, _ = api.public_modules()
    documented = {f"{m}.{n}" for m, entries in sections for n, _ in entries}
    assert {"skdp.linear_model.DPLogisticRegression", "skdp.privacy.PrivacyRecord",
            "skdp.optimizers.dp_gdws.DPGDWS", "skdp.datasets.load_adult"} <= documented
    for modname in modules:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            if name.startswith("__"):
                continue
            full = f"{modname}.{name}"
            if full in failures:
                continue
            assert full in documented or full in aliases, f"{full} has no API page"
            assert aliases.get(full, full) in documented
    # every top-level name points at a documented object
    import skdp

    for name in skdp.__all__:
        if name.startswith("__") or f"skdp.{name}" in failures:
            continue
        assert aliases[f"skdp.{name}"] in documented
    # each object is documented exactly once
    homes = [f"{m}.{n}" for m, entries in sections for n, _ in entries]
    assert len(homes) == len(set(homes))


def test_every_documented_callable_has_a_docstring(api):
    import inspect

    sections, _, _ = api.collect()
    missing = []
    for modname, entries in sections:
        mod = importlib.import_module(modname)
        for name, kind in entries:
            if kind == "data":
                continue
            obj = getattr(mod, name)
            if not (inspect.getdoc(obj) or "").strip():
                missing.append(f"{modname}.{name}")
    assert not missing, missing


def test_api_pages_written(api, tmp_path):
    sections, _, _ = api.write_api(tmp_path)
    index = (tmp_path / "index.rst").read_text()
    for modname, entries in sections:
        page = (tmp_path / f"{modname}.rst").read_text()
        assert f".. automodule:: {modname}" in page
        for name, _ in entries:
            assert f"   {name}\n" in page
        assert f"   {modname}\n" in index


# -- the Sphinx build ---------------------------------------------------------------------------
@pytest.mark.slow
def test_sphinx_build(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    pytest.importorskip("sphinx_gallery")
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", str(DOCS), str(out)],
        capture_output=True, text=True, timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (out / "index.html").is_file()
    assert (out / "auto_examples" / "plot_quickstart.html").is_file()
    assert (out / "api" / "index.html").is_file()
