"""Sphinx configuration of the skdp documentation.

Build (from the repository root)::

    pip install ".[docs]" && sphinx-build -b html docs docs/_build/html

Warnings are printed; add ``-W --keep-going`` to turn them into a failing exit code, and
``-D plot_gallery=0`` to skip running the gallery examples (a fast build of the text only).
"""

import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # docs/_api.py, docs/_gallery.py

import skdp  # noqa: E402  (the installed package; `pip install -e .` documents the checkout)

import _api  # noqa: E402

# -- project -----------------------------------------------------------------------------------
project = "skdp"
author = "the skdp developers"
copyright = "the skdp developers, BSD-3-Clause"
release = skdp.__version__
version = ".".join(release.split(".")[:2])

# -- extensions --------------------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "_generated",
    "README.md",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]
root_doc = "index"
default_role = "literal"  # `x` in the guide is code, not a cross-reference
pygments_style = "sphinx"

# The API pages are generated from the package's __all__ lists at every build, so a new public
# name (or a new optimizer module) appears without editing the docs.
_sections, _aliases, _failures = _api.write_api(HERE / "api")
for _mod, _err in sorted(_failures.items()):
    warnings.warn(f"skdp docs: module {_mod} could not be imported and is left out: {_err}")

# Pages written alongside the code by other parts of the project: linked when present, so that
# the build does not depend on them existing. ``|page_<name>|`` in any page is a link to the
# page, or its plain title while it does not exist.
OPTIONAL_PAGES = {
    "model_selection": "Private model selection",
    "ledger": "The privacy ledger",
    "audit": "Auditing a model",
}
_present = [name for name in OPTIONAL_PAGES if (HERE / f"{name}.rst").is_file()]
_generated = HERE / "_generated"
_generated.mkdir(exist_ok=True)
_toc = ""
if _present:
    _toc = ".. toctree::\n   :maxdepth: 1\n   :caption: Topics\n\n" + "".join(
        f"   {name}\n" for name in _present
    )
_toc_file = _generated / "optional_toc.rst"
if not _toc_file.exists() or _toc_file.read_text() != _toc:
    _toc_file.write_text(_toc)


def _substitution(key, docname, title):
    if (HERE / f"{docname}.rst").is_file():
        return f".. |{key}| replace:: :doc:`{title} </{docname}>`\n"
    return f".. |{key}| replace:: *{title}*\n"


rst_epilog = "".join(
    _substitution(f"page_{name}", name, title) for name, title in OPTIONAL_PAGES.items()
) + "".join(
    _substitution(name, f"optimizers/{name}", name)
    for name in ("dp_gdws", "dp_scd", "dp_nag_opt", "dp_masg", "dp_sgld", "dp_nsgd_tree")
)

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"
autodoc_inherit_docstrings = True

numpydoc_show_class_members = False  # members are listed by the autosummary class template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- gallery -----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # every examples/plot_*.py is executed; anything else is shown without running
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|/_",
    "within_subsection_order": "_gallery.ExampleOrder",
    "doc_module": ("skdp",),
    "backreferences_dir": "gen_modules/backreferences",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "matplotlib_animations": False,
    "min_reported_time": 1,
}

# -- HTML --------------------------------------------------------------------------------------
try:
    import furo  # noqa: F401

    html_theme = "furo"
except ImportError:  # the build still works with Sphinx's built-in theme
    html_theme = "alabaster"
html_title = f"skdp {release}"
html_static_path = []
html_show_sourcelink = False

if os.environ.get("SKDP_DOCS_NITPICKY"):
    nitpicky = True  # report every unresolved cross-reference (for docs maintenance)


# -- aliases -----------------------------------------------------------------------------------
# Names re-exported elsewhere (``skdp.DPLogisticRegression``, ``skdp.privacy.events.GaussianEvent``)
# are documented once, at their home; a cross-reference to an alias resolves to the home page.
SKLEARN_API = "https://scikit-learn.org/stable/modules/generated/{}.html"


def _resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if target.startswith("sklearn.") and node["reftype"] in ("class", "func", "obj"):
        # No intersphinx (the build must work offline): link scikit-learn's API pages, whose
        # addresses follow the public name.
        from docutils import nodes

        ref = nodes.reference("", "", internal=False, refuri=SKLEARN_API.format(target))
        ref.append(contnode)
        return ref
    home = _aliases.get(target)
    if home is None:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], home, node, contnode
    )


# A constant re-exported by a package (``skdp.privacy.DEFAULT_ORDERS``) has its ``#:`` comment in
# the module that defines it; without this, autodoc would show the docstring of its *type*
# (numpy's ndarray, str, ...).
def _constant_doc(app, what, name, obj, options, lines):
    if what != "data" or not name.startswith("skdp."):
        return
    from sphinx.pycode import ModuleAnalyzer

    short = name.rsplit(".", 1)[-1]
    candidates = [name.rsplit(".", 1)[0]]
    candidates += [a.rsplit(".", 1)[0] for a, home in _aliases.items() if home == name]
    for modname in candidates:
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:
            continue
        comment = docs.get(("", short))
        if comment:
            lines[:] = list(comment)
            return
    type_doc = (type(obj).__doc__ or "").strip()
    if type_doc and "\n".join(lines).strip().startswith(type_doc.splitlines()[0].strip()):
        lines[:] = []


def setup(app):
    app.connect("missing-reference", _resolve_alias)
    app.connect("autodoc-process-docstring", _constant_doc, priority=100)
