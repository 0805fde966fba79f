"""Order of the gallery examples: the tutorial path first, then any other ``plot_*.py`` by name."""

from pathlib import Path

#: Examples shown first, in this order; examples not listed follow in alphabetical order, so a new
#: ``examples/plot_*.py`` appears without editing the docs.
FIRST = (
    "plot_quickstart.py",
    "plot_pipeline.py",
    "plot_grid_search_epsilon.py",
    "plot_utility_vs_epsilon.py",
    "plot_private_search.py",
    "plot_ledger.py",
)


class ExampleOrder:
    """sphinx-gallery ``within_subsection_order`` key (named as ``"_gallery.ExampleOrder"``)."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = Path(filename).name
        rank = FIRST.index(name) if name in FIRST else len(FIRST)
        return f"{rank:03d}_{name}"

    def __repr__(self):  # sphinx-gallery caches the config by its repr
        return "<ExampleOrder>"
