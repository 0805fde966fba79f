"""Parameter descriptions shared by the estimators' docstrings (numpydoc)."""

PRIVACY_PARAMS = """epsilon : float > 0 or np.inf, default=1.0
        Privacy budget of one fit. ``np.inf``: no noise and no derivative clipping, the fit runs
        to the optimum of the objective (a non-private model).
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 0.1 / n_samples)``, a function of the public n only.
    optimizer : "auto", str or DPOptimizer, default="auto"
        One of :func:`skdp.optimizers.available_optimizers`, an optimizer instance, or "auto":
        %(auto_rule)s; %(fallback)s where that cannot run (Dask input, ``warm_start=True``). The
        choice reads public quantities only, before any private computation, and is
        ``optimizer_``. A named optimizer's parameters are tunable as ``optimizer__<name>``
        (a name stands for the default instance of its class:
        ``set_params(optimizer__epochs=5)`` replaces it by the instance with that parameter).
    fit_intercept : bool, default=True
        Fit an intercept through a constant column of value ``intercept_scaling``; the intercept
        is regularised like the other coefficients (needed for strong convexity).
    intercept_scaling : float > 0 or "auto", default="auto"
        Value of the intercept column. Rows of the design then have norm at most
        ``sqrt(data_norm**2 + intercept_scaling**2)``, the bound used for the sensitivity.
        "auto": the scale of a typical row, whatever the units of X: the private median row
        norm behind ``data_norm="auto"``, or ``data_norm_`` when that is a number (1 when
        ``data_norm=1``) or exact (``epsilon=np.inf``). The value used is
        ``intercept_scaling_``.
    data_norm : float > 0 or "auto", default="auto"
        Bound on the L2 norm of a row of X: rows are scaled down to it (in a copy) before the
        fit, and predictions read rows scaled the same way (the function the fit learned: a row
        within the bound is predicted as ``X @ coef_.T + intercept_``). A number is a public
        bound (free; it must not be derived from the private data).
        "auto": 1.5 times the private median row norm (every row counted once, whatever its
        ``sample_weight``), for 10% of the fit's zCDP budget (up to 40% on small data sets),
        included in ``epsilon_`` (see
        :ref:`raw_data`); inside a :class:`skdp.pipeline.PrivatePipeline` whose steps bound
        their output, that public bound; the largest norm of the rows of positive weight at
        ``epsilon=np.inf``. The value used is ``data_norm_``.
    derivative_clip : float > 0 or "auto", default="auto"
        Bound on the L2 norm of the per-example derivative of the loss in the margins, so that a
        per-example gradient has norm at most ``derivative_clip * R``. "auto": for
        DPLogisticRegression with a gradient method the derivative's size at zero (1/2 for a
        binary model, ``sqrt((K - 1) / K)`` for K classes) while the signal-to-noise ratio s
        of n, the columns and the budget is small, rising as ``(s / 400)**(1/3)`` times the
        never-active bound (1, or sqrt(2) for K classes) to that bound from s = 400, and the
        never-active bound with dp_scd (:func:`skdp.optimizers._defaults.logistic_loss_clip`);
        the derivative at zero for the squared hinge; and for DPRidge's squared loss a public
        factor of the targets' half-range that depends on the optimizer (2 for dp_scd, 1/4 for
        dp_gdws, dp_nag_opt, dp_masg, dp_sgld and dp_nsgd_tree;
        :data:`skdp.optimizers._defaults.SQUARED_CLIP_FACTOR`), times sqrt(K) for K target
        columns, whose residuals are clipped jointly (only "auto" there).
    accountant : {"rdp", "pld"}, default="rdp"
        "rdp": skdp's built-in Rényi-DP accountant. "pld": dp-accounting's PLD accountant
        (``pip install "skdp[accounting]"``), where the optimizer's event supports it.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the batches and the noise: the same seed gives the same model. The guarantee
        holds only while the seed is secret: whoever knows an integer seed (published, logged,
        guessable such as 0 or 42) can regenerate the noise and subtract it, and the model is
        then not private at all. Leave it None (fresh entropy from the operating system) for a
        model you release, or keep the seed (and a ``RandomState`` or ``Generator``'s state)
        as secret as the data; fixed seeds are for experiments and tests. A ``RandomState`` or
        ``Generator`` seeds the fit's own generator with one draw (under its lock, so fits in
        several threads may share one).
    verbose : int, default=0
        0: silent. 1: print a one-line summary of the fit and its privacy spend. 2: also the
        privacy record (steps, sampling, sensitivity, relation) and the running total of every
        ledger the fit charged.
    ledger : PrivacyLedger or None, default=None
        A :class:`skdp.PrivacyLedger` charged with the privacy event of every fit (clones share
        it, so the folds of a ``GridSearchCV`` are charged too). Fits are also charged to every
        ledger open as a context manager. A fit that would pass a ledger's ceiling raises
        :class:`skdp.BudgetExceededError`. Every fit charges anew: refitting the same estimator
        composes another event.
    secure_mode : bool, default=False
        Draw batches and noise from a cryptographically secure generator (randomgen's ChaCha20,
        ``pip install "skdp[secure]"``) instead of numpy's PCG64, seeded from ``random_state``
        in the same way. This protects the noise stream from being predicted; it does not fix
        the leakage of floating-point noise itself (the least significant bits of a
        floating-point Gaussian or Laplace sample are not distributed as the real mechanism's,
        Mironov 2012), nor timing side channels. A ``Generator`` or ``RandomState`` passed as
        ``random_state`` seeds it with one draw.
    max_sample_weight : float > 0, default=1.0
        Public bound on the ``sample_weight`` of ``fit``: weights are clipped to
        ``[0, max_sample_weight]`` and the sensitivity (hence the noise) scales with it. A
        weight of 0 is the null record of the neighbouring relation. Must not be derived from
        the private data.
    warm_start : bool, default=False
        Start the next fit from the current ``coef_`` and ``intercept_``. The released model
        then depends on the data through its start too: its ``epsilon_`` / ``dp_event_`` are
        the composition of every fit of the warm-start chain (``np.inf``, with a warning, when
        the start is not private), while a ledger is charged each fit's own event once. A
        fitted model of another shape (other number of features or classes) raises. Not
        available with ``dp_scd``, whose dual state is secret and never stored (ValueError).
    callback : callable or None, default=None
        Called as ``callback(progress)`` every ``callback_every`` noisy steps of a private fit
        and after the last, with a :class:`skdp.FitProgress` (step, n_steps, epoch, the epsilon
        spent so far at the fit's delta): public, data-independent values only, never iterates
        or losses. ``dp_nsgd_tree`` calls back at epoch ends. A non-private fit
        (``epsilon=np.inf``) never calls it.
    callback_every : int >= 1, default=1
        Number of steps between two calls of ``callback``.
    max_iter : int >= 1 or None, default=None
        The optimizer's ``max_iter`` (None: the optimizer's own, which the optimizer instance
        may set): the number of noisy steps of the full-batch optimizers (``dp_gdws``,
        ``dp_nag_opt``, ``dp_masg``: at most; ``dp_sgld``: passes over the data) and, at
        ``epsilon=np.inf``, of every optimizer the cap on the iterations of the non-private
        solver. Set on a copy of the optimizer at fit time; the ``optimizer`` parameter is not
        changed. ``optimizer__<name>`` sets any parameter of the optimizer, also when it is
        given by its name.
    tol : float > 0 or None, default=None
        The optimizer's ``tol`` (None: the optimizer's own, 1e-8): the tolerance of the
        non-private solver at ``epsilon=np.inf`` (the largest absolute gradient component at
        the solution; a ``ConvergenceWarning`` when ``max_iter`` iterations do not reach it).
        A private fit runs its fixed number of steps and ignores it."""

PRIVACY_ATTRIBUTES = """epsilon_ : float
        Epsilon of the released model's guarantee: what the fit spent (at most ``epsilon``,
        private bounds included), composed with the fits it was warm-started from
        (``warm_start=True``).
    data_norm_ : float
        The row-norm bound the fit used (the public number, or the private estimate); rows
        above it are scaled down to it in predictions as in the fit.
    intercept_scaling_ : float
        The value of the intercept column the fit used.
    derivative_clip_ : float or ndarray
        The derivative clip the fit used (``derivative_clip``, or the value its "auto" rule
        gave; ``inf`` at ``epsilon=np.inf``, where nothing is clipped). For DPRidge with a 2-D y
        one value per target, in its units: the residual vector ``r`` is clipped to
        ``sum_k (r_k / derivative_clip_[k])**2 <= 1``.
    delta_ : float
        Delta of the guarantee (0 for pure-DP mechanisms).
    noise_multiplier_ : float
        Noise scale divided by the sensitivity.
    privacy_record_ : PrivacyRecord
        The released model's guarantee (``event``, ``epsilon``, ``delta``, as above) and what
        the last fit released: with which noise, how often, sampled how, under which
        neighbouring relation. After warm starts, ``details["warm_start_history"]`` holds each
        fit's own record, oldest first.
    dp_event_ : DPEvent
        The composed privacy event of the released model (``privacy_record_.event``).
    optimizer_ : DPOptimizer
        The optimizer instance used for the fit.
    n_iter_ : int
        Number of iterations (noisy steps, or iterations of the non-private solver at
        ``epsilon=inf``).
    hyperparameters_ : dict
        The optimizer's defaults as its public rules resolved them for this fit (n, d, the
        budget, the bounds; never the data), e.g. ``{"max_iter": 40, ...}``; empty for an
        optimizer that reports none. The ``optimizer`` parameter is left unchanged.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has feature names that are all strings."""


def fill(doc, auto_rule, fallback="dp_gdws"):
    """Insert the shared parameter and attribute blocks into a docstring; ``auto_rule`` says
    what ``optimizer="auto"`` runs for this estimator, ``fallback`` what it runs where that
    cannot run."""
    params = PRIVACY_PARAMS.replace("%(auto_rule)s", auto_rule).replace("%(fallback)s", fallback)
    return doc.replace("%(privacy_params)s", params).replace(
        "%(privacy_attributes)s", PRIVACY_ATTRIBUTES
    )
