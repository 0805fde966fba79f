"""Several targets: DPRidge on a 2-D y (one fit) against MultiOutputRegressor (one fit per target).

Run: ``python benchmarks/bench_multi_output.py [--seeds 5]`` (the wine rows need
``winequality-white.csv`` in ``SKDP_DATA_DIR`` or ``../shared/data``; skipped otherwise).

Writes ``benchmarks/results/multi_output.md``: the test R^2 (uniform average over the targets,
mean over the seeds) of

* ``joint``: ``DPRidge(epsilon=e)`` at its defaults fitted on the K-column y, one guarantee of
  epsilon e;
* ``wrapper``: ``MultiOutputRegressor(DPRidge(epsilon=e1))``, K fits whose composed guarantee
  (RDP accountant, at the same delta) is epsilon e: ``e1`` is the largest per-fit epsilon that
  keeps the composition of the K fits' events within e, found by bisection on the events
  (public: n, K, e and delta only);
* scikit-learn's ``make_pipeline(StandardScaler(), Ridge())``, not private.

Both private models read the features as they are (the defaults' private row bound); a
:class:`~skdp.preprocessing.PrivateRobustScaler` in front would add its own noise to both (and
to the wrapper K times).

Data: white wine's quality and alcohol from its other ten measurements, raw (n = 1000 and
4000 training rows, the rest for the test), and ``make_regression`` with 10 features and three
targets (n = 1000 and 4000, 2000 test rows). Delta 1e-6 (each wrapper fit at 1e-6 / K);
seed s fixes the split and the fits' randomness.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import DPRidge
from skdp.datasets import _read_wine, find_data_dir
from skdp.privacy import ComposedEvent, compute_epsilon

RESULTS = Path(__file__).parent / "results"
DELTA = 1e-6
EPSILONS = (0.3, 1.0, 3.0)


def _ridge(epsilon, delta, seed):
    return DPRidge(epsilon=epsilon, delta=delta, random_state=seed)


def per_fit_epsilon(total, X, y, K):
    """The largest e1 whose K fits' events compose to at most ``total`` at DELTA (their
    events depend on n, the budget and the rules only: public)."""
    lo, hi = total / K, total
    for _ in range(25):
        mid = (lo + hi) / 2.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            event = _ridge(mid, DELTA / K, 0).fit(X, y).dp_event_
        if compute_epsilon(ComposedEvent((event,) * K), DELTA) <= total:
            lo = mid
        else:
            hi = mid
    return lo


def _cases():
    d = find_data_dir(None, ("winequality-white.csv",))
    if d is not None:
        data = _read_wine(d / "winequality-white.csv")  # UCI's ';' format or the bundled copy
        yield "wine: quality and alcohol", data[:, :10], data[:, [11, 10]]
    X, Y = make_regression(n_samples=6000, n_features=10, n_informative=6, n_targets=3,
                           noise=20.0, random_state=0)
    yield "make_regression, 3 targets", X, Y + [0.0, 50.0, -200.0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    lines = ["| data | n | epsilon | per-fit epsilon of the wrapper | joint R^2 | wrapper R^2 "
             "| joint - wrapper | scikit-learn R^2 |", "|---|---|---|---|---|---|---|---|"]
    t0 = time.perf_counter()
    for name, X, Y in _cases():
        K = Y.shape[1]
        for n in (1000, 4000):
            test = 2000 if X.shape[0] - n >= 2000 else X.shape[0] - n
            for eps in EPSILONS:
                e1 = per_fit_epsilon(eps, X[:n], Y[:n, 0], K)
                joint, wrapper, reference = [], [], []
                for seed in range(args.seeds):
                    Xtr, Xte, Ytr, Yte = train_test_split(X, Y, train_size=n, test_size=test,
                                                          random_state=seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        a = _ridge(eps, DELTA, seed).fit(Xtr, Ytr)
                        b = MultiOutputRegressor(_ridge(e1, DELTA / K, seed)).fit(Xtr, Ytr)
                    assert a.epsilon_ <= eps * (1 + 1e-9)
                    events = [est.dp_event_ for est in b.estimators_]
                    assert compute_epsilon(ComposedEvent(tuple(events)), DELTA) <= eps * (1 + 1e-9)
                    joint.append(a.score(Xte, Yte))
                    wrapper.append(b.score(Xte, Yte))
                    reference.append(make_pipeline(StandardScaler(), Ridge()).fit(Xtr, Ytr)
                                     .score(Xte, Yte))
                gap = np.mean(joint) - np.mean(wrapper)
                lines.append(f"| {name} | {n} | {eps:g} | {e1:.3f} | {np.mean(joint):.3f} | "
                             f"{np.mean(wrapper):.3f} | {gap:+.3f} | {np.mean(reference):.3f} |")
                print(lines[-1], flush=True)
    seconds = time.perf_counter() - t0
    text = ("# Several targets: one joint fit against one fit per target\n\n"
            f"`python benchmarks/bench_multi_output.py --seeds {args.seeds}` ({seconds:.0f} s); "
            "R^2 averaged over the targets and the seeds; both at the same total epsilon, delta "
            f"{DELTA:g}. See the module's docstring for the setup.\n\n" + "\n".join(lines) + "\n")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "multi_output.md").write_text(text)


if __name__ == "__main__":
    main()
