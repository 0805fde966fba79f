"""Generate the API reference pages from the package's ``__all__`` lists.

Run by ``conf.py`` at every build (and importable without Sphinx, which is how
``tests/test_docs.py`` checks that every public name has a page). Every public module of skdp
(no component starting with an underscore) that defines ``__all__`` gets a page listing its
names in an autosummary table; each object is documented once, in the first module of
:data:`MODULE_ORDER` (then alphabetical order) that exports it, so re-exports such as
``skdp.privacy.GaussianEvent`` (defined in ``skdp.privacy.events``) are not described twice.
Optimizer modules that do not exist yet, or fail to import while they are being written, are
left out with a warning instead of breaking the build.
"""

import importlib
import inspect
import pkgutil
from pathlib import Path

#: Modules in the order of the reference; modules found by the walk but not listed come after,
#: in alphabetical order.
MODULE_ORDER = (
    "skdp.linear_model",
    "skdp.optimizers",
    "skdp.optimizers.dp_gdws",
    "skdp.optimizers.dp_scd",
    "skdp.optimizers.dp_nag_opt",
    "skdp.optimizers.dp_masg",
    "skdp.optimizers.dp_sgld",
    "skdp.optimizers.dp_nsgd_tree",
    "skdp.preprocessing",
    "skdp.pipeline",
    "skdp.privacy",
    "skdp.model_selection",
    "skdp.ledger",
    "skdp.progress",
    "skdp.audit",
    "skdp.losses",
    "skdp.datasets",
)

#: One-line titles of the module pages.
TITLES = {
    "skdp.linear_model": "Estimators",
    "skdp.optimizers": "Optimizers: registry and contract",
    "skdp.preprocessing": "Private preprocessing",
    "skdp.pipeline": "Private pipelines: one budget",
    "skdp.privacy": "Privacy accounting",
    "skdp.model_selection": "Private model selection",
    "skdp.ledger": "Privacy ledger",
    "skdp.progress": "Fit progress",
    "skdp.audit": "Privacy auditing",
    "skdp.losses": "Losses",
    "skdp.datasets": "Data sets",
}

SKIP_MODULES = ("skdp.__main__",)


def public_modules(package="skdp"):
    """(names, failures): importable public modules of ``package``, and the ones that failed.

    ``failures`` maps a module name to the repr of its import error.
    """
    pkg = importlib.import_module(package)
    names, failures = [], {}
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + ".", onerror=lambda n: None):
        name = info.name
        if name in SKIP_MODULES or any(part.startswith("_") for part in name.split(".")):
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # a module being written must not break the docs
            failures[name] = repr(exc)
            continue
        names.append(name)
    names.sort(key=_order_key)
    return names, failures


def _order_key(modname):
    """Listed modules in :data:`MODULE_ORDER`; others right after their nearest listed parent."""
    rank = {m: i for i, m in enumerate(MODULE_ORDER)}
    if modname in rank:
        return rank[modname], 0, modname
    parts = modname.split(".")
    for k in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:k])
        if parent in rank:
            return rank[parent], 1, modname
    return len(rank), 1, modname


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or hasattr(obj, "py_func"):
        return "function"  # numba dispatchers have py_func
    return "data"


def collect(package="skdp"):
    """The reference plan.

    Returns
    -------
    sections : list of (module, [(name, kind), ...])
        Each public name at its documented home, modules in reference order; modules whose names
        are all documented elsewhere are omitted.
    aliases : dict
        ``"module.name" -> "home.name"`` for every re-export (the top-level ``skdp`` names
        included).
    failures : dict
        Modules that could not be imported.
    """
    modules, failures = public_modules(package)
    seen = {}  # (name, id(obj)) -> home module
    sections, aliases = [], {}
    for modname in modules:
        mod = importlib.import_module(modname)
        entries = []
        for name in getattr(mod, "__all__", ()):
            if name.startswith("__"):
                continue
            try:
                obj = getattr(mod, name)
            except Exception as exc:
                failures[f"{modname}.{name}"] = repr(exc)
                continue
            key = (name, id(obj))
            if key in seen:
                aliases[f"{modname}.{name}"] = f"{seen[key]}.{name}"
                continue
            seen[key] = modname
            entries.append((name, _kind(obj)))
        if entries:
            sections.append((modname, entries))
    top = importlib.import_module(package)
    for name in getattr(top, "__all__", ()):
        if name.startswith("__"):
            continue  # __version__
        try:
            obj = getattr(top, name)
        except Exception as exc:  # a lazily imported name whose module is being written
            failures[f"{package}.{name}"] = repr(exc)
            continue
        home = seen.get((name, id(obj)))
        if home is not None:
            aliases[f"{package}.{name}"] = f"{home}.{name}"
    # Optimizer classes the top level resolves lazily (``from skdp import DPSCD``).
    try:
        from skdp import optimizers
        for key, (module, cls) in optimizers._REGISTRY.items():
            home = f"{package}.optimizers.{module}"
            if any(m == home for m, _ in sections):
                aliases.setdefault(f"{package}.{cls}", f"{home}.{cls}")
    except Exception:  # pragma: no cover - the registry is part of the package
        pass
    return sections, aliases, failures


def _module_page(modname, entries):
    heading = f"{modname}: {TITLES[modname]}" if modname in TITLES else modname
    lines = [
        ".. This page is generated by docs/_api.py at every build; do not edit.",
        "",
        heading,
        "=" * len(heading),
        "",
        f".. automodule:: {modname}",
        "   :no-members:",
        "",
        f".. currentmodule:: {modname}",
        "",
    ]
    groups = [("Classes", "class"), ("Functions", "function"), ("Constants", "data")]
    for label, kind in groups:
        names = [n for n, k in entries if k == kind]
        if not names:
            continue
        lines += [label, "-" * len(label), "", ".. autosummary::", "   :toctree: generated/"]
        lines += [f"   :template: {kind}.rst", "", *(f"   {n}" for n in names), ""]
    return "\n".join(lines)


def _index_page(sections, aliases, failures, package="skdp"):
    lines = [
        ".. This page is generated by docs/_api.py at every build; do not edit.",
        "",
        "API reference",
        "=============",
        "",
        "Every name listed in the ``__all__`` of a public module of skdp, documented once where",
        "it is defined or first exported. The most used names are importable from the top level:",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - top-level name",
        "     - documented as",
    ]
    for alias in sorted(a for a in aliases if a.count(".") == 1):
        target = aliases[alias]
        lines += [f"   * - ``{alias}``", f"     - :obj:`{target}`"]
    lines += [
        f"   * - ``{package}.__version__``",
        "     - the version string",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
        *(f"   {m}" for m, _ in sections),
        "",
    ]
    if failures:
        lines += [
            ".. warning::",
            "",
            "   These modules could not be imported when the documentation was built and are",
            "   missing from the reference:",
            "",
            *(f"   * ``{m}``: ``{err}``" for m, err in sorted(failures.items())),
            "",
        ]
    return "\n".join(lines)


def write_api(outdir, package="skdp"):
    """Write ``index.rst`` and one page per module into ``outdir``; return the plan.

    Files whose content does not change are not rewritten, so that Sphinx's incremental build
    does not redo them.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    sections, aliases, failures = collect(package)
    pages = {f"{m}.rst": _module_page(m, e) for m, e in sections}
    pages["index.rst"] = _index_page(sections, aliases, failures, package)
    for fname, text in pages.items():
        path = outdir / fname
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for stale in outdir.glob("*.rst"):
        if stale.name not in pages:
            stale.unlink()
    return sections, aliases, failures
