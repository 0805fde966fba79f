"""An optimizer's privacy event may depend on the problem's constants only where it says so.

Inside a fit with automatic bounds the problem's constants (the row bound, the typical row, the
regularisation in the rows' units, the derivative clip) come from private releases.
:class:`skdp.linear_model._bounds.PrivateFit` composes the optimizer's realised event with those
releases only when the optimizer declares (``event_depends_on(problem)``) that the event does not
read them; otherwise it reports the zCDP bound that holds whatever was released. A wrong
declaration lets a fit report the epsilon of the branch it took rather than a bound over all of
them (session 27: dp_gdws on the squared loss, whose default step count reads the smoothness).
"""

import warnings

import numpy as np
import pytest

from skdp.losses import get_loss
from skdp.optimizers import OPTIMIZER_NAMES, Budget, Problem, get_optimizer_class

N, D = 24, 3
# (row bound, regularisation, typical row as a fraction of the bound, clip factor): the ranges a
# private data_norm, y_bounds and intercept_scaling can put them in
CONSTANTS = [(1.0, 1.0 / N, 1.0, 1.0), (0.01, 1.0 / N, 0.5, 1.0), (100.0, 1.0 / N, 1.0, 0.5),
             (1.0, 50.0, 0.7, 1.0), (1.0, 1e-6, 1.0, 0.25)]


def _problem(loss_name, row_bound, lam, typical, clip_factor):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    X *= 0.9 * row_bound / np.linalg.norm(X, axis=1, keepdims=True)
    u = rng.random((N, 1))
    Y = 2.0 * u - 1.0 if loss_name == "squared" else np.where(u < 0.5, -1.0, 1.0)
    loss = get_loss(loss_name)
    return Problem(X=np.ascontiguousarray(X), Y=Y, loss=loss, lam=lam, row_norm_bound=row_bound,
                   clip=clip_factor * loss.default_clip(1, 1.0), fit_intercept=False,
                   typical_row_norm=typical * row_bound)


def _check_declaration(name, params, loss_name, epsilon=1.0, delta=1e-5):
    events, declared = [], []
    for constants in CONSTANTS:
        problem = _problem(loss_name, *constants)
        optimizer = get_optimizer_class(name)(**params)
        budget = Budget(epsilon=epsilon, delta=delta, accountant="rdp")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                events.append(optimizer.solve(problem, budget, np.random.default_rng(1))
                              .record.event)
            except ValueError as refusal:  # a refusal that depends on the problem reads it too
                events.append(f"refused: {refusal}")
        declared.append(optimizer.event_depends_on(problem))
    if any(e != events[0] for e in events):
        assert all(declared), (
            f"{name} {params} ({loss_name}): the event changes with the problem's constants but "
            "the optimizer declares it does not for "
            f"{[c for c, d in zip(CONSTANTS, declared) if not d]}")


@pytest.mark.parametrize("loss_name", ["logistic", "squared", "squared_hinge"])
@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_event_reads_the_problem_only_where_declared(name, loss_name):
    """Every optimizer at its defaults, every loss."""
    _check_declaration(name, {}, loss_name)


def _audited_options():
    from skdp.audit._paths import optimizer_paths

    options = []
    for path in optimizer_paths():
        if (path.optimizer, path.params) not in options:
            options.append((path.optimizer, path.params))
    return options


AUDITED_OPTIONS = _audited_options()


@pytest.mark.slow
@pytest.mark.parametrize("loss_name", ["logistic", "squared"])
@pytest.mark.parametrize("name, params", AUDITED_OPTIONS,
                         ids=[f"{n} {p}" for n, p in AUDITED_OPTIONS])
def test_every_audited_option_declares_what_its_event_reads(name, params, loss_name):
    """The options of the audit paths (mini-batches, Laplace noise, allocations, step counts,
    variants), at the audits' budget: the same check, so that an option whose event reads the
    problem says so."""
    from skdp.audit._paths import POWER_DELTA, POWER_EPSILON

    _check_declaration(name, params, loss_name, POWER_EPSILON, POWER_DELTA)


def test_dp_gdws_squared_default_steps_read_the_problem():
    """The case that the declaration covers, so the test above is not vacuous: dp_gdws's
    squared-loss step count moves with the smoothness (a regularisation large in the rows'
    units), and the event with it."""
    optimizer = get_optimizer_class("dp_gdws")()
    budget = Budget(epsilon=1.0, delta=1e-5, accountant="rdp")
    steps = set()
    for constants in CONSTANTS:
        problem = _problem("squared", *constants)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            steps.add(optimizer.solve(problem, budget, np.random.default_rng(1)).record.n_steps)
        assert optimizer.event_depends_on(problem)
    assert len(steps) > 1
    classification = _problem("logistic", *CONSTANTS[0])
    assert not optimizer.event_depends_on(classification)
    assert not get_optimizer_class("dp_gdws")(max_iter=20).event_depends_on(
        _problem("squared", *CONSTANTS[0]))
