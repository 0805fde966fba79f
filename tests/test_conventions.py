"""scikit-learn conventions in every detail (issue 18).

* every public estimator, optimizer, transformer and search of skdp declares a constraint for
  each of its parameters, and a wrong type or range of any of them raises scikit-learn's
  ``InvalidParameterError`` from the public entry point (``fit``, or ``solve`` for an optimizer);
* ``max_iter`` / ``tol`` on the estimators and ``optimizer__<param>`` with an optimizer given by
  its name, inside ``GridSearchCV``;
* ``epsilon=np.inf`` reaches scikit-learn's optimum on weakly regularised problems within the
  default budget, and warns (``ConvergenceWarning``) when it stops short;
* smaller: delta above 1/n warns, row norms do not overflow, DPRidge refuses non-numeric y.
"""

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_regressor
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import Normalizer, StandardScaler
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    generate_invalid_param_val,
    make_constraint,
)

import skdp
from skdp import DPGDWS, DPLinearSVC, DPLogisticRegression, DPRidge
from skdp.linear_model._base import clip_rows
from skdp.losses import get_loss
from skdp.optimizers import Budget, DPOptimizer, Problem, available_optimizers

from ._helpers import augmented, breast_cancer, diabetes

ESTIMATORS = (DPLogisticRegression, DPRidge, DPLinearSVC)


# -- every public class with parameters ---------------------------------------------------------
def _public_classes():
    """Every BaseEstimator subclass in the ``__all__`` of a public skdp module (a module or
    package whose name has no component starting with an underscore)."""
    found = {}
    names = ["skdp"] + [
        m.name for m in pkgutil.walk_packages(skdp.__path__, "skdp.")
        if not any(part.startswith("_") for part in m.name.split("."))
    ]
    for modname in names:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (
                inspect.isclass(obj) and issubclass(obj, BaseEstimator)
                and obj.__module__.startswith("skdp") and obj is not DPOptimizer
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _public_classes()

# Required constructor arguments of the classes that have some.
_REQUIRED = {
    "PrivatePipeline": lambda: {"steps": [("clf", DPLogisticRegression(classes=[0, 1]))]},
    "PrivateSearchCV": lambda: {
        "estimator": DPLogisticRegression(epsilon=1.0, classes=[0, 1]),
        "param_grid": {"C": [1.0]},
        "n_iter": 1,
    },
}


def _instance(cls, **params):
    return cls(**{**_REQUIRED.get(cls.__name__, dict)(), **params})


def test_the_classes_are_found():
    names = {cls.__name__ for cls in CLASSES}
    assert set(names) >= {
        "DPLogisticRegression", "DPRidge", "DPLinearSVC", "PrivateSearchCV", "DPGDWS",
    }
    optimizer_classes = {type(skdp.optimizers.resolve_optimizer(n)) for n in available_optimizers()}
    assert optimizer_classes <= set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_parameter_has_a_constraint(cls):
    params = set(_instance(cls).get_params(deep=False))
    constrained = set(getattr(cls, "_parameter_constraints", {}))
    assert constrained == params, (
        f"{cls.__name__}: parameters without a constraint {sorted(params - constrained)}, "
        f"constraints without a parameter {sorted(constrained - params)}"
    )
    for name, constraints in cls._parameter_constraints.items():
        assert constraints != "no_validation", f"{cls.__name__}.{name} is not validated"


def _data_for(est):
    if is_regressor(est) or isinstance(est, DPRidge):
        X, y = diabetes()
    else:
        X, y = breast_cancer()
    return X[:120], y[:120]


def _run(obj):
    """The public entry point of ``obj``: ``solve`` for an optimizer, ``fit`` otherwise."""
    if isinstance(obj, DPOptimizer):
        X, y = breast_cancer()
        X = augmented(X[:60])
        problem = Problem(
            X=X, Y=np.where(y[:60] == 1, 1.0, -1.0)[:, None], loss=get_loss("logistic"),
            lam=0.01, row_norm_bound=np.sqrt(2.0), clip=1.0,
        )
        return obj.solve(problem, Budget(1.0, 1e-5), np.random.default_rng(0))
    X, y = _data_for(obj)
    return obj.fit(X, y)


class _NotAParameter:
    """A value of a type no parameter accepts."""

    def __repr__(self):  # a stable test id (pytest-xdist workers must collect the same ids)
        return "NotAParameter()"


def _invalid_values(constraints):
    """A wrong-type value, and one out-of-range value per Interval / StrOptions constraint
    that no other constraint of the parameter accepts (scikit-learn's own generator)."""
    made = [make_constraint(c) for c in constraints]
    values = [("type", _NotAParameter())]
    for c in made:
        if isinstance(c, (Interval, StrOptions)):
            try:
                bad = generate_invalid_param_val(c)
            except NotImplementedError:  # an interval covering the whole real line
                continue
            if not any(other.is_satisfied_by(bad) for other in made):
                values.append(("range", bad))
    return values


PARAM_CASES = [
    pytest.param(cls, name, kind, value, id=f"{cls.__name__}-{name}-{kind}")
    for cls in CLASSES
    for name, constraints in sorted(getattr(cls, "_parameter_constraints", {}).items())
    for kind, value in _invalid_values(constraints)
]


def test_every_parameter_has_a_wrong_type_case():
    covered = {(p.values[0], p.values[1]) for p in PARAM_CASES if p.values[2] == "type"}
    for cls in CLASSES:
        for name in _instance(cls).get_params(deep=False):
            assert (cls, name) in covered


@pytest.mark.parametrize("cls, name, kind, value", PARAM_CASES)
def test_wrong_parameter_raises_invalid_parameter_error(cls, name, kind, value):
    obj = _instance(cls, **{name: value})
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of {cls.__name__}"):
        _run(obj)


# The examples of the issue, one by one.
@pytest.mark.parametrize(
    "make",
    [
        lambda: DPLogisticRegression(optimizer=DPGDWS(max_iter="10")),
        lambda: DPLogisticRegression(optimizer=DPGDWS(max_iter=2.5)),
        lambda: DPLogisticRegression(optimizer=DPGDWS(c=-1)),
        lambda: DPLogisticRegression(optimizer=DPGDWS(tol="x")),
        lambda: DPLogisticRegression(fit_intercept="no"),
        lambda: DPLogisticRegression(verbose="x"),
        lambda: DPLogisticRegression(random_state=-1),
        lambda: DPLogisticRegression(max_iter=2.5),
        lambda: DPRidge(alpha=-1.0),
    ],
)
def test_issue_examples_raise(make, capsys):
    X, y = breast_cancer()
    with pytest.raises(InvalidParameterError):
        make().fit(X, y)
    assert capsys.readouterr().out == ""  # raised before anything ran (verbose="x" printed)


def test_ridge_refuses_non_numeric_targets():
    X, y = diabetes()
    with pytest.raises(ValueError, match="DPRidge is a regressor: y must be numeric"):
        DPRidge().fit(X, ["a"] * len(y))


def test_validation_does_not_depend_on_sklearn_config_for_optimizers():
    # an estimator's fit skips nested validation; the optimizer's own parameters still are
    import sklearn

    X, y = breast_cancer()
    with sklearn.config_context(skip_parameter_validation=True):
        with pytest.raises(InvalidParameterError, match="'c' parameter of DPGDWS"):
            DPLogisticRegression(optimizer=DPGDWS(c=-1)).fit(X, y)


# -- max_iter / tol on the estimator, optimizer__<param> with a name ----------------------------
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_grid_search_over_optimizer_params_from_the_default_estimator(cls):
    X, y = _data_for(cls())
    with pytest.raises(ValueError, match='optimizer="auto" picks its optimizer at fit time'):
        cls().set_params(optimizer__max_iter=3)  # "auto" has no parameters of its own
    assert not any(k.startswith("optimizer__") for k in cls().get_params(deep=True))
    name = cls._auto_default  # what "auto" runs by default, named
    est = cls(random_state=0, optimizer=name)
    key = "optimizer__epochs" if name == "dp_scd" else "optimizer__max_iter"
    values = [2, 5] if name == "dp_scd" else [10, 30]
    search = GridSearchCV(est, {key: values}, cv=2).fit(X, y)
    assert [p[key] for p in search.cv_results_["params"]] == values
    best = search.best_estimator_
    param = key.split("__")[1]
    assert getattr(best.optimizer_, param) == search.best_params_[key]
    assert type(best.optimizer).__name__ == type(best.optimizer_).__name__
    assert est.optimizer == name  # the searched estimator's parameter is untouched
    # deep get_params lists the optimizer's parameters of a name too
    assert key in est.get_params(deep=True)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_estimator_max_iter_reaches_the_optimizer_without_mutation(cls):
    X, y = _data_for(cls())
    est = cls(optimizer="dp_gdws", max_iter=7, random_state=0)
    search = GridSearchCV(est, {"max_iter": [3, 7]}, cv=2).fit(X, y)
    for fitted_max_iter in (3, 7):
        fitted = clone(est).set_params(max_iter=fitted_max_iter).fit(X, y)
        assert fitted.n_iter_ == fitted_max_iter == fitted.optimizer_.max_iter
        assert fitted.optimizer == "dp_gdws" and fitted.max_iter == fitted_max_iter
    assert search.best_params_["max_iter"] in (3, 7)
    # tol reaches the non-private solver
    fitted = cls(epsilon=np.inf, optimizer="dp_gdws", tol=1e-3).fit(X, y)
    assert fitted.optimizer_.tol == 1e-3 and fitted.tol == 1e-3


def test_set_params_with_a_name_builds_the_instance():
    est = DPLogisticRegression(optimizer="dp_nag_opt")
    est.set_params(optimizer__max_iter=20, optimizer__allocation="uniform")
    assert type(est.optimizer).__name__ == "DPNAGOpt"
    assert est.optimizer.max_iter == 20 and est.optimizer.allocation == "uniform"
    # "optimizer" and its parameters together: the name given in the same call
    est.set_params(optimizer="dp_sgld", optimizer__max_iter=4)
    assert type(est.optimizer).__name__ == "DPSGLD" and est.optimizer.max_iter == 4


def test_contradicting_max_iter_raises():
    X, y = breast_cancer()
    with pytest.raises(ValueError, match="contradicts the optimizer's max_iter=10"):
        DPLogisticRegression(max_iter=20, optimizer=DPGDWS(max_iter=10)).fit(X, y)
    # the same value on both is no contradiction
    assert DPLogisticRegression(max_iter=10, optimizer=DPGDWS(max_iter=10)).fit(X, y).n_iter_ == 10


# -- epsilon = inf: the optimum of the same objective, or a ConvergenceWarning -------------------
def _ridge_reference(X, y, alpha):
    """Ridge with the intercept a regularised constant column of 1 (skdp's objective)."""
    ref = Ridge(alpha=alpha, fit_intercept=False, solver="cholesky").fit(augmented(X), y)
    return ref.coef_[:-1], ref.coef_[-1]


@pytest.mark.parametrize("name", available_optimizers())
def test_weakly_regularised_ridge_reaches_the_optimum_within_the_default_budget(name):
    # The issue's example: raw diabetes (rows of norm < 1, targets in [25, 346]), public bounds
    # that cover them, alpha = 1e-3 (lam = 2e-6: condition number about 1e6).
    X, y = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = DPRidge(epsilon=np.inf, alpha=1e-3, y_bounds=(-1e3, 1e3), data_norm=10,
                      optimizer=name).fit(X, y)
    coef, intercept = _ridge_reference(X, y, 1e-3)
    assert est.intercept_ == pytest.approx(intercept, abs=1e-3)  # was 176.8 for dp_scd (152.1)
    np.testing.assert_allclose(est.coef_, coef, atol=1e-2)  # was off by 12 for dp_gdws
    # and scikit-learn's own Ridge (unregularised intercept) agrees to the same digits
    sk = Ridge(alpha=1e-3).fit(X, y)
    assert est.intercept_ == pytest.approx(sk.intercept_, abs=1e-2)


@pytest.mark.parametrize("name", available_optimizers())
def test_weakly_regularised_logistic_reaches_the_optimum(name):
    X, y = load_breast_cancer(return_X_y=True)
    X = Normalizer().fit_transform(StandardScaler().fit_transform(X))  # rows of norm 1
    C = 1e3  # lam = 1 / (n C) = 2e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = DPLogisticRegression(epsilon=np.inf, C=C, optimizer=name).fit(X, y)
    ref = LogisticRegression(C=C, fit_intercept=False, tol=1e-10, max_iter=100000)
    ref.fit(augmented(X), y)
    W = np.append(est.coef_.ravel(), est.intercept_)
    np.testing.assert_allclose(W, ref.coef_.ravel(), rtol=1e-3, atol=1e-3 * np.abs(W).max())


@pytest.mark.parametrize("name", available_optimizers())
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_convergence_warning_when_max_iter_stops_short(cls, name):
    X, y = _data_for(cls())
    with pytest.warns(ConvergenceWarning, match="did not converge at epsilon=inf"):
        est = cls(epsilon=np.inf, optimizer=name, max_iter=2).fit(X, y)
    assert est.n_iter_ == 2
    # a private fit runs its fixed number of noisy steps: no convergence to warn about
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cls(epsilon=1.0, optimizer=name, max_iter=2, random_state=0).fit(X, y)


# -- smaller -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC, DPRidge])
def test_delta_above_one_over_n_warns_once_a_fit(cls):
    X, y = breast_cancer()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(delta=0.5, random_state=0).fit(X, y)
    said = [w for w in caught if "delta=0.5 is above 1/n_samples" in str(w.message)]
    assert len(said) == 1, [str(w.message)[:60] for w in said]
    assert said[0].category is UserWarning
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="delta=")
        cls(delta=0.5 / X.shape[0], random_state=0).fit(X, y)
        cls(random_state=0).fit(X, y)  # the default is <= 0.1 / n


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_huge_entries_do_not_overflow_the_row_norms(sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4))
    X[:, 2] = 1e200  # its square overflows
    X[3] = [1e-200, -2e-200, 0.0, 0.0]  # its squares underflow
    Xin = sp.csr_matrix(X) if sparse else X

    def clipped(data_norm, s=None):
        out = clip_rows(Xin, data_norm, s)
        return out.toarray() if sparse else out

    big = np.delete(np.arange(20), 3)
    # rows with a 1e200 entry are clipped onto the ball along their own direction, not zeroed
    out = clipped(1.0, 0.5)
    assert np.all(out[:, 4] == 0.5)
    np.testing.assert_allclose(np.linalg.norm(out[big, :4], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out[big, 2], 1.0, rtol=1e-12)
    # a row whose squares underflow is measured, and clipped, all the same
    out = clipped(1e-201)
    np.testing.assert_allclose(out[3, :2], np.array([1.0, -2.0]) / np.sqrt(5.0) * 1e-201,
                               rtol=1e-12)
    # and a fit sees the clipped rows, not zeros
    est = DPLogisticRegression(epsilon=np.inf, data_norm=1.0).fit(Xin, (X[:, 0] > 0).astype(int))
    assert np.all(np.isfinite(est.coef_)) and abs(est.coef_[0, 2]) > 0
