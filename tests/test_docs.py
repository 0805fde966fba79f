"""The documentation's executable parts, without Sphinx.

* every Python code block of the README and of the pages under ``docs/`` runs as written (see
  :func:`python_blocks` for which blocks are Python): the blocks of one page in order, in one
  namespace, like a reader pasting them into a session. The pages other than the landing page
  (``docs/index.rst``) and the README may use the data ``X, y, X_test, y_test`` that the landing
  page's first block defines, as they say; nothing else is given to them;
* every gallery script ``examples/plot_*.py`` runs as plain Python (in this process, with a
  non-interactive matplotlib backend), so a broken example fails CI even where Sphinx is not
  installed; the scripts' own claims are checked where they make one;
* the API reference generator (``docs/_api.py``) covers every public name of the package;
* the full Sphinx build runs when Sphinx is installed (``-m slow``), warnings as errors.
"""

import ast
import importlib
import os
import re
import runpy
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from skdp.datasets import find_data_dir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))
DOCS = ROOT / "docs"
#: Directories under docs/ that the build generates (not pages anyone wrote).
GENERATED = {"_build", "api", "auto_examples", "gen_modules", "_generated", "_templates"}
PAGES = [ROOT / "README.md"] + sorted(
    p for p in DOCS.rglob("*.rst") if not GENERATED & set(p.relative_to(DOCS).parts[:-1])
)
#: The pages that must define everything they use (the others get the landing page's data).
SELF_CONTAINED = {"README.md", "docs/index.rst"}
#: Pages whose code takes more than a few seconds: run with ``pytest -m slow``.
SLOW_PAGES = frozenset({"docs/audit.rst"})  # four audits of 1000 to 2000 fits a side


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
_FIGURES = {}  # path -> number of matplotlib figures its run drew


def run_example(path, tmp_path):
    """Run an example script as ``__main__`` in ``tmp_path`` (once); return its global namespace."""
    import matplotlib.pyplot as plt

    path = Path(path)
    if path in _NAMESPACES:
        return _NAMESPACES[path]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    plt.close("all")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the gallery shows warnings; here errors matter
            _NAMESPACES[path] = runpy.run_path(str(path), run_name="__main__")
        _FIGURES[path] = len(plt.get_fignums())  # plt.show() leaves them open on Agg
    finally:
        plt.close("all")
        os.chdir(cwd)
    return _NAMESPACES[path]


# -- the code blocks of the README and the docs ---------------------------------------------------
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*(\S*)\s*$")
_FENCE = re.compile(r"^\s*```\s*(\S*)\s*$")


def _is_python(code):
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _indented_block(lines, start, indent):
    """The block of lines after ``start`` indented deeper than ``indent`` (blank lines and a
    directive's ``:option:`` lines skipped at its head), dedented; and the index after it."""
    i = start
    while i < len(lines) and (not lines[i].strip() or (
        lines[i].strip().startswith(":") and len(lines[i]) - len(lines[i].lstrip()) > indent
    )):
        i += 1
    if i == len(lines) or len(lines[i]) - len(lines[i].lstrip()) <= indent:
        return None, start
    depth = len(lines[i]) - len(lines[i].lstrip())
    body = []
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= depth):
        body.append(lines[i][depth:])
        i += 1
    return "\n".join(body).rstrip() + "\n", i


def python_blocks(path):
    """``[(line, code), ...]``: the Python code blocks of a page, in order.

    Markdown: fenced blocks tagged ``python`` or ``py``. reStructuredText: ``.. code-block::``
    (or ``code`` / ``sourcecode``) blocks tagged ``python``, ``py`` or ``python3``, and literal
    blocks (a paragraph ending in ``::``) whose text parses as Python, which is how Sphinx
    highlights them too (the pseudo-code and formula blocks of the optimizer pages do not
    parse). A ``python`` block that does not parse is returned, and fails when run.
    """
    lines = Path(path).read_text().splitlines()
    blocks = []
    if path.suffix == ".md":
        i = 0
        while i < len(lines):
            m = _FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            j = i + 1
            while j < len(lines) and not _FENCE.match(lines[j]):
                j += 1
            if m.group(1) in ("python", "py"):
                blocks.append((i + 1, textwrap.dedent("\n".join(lines[i + 1:j])) + "\n"))
            i = j + 1
        return blocks
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        m = _DIRECTIVE.match(line)
        literal = (
            not m and line.rstrip().endswith("::") and not line.lstrip().startswith("..")
        )
        if not (m or literal):
            i += 1
            continue
        code, after = _indented_block(lines, i + 1, indent)
        if code is None:
            i += 1
            continue
        if m and m.group(2) in ("python", "py", "python3"):
            blocks.append((i + 1, code))
        elif literal and _is_python(code):
            blocks.append((i + 1, code))
        i = after
    return blocks


def _page_id(path):
    return str(path.relative_to(ROOT))


def _landing_data():
    """X, y, X_test, y_test as the landing page's first block defines them."""
    _, code = python_blocks(DOCS / "index.rst")[0]
    ns = {"__name__": "__docs__"}
    exec(compile(code, "docs/index.rst", "exec"), ns)
    return {k: ns[k] for k in ("X", "y", "X_test", "y_test")}


def run_page(path, tmp_path):
    """Run the Python blocks of a page in order in one fresh namespace (in ``tmp_path``)."""
    rel = _page_id(path)
    ns = {"__name__": "__docs__"}
    if rel not in SELF_CONTAINED:
        ns.update(_landing_data())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for line, code in python_blocks(path):
            try:
                exec(compile(code, f"{rel}:{line}", "exec"), ns)
            except FileNotFoundError as exc:
                if "SKDP_DATA_DIR" not in str(exc) or find_data_dir() is not None:
                    raise AssertionError(
                        f"the code block at {rel}:{line} fails: {exc}\n{code}"
                    ) from exc
                # the shared data sets (../shared/data) are absent: the blocks before ran
                pytest.skip(f"{rel}:{line} needs the shared data sets (set SKDP_DATA_DIR)")
            except Exception as exc:
                raise AssertionError(
                    f"the code block at {rel}:{line} fails: {type(exc).__name__}: {exc}\n{code}"
                ) from exc
    finally:
        os.chdir(cwd)
    return ns


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


def test_code_blocks_are_found():
    found = {_page_id(p): len(python_blocks(p)) for p in PAGES_WITH_CODE}
    # the blocks of the issue (and the README's) are all seen, literal :: blocks included
    for page in ("README.md", "docs/index.rst", "docs/ledger.rst", "docs/audit.rst",
                 "docs/user_guide/privacy_record.rst", "docs/user_guide/preprocessing.rst",
                 "docs/user_guide/weights_and_sparse.rst"):
        assert found.get(page, 0) >= 1, page
    assert found["docs/user_guide/privacy_record.rst"] >= 2
    assert found["docs/audit.rst"] >= 2
    assert sum(found.values()) >= 15
    # pseudo-code blocks of the optimizer pages are not Python
    assert all(_is_python(code) for p in PAGES_WITH_CODE for _, code in python_blocks(p)
               if p.suffix == ".rst")


def test_the_other_pages_data_is_defined_on_the_landing_page():
    data = _landing_data()
    assert data["X"].shape[0] == data["y"].shape[0] > data["X_test"].shape[0] > 0
    text = (DOCS / "index.rst").read_text()
    assert "``X, y, X_test, y_test``" in text  # the page says the other pages use them


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if _page_id(p) in SLOW_PAGES else p
     for p in PAGES_WITH_CODE],
    ids=[_page_id(p) for p in PAGES_WITH_CODE],
)
def test_code_blocks_run(path, tmp_path, agg_backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the pages show warnings (delta, convergence); errors count
        run_page(path, tmp_path)


def test_there_are_examples():
    names = {p.name for p in EXAMPLES}
    for required in ("plot_quickstart.py", "plot_pipeline.py", "plot_grid_search_epsilon.py",
                     "plot_utility_vs_epsilon.py"):
        assert required in names


# Examples too long for the default run (over ~10 s on an idle core): run with ``pytest -m slow``
# (CI), which also builds the gallery with Sphinx.
SLOW_EXAMPLES = frozenset({"plot_utility_vs_epsilon.py", "plot_private_search.py"})


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


#: scikit-learn steps that learn state from the data they are fitted on (not private), and
#: FrozenEstimator (a step fitted beforehand, on other data).
NON_PRIVATE_STEPS = {
    "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer",
    "PowerTransformer", "KBinsDiscretizer", "PCA", "FrozenEstimator", "Normalizer", "normalize",
}
#: Where such a step is shown on purpose: plot_pipeline.py shows that PrivatePipeline refuses it.
SHOWN_REFUSED = {"plot_pipeline.py": {"StandardScaler"}}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_gallery_starts_from_raw_data(path):
    """Issue 14: the gallery uses no preprocessing outside skdp's private steps (a scaler fitted
    on a 'public' split of the same data, or a row normaliser, included)."""
    called = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            called.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None))
    used = (called & NON_PRIVATE_STEPS) - SHOWN_REFUSED.get(path.name, set())
    assert not used, f"{path.name} preprocesses the data outside skdp: {sorted(used)}"


@pytest.mark.slow
def test_at_least_four_examples_draw_a_figure(tmp_path, agg_backend):
    for path in EXAMPLES:
        run_example(path, tmp_path)
    drawing = sorted(p.name for p, n in _FIGURES.items() if n > 0)
    assert len(drawing) >= 4, drawing
    for name in ("plot_quickstart.py", "plot_utility_vs_epsilon.py", "plot_ledger.py",
                 "plot_grid_search_epsilon.py", "plot_private_search.py"):
        assert name in drawing


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
        p["epsilon"] for p in ns["search"].cv_results_["params"]
    ) + ns["search"].best_params_["epsilon"]
    assert basic <= expected_basic + 1e-9


@pytest.mark.slow
def test_utility_example_shapes(tmp_path, agg_backend):
    ns = run_example(ROOT / "examples" / "plot_utility_vs_epsilon.py", tmp_path)
    from skdp.optimizers import available_optimizers

    assert set(ns["scores"]) == set(available_optimizers())
    for arr in ns["scores"].values():
        assert arr.shape == (len(ns["epsilons"]), ns["n_seeds"])
        assert np.all((arr >= 0) & (arr <= 1))
    # raw features (no preprocessing): the default optimizer beats always predicting the
    # majority class at the two largest budgets; the example names the optimizers that do not
    for k in (-1, -2):
        assert ns["scores"]["dp_gdws"][k].mean() > ns["majority"] + 0.15
    assert ns["stuck"] == [o for o, a in ns["scores"].items() if a[-1].mean() <= ns["majority"]]
    assert "data_norm" in ns["exact"].get_params() and ns["exact"].data_norm == "auto"


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
    # every gallery example executed, at least four of them drawing a figure
    for path in EXAMPLES:  # executed: the page shows the script's output
        page = out / "auto_examples" / f"{path.stem}.html"
        assert "sphx-glr-script-out" in page.read_text(), path.name
    figures = {p.name.split("_00")[0] for p in (out / "_images").glob("sphx_glr_plot_*_00*.png")}
    assert len(figures) >= 4, figures
    # numpydoc renders a paragraph left between a docstring's sections as entries of the section
    # before it (a bold term with no description), and reST nests no inline markup: both show
    # the source's markup on the page
    for page in out.rglob("*.html"):
        if {"_sources", "_modules", "auto_examples"} & set(page.relative_to(out).parts):
            continue  # sources, and the gallery's code comments, keep their backquotes
        html = page.read_text()
        assert "``" not in html, f"unrendered inline literal in {page.relative_to(out)}"
        stray = re.findall(r"<dt><strong>([^<]{60,})</strong></dt><dd></dd>", html)
        assert not stray, f"a stray paragraph read as a term in {page.relative_to(out)}: {stray[0]}"
    # the Adult benchmark figure is in the user guide
    assert (out / "_images" / "utility_adult.png").is_file()
    assert "utility_adult.png" in (out / "user_guide" / "choosing_an_optimizer.html").read_text()
