"""The non-default privacy paths a user can reach, each with a canary that can catch a 2x error.

Every option that changes what a fit releases or how it is accounted has its audit here: the
optimizer (or estimator) settings, the canary, and the noise factor that the audit is shown to
catch (:func:`~skdp.audit.noise_scaled`). ``docs/audit.rst`` maps every parameter of the
estimators and optimizers to these audits; ``tests/test_audit_paths.py`` runs them (small in
the default run, full size under ``-m slow``) and ``benchmarks/bench_audit.py`` writes the
table of the docs from the same runs (same fits, same seeds).

**The budget of the audits.** A threshold test turns N fits into an epsilon lower bound of at
most about ``log(N / 4)``. At delta = 1e-5 a Gaussian mechanism calibrated to a claim of 1 or 2
and drawing half its noise is refuted by no threshold test of 1000 + 1000 fits; at a large delta
the same error is: the paths are audited at ``(epsilon, delta) = (2, 0.2)`` (Gaussian) and pure
``epsilon = 2`` (Laplace), where simulated audits of a Gaussian mechanism calibrated by the RDP
accountant, with half its noise, give a split bound above the claim in 30 runs of 30 with
1000 + 1000 fits. A noise or sensitivity bug moves the whole privacy profile, so it shows at
every delta.

**The canaries.** An audit has power only when what the canary changes in the released model
is about as distinguishable as the accountant says. Three designs:

* ``"standard"``: :func:`~skdp.audit.canary_problem` on 30 random rows (norm 1, intercept
  column): the canary of norm R in a column of its own, its clipped loss derivative saturated at
  every step (a far target for the squared loss; a small ``clip`` for the others);
* ``"one_column"``: the canary is the only non-null record and the design has one column and no
  intercept, so its gradient's L1 norm equals the L1 sensitivity ``sqrt(p K) G`` the Laplace
  mechanism is calibrated for (with p > 1 a canary in one column reaches only ``G``, a
  fraction ``1 / sqrt(p K)`` of it). One step (``max_iter=1``): basic composition of many
  Laplace steps is far from tight;
* ``"dominated"``: every other record pushes along one other column with a saturated
  derivative, so the norm of the released momentum is nearly constant and dp_nsgd_tree's
  normalised step is nearly linear in the canary's column.

Settings that make an analysis tight for the last iterate are chosen where the defaults make it
loose (for example dp_sgld's Langevin time, or enough steps that a Poisson-subsampled step has a
large noise multiplier); each is a value a user can set. ``factor`` is the noise factor the
full-size audit catches; it is 0.5 except where the analysis itself is loose for the last
iterate by more than 2x, which ``why`` explains.
"""

from dataclasses import dataclass, field
import math
import zlib

import numpy as np
import scipy.sparse as sp

from ..losses import get_loss
from ..optimizers import Budget, Problem, get_optimizer_class
from ._auditor import audit_estimator, audit_optimizer
from ._canary import CanaryProblem, canary_problem, make_canary, null_neighbour
from ._faults import active_noise_factor, noise_scaled

__all__ = [
    "POWER_EPSILON", "POWER_DELTA", "OptimizerPath", "EstimatorPath", "optimizer_paths",
    "estimator_paths", "run_path", "path_seeds",
]

POWER_EPSILON = 2.0
POWER_DELTA = 0.2
N_ROWS = 30
#: The noise factor of the "DPRidge defaults (dp_masg, s >= 300)" paths' faulty audits, and why
#: not 0.5 (session 37, 1000 + 1000 fits per run).
MASG_DEFAULTS_FACTOR = 0.2
MASG_DEFAULTS_WHY = (
    "dp_masg at its own residual clip (a quarter of the targets' half-range) and horizon, as "
    "optimizer='auto' runs it from s = 300 (on Dask from s = 10), after the private row and "
    "target bounds: the "
    "statistic (the model's response to the canary's features) sees the canary's clipped "
    "gradient only through the accelerated steps that follow it, a part of the releases the "
    "claim covers (real code 0.00 against the claim 2; noise x0.5 reached 0.60 in memory, "
    "0.48 on Dask and 0.64 with two targets, x0.3 2.10 and 2.11 in memory, caught only just; "
    "x0.2 caught at 3.63 in memory, 3.44 on Dask and 3.46 with two targets; on Dask at 300 rows, "
    "s = 155, real code 0.00, x0.2 caught at 3.42 and 3.60 with two targets)"
)
#: Why the "DPRidge on Dask, defaults (dp_gdws, s < 10)" paths' faulty audits scale the noise
#: by much less than 0.5 (session 53, 1000 + 1000 fits per run).
DASK_GDWS_DEFAULTS_WHY = (
    "dp_gdws at its own squared-loss step and step count, as optimizer='auto' runs it on Dask "
    "below s = 10 (18 rows and the canary): the private row and target bounds of 19 records "
    "are unreliable and land well above the canary, and the noise scaled to them hides most of "
    "its pull (real code 0.00 against the claim 2; one target: noise x0.3 reached 0.28, not "
    "caught, x0.1 caught at 2.61; two targets: x0.25 reached 0.46 and x0.1 1.88, not caught, "
    "x0.07 caught at 2.31. At 300 rows, s = 155, the same dp_gdws path had x0.3 caught at "
    "2.29 and, with two targets, x0.25 at 3.08)"
)

#: The clip of the loss derivative that keeps a canary's derivative saturated for the whole run
#: (the derivative at 0 is 0.5 logistic, 2 sqrt(K) squared hinge, sqrt((K-1)/K) multinomial).
_SATURATING_CLIP = {"logistic": 0.1, "squared_hinge": 0.5, "multinomial": 0.2}


@dataclass(frozen=True)
class OptimizerPath:
    """An optimizer-level audit of one path (see the module docstring).

    Attributes
    ----------
    label : str
    group : str
        The option the path belongs to (the rows of the docs' map).
    optimizer : str
    params : dict
        The optimizer's parameters.
    design : {"standard", "one_column", "dominated"}
    loss : str
    n_outputs : int
    lam : float or None
        Regularisation (None: 1/30).
    clip : float or None
        Derivative clip (None: the loss's default for squared, the saturating clip otherwise).
    sparse : bool
        A CSR design (the sparse kernels).
    accountant : {"rdp", "pld"}
    factor : float
        The noise factor the full-size audit catches.
    why : str
    fits : int
        Fits on each of D and D' of the full-size audit (2000 where 1000 leave the faulty
        bound too close to the claim to be a reliable catch).
    """

    label: str
    group: str
    optimizer: str
    params: dict = field(default_factory=dict)
    design: str = "standard"
    loss: str = "squared"
    n_outputs: int = 1
    lam: float = None
    clip: float = None
    sparse: bool = False
    accountant: str = "rdp"
    factor: float = 0.5
    why: str = ""
    fits: int = 1000

    def make_optimizer(self):
        return get_optimizer_class(self.optimizer)(**self.params)

    def budget(self):
        return Budget(POWER_EPSILON, POWER_DELTA, self.accountant)

    def canary(self):
        """The :class:`~skdp.audit.CanaryProblem` of this path."""
        return _DESIGNS[self.design](self)


def _targets(loss, K, rng, n, X):
    if loss == "squared":
        return rng.uniform(-1.0, 1.0, size=(n, K))
    if loss == "multinomial":
        return np.eye(K)[rng.integers(0, K, n)]
    if K == 1:
        return np.where(X[:, :1] > 0, 1.0, -1.0)
    return np.where(np.eye(K)[rng.integers(0, K, n)] > 0, 1.0, -1.0)


def _clip(path):
    if path.clip is not None:
        return float(path.clip)
    if path.loss == "squared":
        return get_loss("squared").default_clip(path.n_outputs, 1.0)
    return _SATURATING_CLIP[path.loss]


def _lam(path):
    return 1.0 / N_ROWS if path.lam is None else float(path.lam)


def _standard(path, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.hstack([X, np.ones((N_ROWS, 1))])
    Y = _targets(path.loss, path.n_outputs, rng, N_ROWS, X)
    base = Problem(
        X=sp.csr_matrix(X) if path.sparse else np.ascontiguousarray(X),
        Y=np.ascontiguousarray(Y), loss=get_loss(path.loss), lam=_lam(path),
        row_norm_bound=math.sqrt(2.0), clip=_clip(path), fit_intercept=True,
    )
    return canary_problem(base, target=_saturating_target(path))


def _saturating_target(path):
    """The canary's target: the estimators' encoding of its label (one-hot, +1 / -1 per class)
    or, for the squared loss, one so far that the clipped derivative stays saturated."""
    K = path.n_outputs
    if path.loss == "squared":
        return np.full(K, 1e3)
    if path.loss == "multinomial":
        return np.eye(K)[0]
    return 2.0 * np.eye(K)[0] - 1.0 if K > 1 else np.ones(1)


def _one_column(path):
    X = np.zeros((N_ROWS + 1, 1))
    X[N_ROWS, 0] = 1.0
    Y = np.tile(_saturating_target(path), (N_ROWS + 1, 1))
    return _built(path, X, Y, N_ROWS, 0)


def _dominated(path):
    X = np.zeros((N_ROWS + 1, 2))
    X[:N_ROWS, 0] = 1.0
    X[N_ROWS, 1] = 1.0
    Y = np.tile(_saturating_target(path), (N_ROWS + 1, 1))
    return _built(path, X, Y, N_ROWS, 1)


def _built(path, X, Y, index, column):
    problem = Problem(
        X=sp.csr_matrix(X) if path.sparse else X, Y=np.ascontiguousarray(Y),
        loss=get_loss(path.loss), lam=_lam(path), row_norm_bound=1.0, clip=_clip(path),
        fit_intercept=False,
    )
    return CanaryProblem(problem, null_neighbour(problem, index), index, column)


_DESIGNS = {"standard": _standard, "one_column": _one_column, "dominated": _dominated}

# Settings that give each analysis its power (public values a user can set).
_SGLD_LANGEVIN = {"max_iter": 20}  # lam = 1: lam T = 3.3, the Langevin bound below composition
_SGLD_COMPOSITION = {"step": 30.0, "max_iter": 1}  # step = 1/lam >= 1/beta: one Gaussian step
_SGLD_POISSON = {"batch_size": 16, "step": 0.02, "max_iter": 40}  # lam T = 1.6, z = 3.5
# lam = 1e-4: long memory; the paper's momentum (kappa=None), whose memory the canary needs
_NAG_POISSON = {"batch_size": 8, "reselect_T": False, "max_iter": 100, "kappa": None}
# The paper's step count and momentum (the defaults before issue 15's rules), under which a
# canary shows through the last iterate
_NAG_PAPER = {"reselect_T": True, "kappa": None}
# dp_nsgd_tree: a constant step weighs every step's release alike, as the noise does (the linear
# decay loses about 1 - sqrt(3/4) of the signal); a small one keeps every derivative saturated
_TREE_FULL = {"batch_size": None, "schedule": "constant"}
_TREE_LOSS = {**_TREE_FULL, "learning_rate": 0.01}
# ... the estimator paths' (two epochs: on Dask, two orders drawn on the client)
_TREE_ESTIMATOR = {"epochs": 2, "schedule": "constant", "learning_rate": 0.01}
_LAPLACE = {"mechanism": "laplace", "max_iter": 1}
_NAG_FIXED_T = {"reselect_T": False, "max_iter": 10}  # few steps: the memory covers them all
# The losses, multiclass and sparse designs: settings under which the canary's derivative stays
# saturated for every loss (a small fixed step; a tiny update clip for the dual method) and the
# steps are few enough for the last iterate to show them all.
_POWERED = {
    "dp_gdws": ({"step": 0.01}, "standard"),
    "dp_scd": ({"batch_size": 1.0, "update_clip": 1e-5}, "standard"),
    "dp_nag_opt": (_NAG_FIXED_T, "standard"),
    "dp_masg": (_NAG_FIXED_T, "standard"),
    "dp_sgld": (_SGLD_COMPOSITION, "standard"),
    "dp_nsgd_tree": (_TREE_LOSS, "dominated"),
}

_WHY_LANGEVIN = (
    "the Langevin bound is loose for the last iterate: a canary whose drift is constant moves "
    "the stationary mean by S/lam against a spread sigma/sqrt(lam), 1/sqrt(2) of what the bound "
    "(rho = S^2 / (lam sigma^2)) allows, and the RDP conversion at delta 0.2 loses another 0.77: "
    "with half the noise this canary (and every last-iterate canary we know) stays within the "
    "claim"
)
_WHY_TREE = (
    "with several steps per epoch a record enters log2(M) + 1 tree nodes, all charged, and "
    "the last iterate sums every prefix estimate, so their noises add up: the last iterate "
    "shows much less than the tree releases"
)



def optimizer_paths():
    """The optimizer-level audits, ``[OptimizerPath, ...]``."""
    P = OptimizerPath
    paths = [
        # -- Poisson batches (batch_size) ------------------------------------------------------
        P("dp_gdws poisson", "Poisson batches", "dp_gdws", {"batch_size": 8, "max_iter": 100}),
        P("dp_scd poisson (default batch)", "Poisson batches", "dp_scd"),
        P("dp_scd full batch", "Poisson batches", "dp_scd", {"batch_size": 1.0}),
        # 2000 fits (session 44): with 1000 the x0.5 fault's lower bound over five seeds was 1.92
        # to 2.85 against the claim 2.0 (one missed); with 2000, 2.46 to 3.05
        P("dp_nag_opt poisson", "Poisson batches", "dp_nag_opt", _NAG_POISSON, lam=1e-4,
          fits=2000),
        P("dp_nag_opt poisson uniform", "Poisson batches", "dp_nag_opt",
          {**_NAG_POISSON, "allocation": "uniform"}, lam=1e-4, fits=3000),
        # 3000 fits: with the geometric-skip sampler's stream the x0.5 fault's lower bound at
        # 2000 fits was 1.96 against the claim 2.0 (caught at 3000: 2.63; the real path 0.69)
        P("dp_masg poisson", "Poisson batches", "dp_masg", _NAG_POISSON, lam=1e-4, fits=3000),
        P("dp_sgld poisson", "Poisson batches", "dp_sgld", _SGLD_POISSON, lam=1.0, fits=2000),
        P("dp_nsgd_tree full batch", "Poisson batches", "dp_nsgd_tree", _TREE_FULL,
          design="dominated"),
        # -- Laplace mechanism (mechanism="laplace") --------------------------------------------
        P("dp_gdws laplace", "Laplace", "dp_gdws", _LAPLACE, design="one_column"),
        P("dp_gdws laplace poisson", "Laplace", "dp_gdws", {**_LAPLACE, "batch_size": 0.5},
          design="one_column"),
        P("dp_nag_opt laplace", "Laplace", "dp_nag_opt", _LAPLACE, design="one_column"),
        P("dp_nag_opt laplace poisson", "Laplace", "dp_nag_opt",
          {**_LAPLACE, "batch_size": 0.5}, design="one_column"),
        P("dp_masg laplace", "Laplace", "dp_masg", _LAPLACE, design="one_column"),
        P("dp_masg laplace poisson", "Laplace", "dp_masg", {**_LAPLACE, "batch_size": 0.5},
          design="one_column"),
        # -- the accountant options of the optimizers ------------------------------------------
        P("dp_scd variant=paper", "optimizer accounting", "dp_scd",
          {"variant": "paper", "batch_size": 1.0}, fits=2000),
        P("dp_nag_opt allocation=uniform", "optimizer accounting", "dp_nag_opt",
          {"allocation": "uniform", **_NAG_PAPER}),
        # 3000 fits (session 44): with 1000 the x0.5 fault's lower bound over five seeds was 1.81
        # to 2.16 against the claim 2.0 (dp_masg's 1.71 to 2.56; two missed); with 3000, 2.57 to
        # 3.03 (dp_masg 2.33 to 3.37)
        P("dp_nag_opt reselect_T=False", "optimizer accounting", "dp_nag_opt", _NAG_FIXED_T,
          fits=3000),
        P("dp_masg allocation=uniform", "optimizer accounting", "dp_masg",
          {"allocation": "uniform", **_NAG_PAPER}),
        P("dp_masg reselect_T=False", "optimizer accounting", "dp_masg", _NAG_FIXED_T,
          fits=3000),
        # the released model is the mean of the last half of the iterates (average=0.5):
        # post-processing, audited as a user can set it
        P("dp_gdws average=1/2", "optimizer accounting", "dp_gdws", {"average": 0.5}),
        P("dp_sgld composition (step >= 1/beta)", "optimizer accounting", "dp_sgld",
          _SGLD_COMPOSITION),
        # the default plan of a classification fit under composition (every C near 1): 300
        # steps of 1.5 / beta (dp_sgld.COMPOSITION_STEP), no Langevin initialisation
        # (2000 fits, session 44: with 1000 the x0.5 fault's lower bound over five seeds was
        # 1.99 to 2.96 against the claim 2.0, one missed; with 2000, 2.85 to 3.49)
        P("dp_sgld default plan (logistic, composition)", "optimizer accounting", "dp_sgld",
          {}, loss="logistic", lam=1e-3, fits=2000),
        P("dp_sgld langevin", "optimizer accounting", "dp_sgld", _SGLD_LANGEVIN, lam=1.0,
          factor=0.25, why=_WHY_LANGEVIN),
        P("dp_sgld langevin decreasing", "optimizer accounting", "dp_sgld",
          {**_SGLD_LANGEVIN, "schedule": "decreasing"}, lam=1.0, factor=0.25, why=_WHY_LANGEVIN),
        P("dp_sgld langevin projection", "optimizer accounting", "dp_sgld",
          {**_SGLD_LANGEVIN, "projection": "auto"}, lam=1.0, factor=0.25, why=_WHY_LANGEVIN),
        P("dp_sgld sigma given", "optimizer accounting", "dp_sgld",
          {**_SGLD_COMPOSITION, "sigma": 0.3}, fits=2000),
        P("dp_nsgd_tree tree=aligned", "optimizer accounting", "dp_nsgd_tree",
          {**_TREE_FULL, "tree": "aligned", "epochs": 4}, design="dominated", fits=2000,
          factor=0.4,
          why="the last iterate sums the prefix estimates of four epochs of aligned trees, so "
              "it shows less than the releases: noise x0.5 gave lower bounds of 1.27 to 2.15 "
              "against the claim 2.0 over five seeds with 2000 + 2000 fits (three missed; "
              "1.67 to 2.25 with 4000 + 4000), x0.4 2.83 to 3.15 with 2000 + 2000 (session "
              "44)"),
        P("dp_nsgd_tree mini-batch", "optimizer accounting", "dp_nsgd_tree",
          {"batch_size": 16, "schedule": "constant"}, design="dominated", factor=0.25,
          why=_WHY_TREE),
        P("dp_nsgd_tree honaker=False", "optimizer accounting", "dp_nsgd_tree",
          {"batch_size": 16, "schedule": "constant", "honaker": False}, design="dominated",
          factor=0.25, why=_WHY_TREE),
        # -- accountant="pld" ---------------------------------------------------------------------
        P("dp_gdws pld", "PLD accountant", "dp_gdws", accountant="pld"),
        P("dp_gdws poisson pld", "PLD accountant", "dp_gdws", {"batch_size": 8},
          accountant="pld"),
        P("dp_scd pld", "PLD accountant", "dp_scd", accountant="pld"),
        P("dp_nag_opt pld", "PLD accountant", "dp_nag_opt", accountant="pld"),
        P("dp_nag_opt poisson uniform pld", "PLD accountant", "dp_nag_opt",
          {**_NAG_POISSON, "allocation": "uniform"}, lam=1e-4, accountant="pld"),
        P("dp_nag_opt poisson pld (RDP reported)", "PLD accountant", "dp_nag_opt",
          _NAG_POISSON, lam=1e-4, accountant="pld", fits=2000),
        P("dp_masg pld", "PLD accountant", "dp_masg", accountant="pld"),
        P("dp_sgld poisson pld", "PLD accountant", "dp_sgld", _SGLD_POISSON, lam=1.0,
          accountant="pld", fits=2000),
        P("dp_sgld composition pld", "PLD accountant", "dp_sgld", _SGLD_COMPOSITION,
          accountant="pld"),
        P("dp_sgld langevin pld (RDP route)", "PLD accountant", "dp_sgld", _SGLD_LANGEVIN,
          lam=1.0, accountant="pld", factor=0.25, why=_WHY_LANGEVIN),
        P("dp_nsgd_tree pld", "PLD accountant", "dp_nsgd_tree", _TREE_FULL,
          design="dominated", accountant="pld"),
    ]
    # -- every loss and multiclass (K = 3) through every optimizer, and sparse designs ----------
    for name, (params, design) in _POWERED.items():
        for loss, K in (("logistic", 1), ("squared_hinge", 1), ("multinomial", 3),
                        ("squared_hinge", 3)):
            label = f"{name} {loss}" + (f" K={K}" if K > 1 else "")
            group = "multiclass (K = 3)" if K > 1 else "losses"
            paths.append(P(label, group, name, params, design=design, loss=loss, n_outputs=K,
                           fits=2000))
        paths.append(P(f"{name} sparse", "sparse input", name, params, design=design,
                       sparse=True, fits=2000))
    return paths


@dataclass(frozen=True)
class EstimatorPath:
    """An estimator-level audit (the estimator's own validation, encoding and clipping).

    Attributes
    ----------
    label, group : str
    make : callable
        ``seed -> unfitted estimator``.
    loss : {"logistic", "squared_hinge", "squared"}
        The estimator's loss (multinomial for the logistic with K > 2 classes).
    n_classes : int
    sparse : None, "csr" or "csc"
    factor : float
    fits : int
    dask : bool
        X and y as dask arrays in uneven chunks (the distributed path, :mod:`skdp._dask`; run
        on the local scheduler, or on the current ``distributed.Client``).
    float32 : bool
        X in float32 (read in place by the kernels' float32 variants, computing in float64).
    offset_free : bool
        Score the canary by ``predict(canary row) - predict(zero row)``: the model's response
        to the canary's features, without the offset of a private target centre
        (``y_bounds="auto"``), whose spread would otherwise hide it.
    n_rows : int
        Rows of the data set besides the canary (``N_ROWS``; more where an option's public
        rule switches on n, such as the target spread's quantile).
    row_norm : float
        The norm of every row, the canary's included (1: the public bound of the other paths;
        other values place the rows where a private row bound's grid puts them).
    atom_share : float
        The share of the other rows whose target is exactly 0 (regression): above three
        quarters the private target bounds take their tail branch.
    n_targets : int
        Target columns of a regression (DPRidge's y of shape (n, K) for K > 1, one fit):
        column k in [-(k + 1), k + 1], and the canary's target at each column's upper bound.
    """

    label: str
    group: str
    make: object
    loss: str = "logistic"
    n_classes: int = 2
    sparse: str = None
    factor: float = 0.5
    fits: int = 1000
    why: str = ""
    dask: bool = False
    float32: bool = False
    offset_free: bool = False
    n_rows: int = N_ROWS
    row_norm: float = 1.0
    atom_share: float = 0.0
    n_targets: int = 1

    @property
    def task(self):
        return "regression" if self.loss == "squared" else "classification"

    def data(self, seed=0):
        """``(CanaryData, X)``: the data set with its canary, and X in the audited format."""
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(self.n_rows, 2))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        if self.task == "regression":
            y = np.clip(X[:, 0] + 0.1 * rng.normal(size=self.n_rows), -1.0, 1.0)
            y[: int(round(self.atom_share * self.n_rows))] = 0.0
            if self.n_targets > 1:  # the others from the second feature, in other units
                others = [(k + 1.0) * np.clip(X[:, 1] + 0.1 * rng.normal(size=self.n_rows),
                                              -1.0, 1.0) for k in range(self.n_targets - 1)]
                y = np.column_stack([y] + others)
        elif self.n_classes == 2:
            y = (X[:, 0] > 0).astype(int)
        else:
            y = np.argmax(X @ rng.normal(size=(2, self.n_classes)), axis=1)
        X *= self.row_norm
        # with K targets the canary's at each column's upper bound (k + 1 for column k)
        label = np.arange(1.0, self.n_targets + 1.0) if self.n_targets > 1 else None
        c = make_canary(X, y, label=label, data_norm=self.row_norm, task=self.task)
        Xa = c.X if self.sparse is None else sp.csr_matrix(c.X).asformat(self.sparse)
        if self.float32:
            Xa = Xa.astype(np.float32)
        return c, Xa

    def dask_inputs(self, c, X):
        """``(X, y, (X', y'))``: D and D' as dask arrays in two uneven chunks (X from
        :meth:`data`, in the path's dtype)."""
        import dask.array as da

        from ._canary import zero_row

        chunks = (self.n_rows // 3, X.shape[0] - self.n_rows // 3)
        rows = np.asarray(X)
        Xd = da.from_array(rows, chunks=(chunks, rows.shape[1]))
        y = np.asarray(c.y)
        y = da.from_array(y, chunks=(chunks,) + y.shape[1:])
        return Xd, y, (da.from_array(zero_row(rows, c.index), chunks=Xd.chunks), y)


def _estimators():
    from ..linear_model import DPLinearSVC, DPLogisticRegression, DPRidge
    from ..optimizers.dp_gdws import DPGDWS

    # public bounds (the canary's rows have norm <= 1, its targets lie in [-1, 1]): these audits
    # are of the optimizers' paths; the private bounds have audits of their own
    common = {"epsilon": POWER_EPSILON, "delta": POWER_DELTA, "fit_intercept": False,
              "data_norm": 1.0}

    # the classifiers' default optimizer with a small fixed step, which keeps the canary's
    # derivative saturated (the default step moves its margin out of the clip within a few steps)
    def logistic(optimizer=None, **kw):
        return lambda seed: DPLogisticRegression(
            **common, derivative_clip=0.1, optimizer=optimizer or DPGDWS(step=0.01),
            random_state=seed, **kw)

    def svc(**kw):
        return lambda seed: DPLinearSVC(
            **common, derivative_clip=0.5, optimizer=DPGDWS(step=0.01), random_state=seed, **kw)

    def ridge(**kw):
        return lambda seed: DPRidge(**common, derivative_clip=0.25, random_state=seed,
                                    **{"y_bounds": (-1.0, 1.0), **kw})

    # the logistic model with its own defaults for everything the audit does not fix
    def logistic_defaults(**kw):
        return lambda seed: DPLogisticRegression(**common, random_state=seed, **kw)

    # the SVC with its own defaults (step, step count, derivative clip); the optimizer given
    def svc_defaults(optimizer):
        return lambda seed: DPLinearSVC(**common, optimizer=optimizer, random_state=seed)

    return logistic, svc, ridge, logistic_defaults, svc_defaults


def _private_search(make_estimator, epsilon, refit=False, shape=1.0):
    """``seed -> PrivateSearchCV`` over the audited estimator (or pipeline) with two candidates
    of its regularisation (C, or alpha for a regressor); ``epsilon`` (when not None) sets the
    candidates' budget; ``shape`` the distribution of the number of runs."""
    from ..model_selection import PrivateSearchCV
    from ..model_selection._cost import final_estimator

    def make(seed):
        est = make_estimator(seed)
        if epsilon is not None:
            est.set_params(epsilon=epsilon)
        final, prefix = final_estimator(est)
        name = "alpha" if "alpha" in final.get_params() else "C"
        return PrivateSearchCV(est, {prefix + name: [0.5, 2.0]}, n_iter=1, shape=shape,
                               delta=POWER_DELTA, validation_fraction=0.1, refit=refit,
                               random_state=seed)
    return make


class _InWorkerProcess:
    """Fits ``estimator`` in a worker process of joblib's default backend (loky), as
    ``GridSearchCV(n_jobs=2)`` fits a candidate, and returns the fitted model it sends back.

    The estimator is unseeded (``random_state=None``): each fit draws fresh entropy in its
    worker, as a user's search does, so the audit sees whether fits in workers stay independent.
    A fault injected in this process (:func:`~skdp.audit.noise_scaled`) is passed to the job,
    which scales its worker's noise by the same factor."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y):
        from joblib import Parallel, delayed

        model, = Parallel(n_jobs=2)(
            [delayed(_fit_with_noise_factor)(self.estimator, X, y, active_noise_factor())])
        return model


def _fit_with_noise_factor(estimator, X, y, factor):
    import warnings
    from contextlib import nullcontext

    with warnings.catch_warnings(), (noise_scaled(factor) if factor != 1.0 else nullcontext()):
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


_WHY_WORKERS = (
    "the fits draw fresh entropy in their workers, so the audit's seed does not fix them and "
    "its bound varies from run to run: noise x0.5 was caught at 2.62 (two targets) and missed "
    "at 1.88 (the classifier, whose in-memory path is caught at 2.33) with 1000 + 1000 fits; "
    "x0.4 leaves a margin")


def _in_worker_process(make_estimator):
    """``seed -> _InWorkerProcess(make_estimator(None))``: the audit's seed is not used (the
    worker's fresh entropy is what is audited)."""
    return lambda seed: _InWorkerProcess(make_estimator(None))


def _normalized_pipeline(make_estimator, epsilon):
    """``seed -> PrivatePipeline([Normalizer(), estimator])`` with its own budget (the rows
    are already of norm 1: the Normalizer is the public row bound the estimator uses)."""
    from sklearn.preprocessing import Normalizer

    from ..pipeline import PrivatePipeline

    def make(seed):
        return PrivatePipeline([("rows", Normalizer()), ("clf", make_estimator(seed))],
                               epsilon=epsilon, delta=POWER_DELTA)
    return make


def estimator_paths():
    """The estimator-level audits, ``[EstimatorPath, ...]``."""
    from ..linear_model import DPLogisticRegression, DPRidge
    from ..optimizers.dp_gdws import DPGDWS
    from ..optimizers.dp_masg import DPMASG
    from ..optimizers.dp_nsgd_tree import DPNSGDTree
    from ..optimizers.dp_scd import DPSCD
    from ..optimizers.dp_sgld import DPSGLD

    logistic, svc, ridge, logistic_defaults, svc_defaults = _estimators()

    # DPRidge with private target bounds (y_bounds="auto") and dp_gdws with the given settings
    def auto_targets(**gdws):
        return lambda seed: DPRidge(epsilon=POWER_EPSILON, delta=POWER_DELTA,
                                    fit_intercept=False, data_norm=1.0, y_bounds="auto",
                                    random_state=seed, optimizer=DPGDWS(**gdws))

    # DPLogisticRegression with a private row bound (data_norm="auto") and a small fixed step
    def auto_rows(seed):
        return DPLogisticRegression(epsilon=POWER_EPSILON, delta=POWER_DELTA,
                                    fit_intercept=False, data_norm="auto", derivative_clip=0.1,
                                    optimizer=DPGDWS(step=0.01), random_state=seed)

    # ... with Laplace noise (mechanism="laplace", one step): pure DP, the bound's pure epsilon
    # and the steps' summing to the budget (session 56; before, the steps were calibrated to
    # the zCDP remainder and the fit reported (epsilon, delta) with a pure epsilon over it)
    def auto_rows_laplace(seed):
        return DPLogisticRegression(epsilon=POWER_EPSILON, delta=POWER_DELTA,
                                    fit_intercept=False, data_norm="auto", derivative_clip=0.1,
                                    optimizer=DPGDWS(step=0.01, mechanism="laplace", max_iter=1),
                                    random_state=seed)

    # DPRidge at every default but the intercept (an all-zero row is a null record only
    # without one)
    def ridge_defaults(seed):
        return DPRidge(epsilon=POWER_EPSILON, delta=POWER_DELTA, fit_intercept=False,
                       random_state=seed)

    # DPRidge with two targets (the columns of EstimatorPath.data: [-1, 1] and [-2, 2]), their
    # public bounds per column, dp_gdws with a small fixed step and the joint residual clip of
    # derivative_clip="auto"
    def two_targets(seed, accountant="rdp"):
        return DPRidge(epsilon=POWER_EPSILON, delta=POWER_DELTA, fit_intercept=False,
                       data_norm=1.0, y_bounds=[(-1.0, 1.0), (-2.0, 2.0)],
                       optimizer=DPGDWS(step=0.01), accountant=accountant, random_state=seed)

    E = EstimatorPath
    return [
        E("DPLogisticRegression (logistic)", "losses", logistic()),
        E("DPLinearSVC (squared hinge)", "losses", svc(), loss="squared_hinge"),
        E("DPRidge (squared)", "losses", ridge(), loss="squared"),
        E("DPLogisticRegression K=3 (multinomial)", "multiclass (K = 3)", logistic(),
          n_classes=3),
        E("DPLinearSVC K=3 (one-vs-rest)", "multiclass (K = 3)", svc(), loss="squared_hinge",
          n_classes=3),
        E("DPLogisticRegression K=3 dp_scd", "multiclass (K = 3)",
          logistic(optimizer=DPSCD(update_clip=1e-5)),
          n_classes=3),
        # the tail average of dp_gdws (average=0.5) on the fixed-step path
        E("DPLogisticRegression dp_gdws average=1/2", "losses",
          logistic(optimizer=DPGDWS(step=0.01, average=0.5))),
        E("DPLogisticRegression dp_scd", "losses", logistic(optimizer=DPSCD(update_clip=1e-5)),
          why="the binary dp_scd path of the estimator, as a user who names it runs it"),
        # optimizer="auto" and derivative_clip="auto" as a user leaves them, binary: dp_gdws
        # at its own step and step count, the derivative clipped at 1/2 (session 11's rule;
        # the canary, labelled against the data, stays misclassified, so its derivative stays
        # at the clip)
        E("DPLogisticRegression defaults (binary: dp_gdws, clip 1/2)", "losses",
          logistic_defaults(),
          factor=0.2,
          why="every default of a binary fit with a public row bound: optimizer='auto' "
              "(dp_gdws) and derivative_clip='auto' (1/2). Its default step moves the "
              "canary's margin out of the clip within a few steps, so the statistic sees part "
              "of the canary's pull: noise x0.5 not caught (lower bound 0.86), x0.2 caught "
              "(2.37); the fixed-step path 'DPLogisticRegression (logistic)' is caught at x0.5"),
        # multiclass with a gradient method and derivative_clip="auto": the multinomial
        # derivative's size at W = 0, sqrt(2/3), at this path's small signal-to-noise ratio
        E("DPLogisticRegression K=3 dp_gdws, clip sqrt(2/3)", "multiclass (K = 3)",
          logistic_defaults(optimizer="dp_gdws"),
          n_classes=3, factor=0.2,
          why="derivative_clip='auto' for K = 3 (session 11's rule) with dp_gdws at its own "
              "step: as the binary defaults path, the default step moves the canary's margin "
              "out of the clip, so the fault is scaled further"),
        # binary dp_scd at its own update clip (session 33's rule for the logistic loss)
        E("DPLogisticRegression dp_scd defaults (binary, auto update clip)", "losses",
          logistic_defaults(optimizer="dp_scd", derivative_clip=0.1), factor=0.1,
          why="dp_scd at its own update clip, as a user who names it runs it: as for the K = 3 "
              "dp_scd defaults path, the auto clip is below the canary's natural dual step and "
              "its few sampled updates are averaged into the model, so the statistic sees a "
              "fraction of the loss (real 0.00 against the claim 2; noise x0.5 0.00 and x0.2 "
              "0.36 not caught; x0.1 caught at 3.04)"),
        # the squared hinge's step (dp_gdws) and Langevin time (dp_sgld) shortened by the
        # public opening rule where s is small (session 12), at the optimizers' own defaults;
        # binary optimizer="auto" runs dp_gdws since session 12
        E("DPLinearSVC defaults (binary: dp_gdws, opened step)", "losses", svc_defaults("auto"),
          loss="squared_hinge"),
        E("DPLinearSVC K=3 optimizer='auto' (dp_nag_opt)", "multiclass (K = 3)",
          svc_defaults("auto"), loss="squared_hinge", n_classes=3, factor=0.2,
          why="dp_nag_opt at its own defaults, as optimizer='auto' runs it for K = 3: its "
              "default steps move the canary's margins out of the clip, so the statistic sees "
              "part of its pull (real 0.46 against the claim 2; noise x0.5 1.55, not caught; "
              "x0.2 caught at 4.24)"),
        E("DPLinearSVC dp_sgld defaults (opened time)", "losses", svc_defaults("dp_sgld"),
          loss="squared_hinge", factor=0.2,
          why="dp_sgld at its own step and Langevin time (a few long steps at this path's small "
              "s): the canary's hinge leaves the clip early, so the statistic sees part of its "
              "pull (real 0.12 against the claim 2; noise x0.5 not caught, 1.01; x0.2 caught, "
              "3.92)"),
        # session 13's rules at the optimizers' own defaults: dp_scd's squared-hinge update
        # clip (min(1, (n^0.75 sqrt(2 rho) / 100) ** 0.75) of the natural dual step since
        # session 34, and at most n^0.75 sqrt(2 rho) / 52 since session 36, a bound that binds
        # only below this path's ratio; a public step input, the noise is update_clip * R; the
        # noise at the bound's clip: tests/test_dp_scd.py), and dp_nag_opt's
        # squared-loss horizon 1.5 sqrt(n sqrt(2 rho))
        E("DPLinearSVC dp_scd defaults (auto update clip, n^3/4 rule)", "losses",
          svc_defaults("dp_scd"), loss="squared_hinge"),
        # ... and at 8 rows, where the ratio n^0.75 sqrt(2 rho) is below 7.3 and the clip is
        # session 36's linear bound n^0.75 sqrt(2 rho) / 52 (the smallest budgets for the data)
        E("DPLinearSVC dp_scd defaults at 8 rows (the update clip's linear bound)", "losses",
          svc_defaults("dp_scd"), loss="squared_hinge", n_rows=8),
        # session 17: dp_nsgd_tree at its own defaults on the squared hinge (the full batch,
        # round(s) epochs, the half step 4 / (M R))
        E("DPLinearSVC dp_nsgd_tree defaults (half step)", "losses",
          svc_defaults("dp_nsgd_tree"), loss="squared_hinge", factor=0.2,
          why="dp_nsgd_tree at its own defaults: a few normalised full-batch steps (round(s) "
              "epochs at this path's small s), each of length eta_t whatever the gradient, so "
              "the canary moves the direction, not the length, and the statistic sees a small "
              "part of its pull (real 0.00 against the claim 2; noise x0.5 0.94, not caught; "
              "x0.2 caught at 3.24). The tree's node noise at x0.5 is caught on the estimator "
              "paths with a fixed small step ('DPLogisticRegression on Dask (dp_nsgd_tree full "
              "batch)', 'DPRidge dp_nsgd_tree full batch, momentum 0.5')"),
        E("DPRidge dp_nag_opt defaults (horizon 1.5)", "losses", ridge(optimizer="dp_nag_opt"),
          loss="squared"),
        # binary optimizer="auto" at a small budget for the data with a public row bound runs
        # dp_scd (session 13: 13 rows, 3 columns, s = 6.7 < 8)
        E("DPLinearSVC binary optimizer='auto', small budget (dp_scd)", "losses",
          svc_defaults("auto"), loss="squared_hinge", n_rows=12),
        # multiclass: the public rule picks dp_scd with its defaults (31 rows, 3 columns,
        # s = 15.96 < 16)
        E("DPLogisticRegression K=3 optimizer='auto' (dp_scd)", "multiclass (K = 3)",
          logistic_defaults(derivative_clip=0.1),
          n_classes=3, factor=0.1,
          why="dp_scd at its own defaults, as optimizer='auto' runs it for K = 3 at a small "
              "signal-to-noise ratio: the auto update clip is below the canary's natural dual "
              "step and its few sampled updates are averaged into the model, so the audit's "
              "statistic sees a fraction of the loss (binary, before session 11: noise x0.2 "
              "not caught, x0.1 caught). The K = 3 dp_scd path above, with a saturating clip, "
              "is caught at x0.5."),
        # DPRidge's targets divided by the half-range of y_bounds (here 4) and the residual clip
        # of derivative_clip="auto" (dp_sgld's quarter of the half-range): the units and the
        # rule of session 8, at the optimizer's own defaults
        E("DPRidge y_bounds=(-4, 4), derivative_clip='auto' (dp_sgld)", "target units",
          lambda seed: DPRidge(epsilon=POWER_EPSILON, delta=POWER_DELTA, fit_intercept=False,
                               data_norm=1.0, y_bounds=(-4.0, 4.0), optimizer="dp_sgld",
                               random_state=seed),
          loss="squared", fits=2000),
        # DPRidge's private target bounds (y_bounds="auto": two cell-scored quantiles with the
        # public base measure, then the model on what they leave): the claim composes both;
        # the zero-row neighbour keeps the canary's target, so the audit sees the model's part
        # (derivative_clip="auto": a quarter of the released half-range, so the canary's
        # clipped residual has the size it has in the path "DPRidge (squared)")
        E("DPRidge y_bounds='auto' (dp_gdws)", "private bounds",
          auto_targets(step=0.01, max_iter=10),
          loss="squared", offset_free=True, factor=0.4,
          why="the claim includes the two private target quantiles, which this canary (its "
              "target the same in D and D') cannot see; the model is calibrated to what they "
              "leave, so half its noise reaches about the whole claim (1000 + 1000 fits: 1.94; "
              "2000 + 2000: 2.04 and 1.88): x0.4 is caught (2.31 to 2.81)"),
        # ... with 300 rows, where the spread's public rule takes the upper quartile of
        # |y - median| (reliable from about 200 rows at this budget) instead of the MAD
        E("DPRidge y_bounds='auto', quartile spread (dp_gdws, 300 rows)", "private bounds",
          auto_targets(step=0.01, max_iter=10),
          loss="squared", offset_free=True, factor=0.4, n_rows=300,
          why="as the path above, in the branch of the upper quartile (real 0.75 against 2 with "
              "1000 + 1000 fits; x0.4 caught at 3.68; the tail reserve charged, not drawn)"),
        # ... with 85% of the targets 0: the upper quartile of |y - median| is released at the
        # grid's floor and the bounds come from the tail reserve (the median of the |y - median|
        # that are not 0), charged in every fit that plans it
        E("DPRidge y_bounds='auto', zero-inflated targets: tail median (dp_gdws, 300 rows)",
          "private bounds",
          auto_targets(step=0.01, max_iter=10),
          loss="squared", offset_free=True, factor=0.4, n_rows=300, atom_share=0.85,
          why="as the path above, in the branch of the tail median (85% of the targets 0; real "
              "0.45 against 2 with 1000 + 1000 fits; x0.4 caught at 2.85, x0.5 at 2.11)"),
        # ... dp_gdws at its own squared-loss step count, which reads the smoothness and so the
        # released bounds: the fit reports the zCDP budget left (session 27), not the event of
        # the step count it took
        E("DPRidge y_bounds='auto', dp_gdws default step count (zCDP left, 300 rows)",
          "private bounds",
          auto_targets(step=0.01),
          loss="squared", offset_free=True, n_rows=300, fits=1000),
        # ... and on Dask: the quantiles' cell counts and the tail's selection summed over the
        # chunks on the workers, the releases drawn on the client (session 28)
        E("DPRidge on Dask y_bounds='auto', zero-inflated targets (dp_gdws, 300 rows)",
          "Dask input",
          auto_targets(step=0.01, max_iter=10),
          loss="squared", offset_free=True, factor=0.4, n_rows=300, atom_share=0.85, dask=True,
          why="the in-memory path 'zero-inflated targets: tail median' on two uneven chunks: "
              "the claim includes the three target quantiles, which this canary cannot see "
              "(real 0.52 against 2 with 1000 + 1000 fits; x0.4 caught at 2.86)"),
        # data_norm="auto": a private median of the row norms, then dp_nag_opt at its own
        # defaults with the bound 1.5 medians and the step from the released typical row
        # (session 14's floor 0.8 R^2); the claim composes the median and the model
        E("DPRidge data_norm='auto' (dp_nag_opt, step from the released median)",
          "private bounds",
          lambda seed: DPRidge(epsilon=POWER_EPSILON, delta=POWER_DELTA, fit_intercept=False,
                               data_norm="auto", y_bounds=(-1.0, 1.0), derivative_clip=0.25,
                               optimizer="dp_nag_opt", random_state=seed),
          loss="squared", n_rows=300, factor=0.3,
          why="300 rows, so that the median is reliable and the bound sits at 1.5 times the "
              "rows' norm 1: the canary (norm 1) is then two thirds of the bound, and its "
              "clipped residual leaves the clip as the longer steps fit it, so the statistic "
              "sees part of its pull (real 0.00 against the claim 2, 1000 + 1000 fits; noise "
              "x0.5 0.78, not caught; x0.3 caught at 2.66)"),
        # data_norm="auto" and binary dp_scd at its own update clip, whose natural dual step
        # takes the released typical row (session 33; the sensitivity keeps the bound)
        E("DPLogisticRegression data_norm='auto' "
          "(dp_scd, natural dual step at the released typical row)",
          "private bounds",
          lambda seed: DPLogisticRegression(epsilon=POWER_EPSILON, delta=POWER_DELTA,
                                            fit_intercept=False, data_norm="auto",
                                            derivative_clip=0.1, optimizer="dp_scd",
                                            random_state=seed),
          n_rows=300, factor=0.03,
          why="300 rows, so that the median is reliable: as for the binary dp_scd defaults "
              "path, the auto clip is far below the canary's natural dual step and its few "
              "sampled updates are averaged into the model, so the statistic sees a small "
              "fraction of the loss (real 0.00 against the claim 2, 1000 + 1000 fits; noise "
              "x0.5, x0.3, x0.2 0.00 and x0.1 0.45 not caught; x0.05 caught at 2.04, x0.03 at "
              "3.73)"),
        # data_norm="auto" with rows of norm 1.2, between the grid's candidates 1 and 2^(1/2):
        # the median scored by cells (session 19), released as 1 (its cell holds 1.2), so the
        # bound 1.5 keeps every row whole; scored as points it was a base-measure pick
        E("DPLogisticRegression data_norm='auto', rows between two candidates (dp_gdws)",
          "private bounds",
          auto_rows,
          n_rows=300, row_norm=1.2, factor=0.4,
          why="300 rows of norm 1.2, so that the median is reliable and its cell holds the "
              "rows: the bound is 1.5 and the canary (norm 1.2) four fifths of it, so half "
              "the noise reaches only 1.80 against the claim 2 (real 0.33, 1000 + 1000 fits); "
              "x0.4 is caught at 2.54)"),
        E("DPLogisticRegression data_norm='auto' with Laplace steps (dp_gdws, pure DP)",
          "private bounds",
          auto_rows_laplace,
          n_rows=300, row_norm=1.2, factor=0.2, fits=2000,
          why="Laplace steps are calibrated to the L1 bound sqrt(p) G of a gradient in p = 3 "
              "columns, and the canary's gradient lies in its own column (its L1 norm is its "
              "L2 norm), so its coordinate sees 1/sqrt(3) of what the claim allows; its norm "
              "1.2 is four fifths of the released bound 1.5. Real 0.31 against the pure claim "
              "2 (2000 + 2000 fits); x0.4 reached 0.72 with 1000 + 1000 fits, x0.2 is caught "
              "at 2.19, x0.1 at 4.15"),
        # ... and on Dask, where the row norms are computed on the workers and the median's
        # cell counts summed over the chunks (session 28)
        E("DPLogisticRegression on Dask data_norm='auto', rows between two candidates (dp_gdws)",
          "Dask input",
          auto_rows,
          n_rows=300, row_norm=1.2, factor=0.4, dask=True,
          why="the in-memory path 'data_norm=auto, rows between two candidates' on two uneven "
              "chunks (real 0.48 against 2 with 1000 + 1000 fits; x0.4 caught at 2.47)"),
        # every default of DPRidge but the intercept (an all-zero row is a null record only
        # without one): the private row bound and target bounds, optimizer="auto" and
        # derivative_clip="auto", in memory and on Dask
        E("DPRidge defaults (dp_scd): data_norm and y_bounds 'auto' (300 rows)", "private bounds",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=300, factor=0.2,
          why="dp_scd at its own update clip, as optimizer='auto' picks it here: the auto clip "
              "is below the canary's natural dual step and its few sampled updates are "
              "averaged into the model, so the statistic sees a fraction of the loss (real "
              "0.00 against the claim 1.99; noise x0.5 reached 0.29 at other seeds, not "
              "caught; x0.2 caught at 3.37, 1000 + 1000 fits)"),
        # on Dask optimizer="auto" falls back (dp_scd does not run there): dp_gdws below
        # s = 10 (18 rows and the canary: s = 9.8), dp_masg from it (300 rows: s = 155; session
        # 53)
        E("DPRidge on Dask, defaults (dp_gdws, s < 10, zCDP left): data_norm and y_bounds "
          "'auto' (18 rows)",
          "Dask input",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=18, dask=True, factor=0.1,
          why=DASK_GDWS_DEFAULTS_WHY),
        E("DPRidge on Dask, defaults (dp_masg, 10 <= s < 300): data_norm and y_bounds 'auto' "
          "(300 rows)",
          "Dask input",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=300, dask=True, factor=MASG_DEFAULTS_FACTOR,
          why=MASG_DEFAULTS_WHY),
        # ... and from s = 300 (session 37), where optimizer="auto" runs dp_masg, in memory and
        # on Dask (600 rows; s = 310 here; the paths above, at 300 rows, have s = 155)
        E("DPRidge defaults (dp_masg, s >= 300): data_norm and y_bounds 'auto' (600 rows)",
          "private bounds",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=600, factor=MASG_DEFAULTS_FACTOR,
          why=MASG_DEFAULTS_WHY),
        E("DPRidge on Dask, defaults (dp_masg, s >= 300): data_norm and y_bounds 'auto' "
          "(600 rows)",
          "Dask input",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=600, dask=True, factor=MASG_DEFAULTS_FACTOR,
          why=MASG_DEFAULTS_WHY),
        # several targets in one fit (session 29): the residual vector of a record clipped
        # jointly (derivative_clip="auto": the optimizer's factor times sqrt(K), the largest
        # residual at W = 0), each column in units of its own half-range
        E("DPRidge two targets, per-target public bounds (dp_gdws, joint residual clip)",
          "several targets",
          two_targets,
          loss="squared", n_targets=2),
        # ... calibrated by the PLD accountant (the joint clip's event is one target's)
        E("DPRidge two targets, accountant=pld (dp_gdws, joint residual clip)",
          "several targets",
          lambda seed: two_targets(seed, accountant="pld"),
          loss="squared", n_targets=2),
        # ... fitted in a worker process, unseeded, as GridSearchCV(n_jobs=2) fits it
        E("DPRidge two targets in a worker process (loky, unseeded)", "worker processes",
          _in_worker_process(two_targets),
          loss="squared", n_targets=2, factor=0.4, why=_WHY_WORKERS),
        # ... with private bounds for each column, the releases of both sharing one column's
        # budget
        E("DPRidge two targets, y_bounds='auto' (dp_gdws, 300 rows)", "several targets",
          auto_targets(step=0.01, max_iter=10),
          loss="squared", offset_free=True, factor=0.4, n_rows=300, n_targets=2,
          why="as the one-target path 'y_bounds=auto, quartile spread': the claim includes "
              "the six target releases (a median, a spread and the tail reserve per column), "
              "which this canary (its targets the same in D and D') cannot see (real 0.51 "
              "against 2, 1000 + 1000 fits; x0.4 caught at 3.55)"),
        # ... every default but the intercept, in memory (dp_scd) and on Dask (dp_gdws)
        E("DPRidge defaults, two targets (dp_scd): data_norm and y_bounds 'auto' (300 rows)",
          "several targets",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=300, factor=0.2, n_targets=2,
          why="as the one-target path 'DPRidge defaults (dp_scd)': the auto update clip is "
              "below the canary's natural dual step, so the statistic sees a fraction of the "
              "loss (real 0.00 against 1.99, 1000 + 1000 fits; x0.2 caught at 2.92)"),
        E("DPRidge on Dask, defaults, two targets (dp_gdws, s < 10, zCDP left): data_norm "
          "and y_bounds 'auto' (18 rows)",
          "Dask input",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=18, dask=True, factor=0.07, n_targets=2,
          why=DASK_GDWS_DEFAULTS_WHY),
        E("DPRidge on Dask, defaults, two targets (dp_masg, 10 <= s < 300): data_norm and "
          "y_bounds 'auto' (300 rows)",
          "Dask input",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=300, dask=True, factor=MASG_DEFAULTS_FACTOR,
          n_targets=2, why=MASG_DEFAULTS_WHY),
        E("DPRidge defaults, two targets (dp_masg, s >= 300): data_norm and y_bounds 'auto' "
          "(600 rows)",
          "several targets",
          ridge_defaults,
          loss="squared", offset_free=True, n_rows=600, factor=MASG_DEFAULTS_FACTOR,
          n_targets=2, why=MASG_DEFAULTS_WHY),
        E("DPLogisticRegression CSR", "sparse input", logistic(), sparse="csr"),
        E("DPRidge CSC", "sparse input", ridge(), loss="squared", sparse="csc"),
        # a float32 X is read in place by kernels compiled for float32 rows (issue 16)
        E("DPLogisticRegression float32", "float32 input", logistic(), float32=True),
        E("DPRidge float32 (dp_scd)", "float32 input", ridge(), loss="squared", float32=True),
        E("DPLogisticRegression secure_mode", "secure_mode", logistic(secure_mode=True)),
        E("DPLogisticRegression accountant=pld", "PLD accountant", logistic(accountant="pld")),
        # a fit in a worker process of joblib's loky, unseeded (the search's n_jobs=2 path)
        E("DPLogisticRegression in a worker process (loky, unseeded)", "worker processes",
          _in_worker_process(logistic()), factor=0.4, why=_WHY_WORKERS),
        E("DPRidge accountant=pld", "PLD accountant", ridge(accountant="pld"), loss="squared"),
        # the Dask path: the steps' sums over chunks on the workers, the noise on the client
        E("DPLogisticRegression on Dask (dp_gdws)", "Dask input",
          logistic(optimizer=DPGDWS(step=0.01, max_iter=10)), dask=True),
        E("DPRidge on Dask (dp_nag_opt)", "Dask input",
          ridge(optimizer="dp_nag_opt"), loss="squared", dask=True, factor=0.4,
          why="dp_nag_opt at its own horizon: with the squared loss's longer horizon of session "
              "13 the canary's pull is spread over more steps, and noise x0.5 reached 1.96 "
              "against the claim 2 (not caught, real code 0.59); x0.4 caught at 2.71 (1000 + "
              "1000 fits). The same optimizer without Dask is caught at x0.5 (path 'DPRidge "
              "dp_nag_opt defaults (horizon 1.5)')"),
        # Poisson batches on Dask: the sample drawn on the client, the sampled sums on the
        # workers (the optimizer path "dp_gdws poisson"'s batch and steps). Full size, 1000 + 1000
        # fits (2026-11-23): real code lower bound 0.90 vs claim 2.0; noise x0.5: 2.80, caught
        E("DPLogisticRegression on Dask (dp_gdws Poisson)", "Dask input",
          logistic(optimizer=DPGDWS(step=0.01, batch_size=8, max_iter=100)), dask=True),
        # PrivateSearchCV: the released model is the selected run's (trained on the training
        # part), or with refit=True the selected candidate refitted on all the rows; the claim
        # is the search's epsilon_ (repeat-and-select of the runs, the refit composed). E[K] = 1
        # and a validation part of 10% keep the claim near the fits' and the canary in most runs'
        # training parts, so that a fault is visible
        E("PrivateSearchCV over DPLogisticRegression", "model selection",
          _private_search(logistic(), epsilon=1.0)),
        E("PrivateSearchCV over DPLogisticRegression, refit", "model selection",
          _private_search(logistic(), epsilon=0.5, refit=True), factor=0.3,
          why="the search's claim covers K runs and the selection, and with the refit a "
              "full-data fit too, so a single canary sees less than the claim: noise "
              "x0.5 reached 0.62 against the claim 1.09 at one seed (not caught; the real code 0); "
              "x0.3 is caught at 1.71 and 1.94 at two seeds (1000 + 1000 fits)"),
        E("PrivateSearchCV over a PrivatePipeline", "model selection",
          _private_search(_normalized_pipeline(logistic(), epsilon=1.0), epsilon=None),
          factor=0.4,
          why="the search's claim covers K runs and the selection, so a single canary sees "
              "less than the claim: noise x0.5 reached 1.28 against the claim 1.08 at one seed "
              "(not caught; the real code 0.09), x0.4 is caught at 1.85 (1000 + 1000 fits)"),
        # the regressor's search: its candidates scored by the clipped squared error (targets
        # and predictions clipped to the public y_bounds, sensitivity B/m), not by accuracy
        E("PrivateSearchCV over DPRidge", "model selection",
          _private_search(ridge(optimizer=DPGDWS(step=0.01)), epsilon=1.0), loss="squared",
          factor=0.4,
          why="the search's claim covers K runs and the selection, so a single canary sees "
              "less than the claim: noise x0.5 reached 0.98 against the claim 1.08 (not caught; "
              "the real code 0.14), x0.4 is caught at 2.00 (1000 + 1000 fits). dp_gdws rather "
              "than DPRidge's default (dp_scd at this path's s): the scoring is what this path "
              "audits, and dp_scd's "
              "Poisson-sampled event gives a claim of 1.85 that its canary cannot approach "
              "(x0.5 reached 0.18)"),
        # ... over DPRidge with two targets: the mean of each record's two clipped squared
        # errors, each column clipped to its own public bounds (sensitivity mean_k B_k / m)
        E("PrivateSearchCV over DPRidge, two targets (per-target bounds)", "model selection",
          _private_search(two_targets, epsilon=1.0), loss="squared", n_targets=2, factor=0.4,
          why="as the one-target search path: the claim covers K runs and the selection, so "
              "a single canary sees less than the claim (real 0.02 against 1.08, 1000 + 1000 "
              "fits; x0.4 caught at 1.91)"),
        # the other distributions of the number of runs K, each with its own repeat-and-select
        # bound: Poisson (shape=inf; K = 0 with probability 1/e, then no model is released, an
        # outcome whose probability does not depend on the data) and logarithmic (shape=0)
        E("PrivateSearchCV over DPLogisticRegression, Poisson K", "model selection",
          _private_search(logistic(), epsilon=1.0, shape=np.inf), factor=0.3,
          why="37% of the searches release no model (K = 0) and some select another run "
              "than the canary's, so the canary sees less than the claim 1.33: noise x0.5 "
              "reached 0.33 (not caught; the real code 0.00), x0.3 is caught at 2.17 "
              "(1000 + 1000 fits)"),
        E("PrivateSearchCV over DPLogisticRegression, logarithmic K", "model selection",
          _private_search(logistic(), epsilon=1.0, shape=0.0), factor=0.4,
          why="the search's claim covers K runs and the selection: noise x0.5 reached 0.80 "
              "against the claim 1.04 (not caught; the real code 0.05), x0.4 is caught at 1.87 "
              "(1000 + 1000 fits)"),
        # dp_gdws's tail average on Dask: the client averages the iterates it released from the
        # chunk sums (the path "DPLogisticRegression dp_gdws average=1/2" without Dask)
        E("DPLogisticRegression on Dask (dp_gdws average=1/2)", "Dask input",
          logistic(optimizer=DPGDWS(step=0.01, average=0.5)), dask=True),
        # float32 chunks are read in place on the workers, by the float32 kernels
        E("DPLogisticRegression on Dask float32 (dp_gdws)", "Dask input",
          logistic(optimizer=DPGDWS(step=0.01, max_iter=10)), dask=True, float32=True),
        # the other two optimizers that run on Dask, at the powered settings of their optimizer
        # paths (_POWERED): dp_masg's stages and dp_sgld's plan over the same chunk sums
        E("DPLogisticRegression on Dask (dp_masg)", "Dask input",
          logistic(optimizer=DPMASG(**_POWERED["dp_masg"][0])), dask=True),
        E("DPLogisticRegression on Dask (dp_sgld)", "Dask input",
          logistic(optimizer=DPSGLD(**_POWERED["dp_sgld"][0])), dask=True),
        # dp_nsgd_tree on Dask: the client draws each epoch's order and sends each step's slice
        # to the chunks that hold its rows. In full batch the canary is in every step's one
        # node; with mini-batches it enters log2(M) + 1 nodes a step (_WHY_TREE), so the
        # mini-batch paths (in memory, for comparison, and on Dask) scale the noise further
        E("DPLogisticRegression on Dask (dp_nsgd_tree full batch)", "Dask input",
          logistic(optimizer=DPNSGDTree(**_TREE_ESTIMATOR, batch_size=None)), dask=True),
        E("DPLogisticRegression dp_nsgd_tree mini-batch", "losses",
          logistic(optimizer=DPNSGDTree(**_TREE_ESTIMATOR, batch_size=16)), factor=0.25,
          why=_WHY_TREE),
        E("DPLogisticRegression on Dask (dp_nsgd_tree mini-batch)", "Dask input",
          logistic(optimizer=DPNSGDTree(**_TREE_ESTIMATOR, batch_size=16)), dask=True,
          factor=0.25, why=_WHY_TREE),
        # the squared loss's full batch keeps momentum 0.5 from s = 10 (session 16's rule):
        # one node a step, as without momentum, with the node sensitivity alpha = 1/2 of it
        E("DPRidge dp_nsgd_tree full batch, momentum 0.5", "losses",
          ridge(optimizer=DPNSGDTree(**_TREE_ESTIMATOR, batch_size=None, momentum=0.5)),
          loss="squared"),
        # ... and on Dask: the same epoch driver, its full-batch sums over the chunks
        E("DPRidge on Dask (dp_nsgd_tree full batch, momentum 0.5)", "Dask input",
          ridge(optimizer=DPNSGDTree(**_TREE_ESTIMATOR, batch_size=None, momentum=0.5)),
          loss="squared", dask=True),
    ]


def offset_free_response(x):
    """``model -> predict(x) - predict(0)``: a regressor's response to the canary's features,
    without the offset of a private target centre (``y_bounds="auto"``), whose spread would
    hide the canary in ``predict(x)`` alone. For K targets, the sum of the K responses (the
    canary pulls every column towards its upper bound)."""
    rows = np.vstack([x, np.zeros_like(x)])

    def statistic(model):
        at, zero = np.asarray(model.predict(rows), dtype=float).reshape(2, -1)
        return float(np.sum(at - zero))
    return statistic


def _projected_score(x, label, loss):
    """``model -> float``: the canary's margins projected on the direction its loss pulls them
    at zero (a K-class canary moves all K margins; the class's own margin carries part of it)."""

    def statistic(model):
        k = int(np.searchsorted(model.classes_, label))
        K = model.classes_.shape[0]
        if loss == "multinomial":
            u = -np.full(K, 1.0 / K)
            u[k] += 1.0
        else:  # one-vs-rest squared hinge: +1 for the class, -1 for the others
            u = -np.ones(K)
            u[k] = 1.0
        scores = np.asarray(model.decision_function(x[None, :]), dtype=float).ravel()
        return float(scores @ (u / np.linalg.norm(u)))

    return statistic


def path_seeds(path):
    """The seeds of a path's real and faulty audits (stable, from its label: the tests and the
    benchmark run the same fits)."""
    key = zlib.crc32(path.label.encode())
    return [11, key], [13, key]


def run_path(path, n_fits, random_state=0, factor=1.0, method="split"):
    """Audit ``path`` with ``n_fits`` fits on D and on D', the noise scaled by ``factor``.

    Parameters
    ----------
    path : OptimizerPath or EstimatorPath
    n_fits : int
    random_state : int or sequence of int
    factor : float, default=1.0
        1: the real code. Otherwise the fits run under :func:`~skdp.audit.noise_scaled`.
    method : {"split", "best"}

    Returns
    -------
    AuditResult
    """
    if factor != 1.0:
        with noise_scaled(factor):
            return run_path(path, n_fits, random_state, 1.0, method)
    if isinstance(path, OptimizerPath):
        c = path.canary()
        return audit_optimizer(path.make_optimizer(), c.problem, path.budget(), c.index,
                               neighbour=c.neighbour, n_fits=n_fits, method=method,
                               random_state=random_state)
    c, X = path.data()
    statistic = None
    if path.n_classes > 2:
        loss = "multinomial" if path.loss == "logistic" else path.loss
        statistic = _projected_score(c.x, c.label, loss)
    if path.offset_free:
        statistic = offset_free_response(c.x)
    if path.dask:
        X, y, neighbour = path.dask_inputs(c, X)
        return audit_estimator(path.make, X, y, c.index, neighbour=neighbour, n_fits=n_fits,
                               statistic=statistic, method=method, random_state=random_state)
    return audit_estimator(path.make, X, c.y, c.index, n_fits=n_fits, statistic=statistic,
                           method=method, random_state=random_state)
