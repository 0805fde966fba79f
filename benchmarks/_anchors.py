"""The anchors the benchmarks compare skdp with: Opacus DP-SGD and diffprivlib.

Opacus runs in this interpreter (``pip install torch==2.13.0 opacus``, the ``bench`` extra).
diffprivlib needs scikit-learn <= 1.7, so it runs in its own virtual environment
(``benchmarks/.venv-diffprivlib``, created on first use, gitignored) through the helper script
``_anchors_diffprivlib.py``; data and results are exchanged through temporary ``.npz`` files.
Each function returns a list of ``(epsilon, seed, score, epsilon_spent, fit_seconds)`` or raises
:class:`AnchorUnavailable` with the reason.

Opacus configuration (one anchor for every benchmark; fixed, tuned on nothing; issue 15's):
one ``nn.Linear(d, 1)`` layer with bias, SGD, learning rate 1, no momentum, no weight decay,
Poisson batches of expected size 512 (64 for n <= 2000), 10 epochs, per-example clipping norm 1,
``make_private_with_epsilon`` with the PRV accountant below epsilon 0.5 and RDP otherwise (RDP
orders extended to 4096 so that small epsilons can be certified), delta 1e-5
(:func:`opacus_config`). Loss: ``BCEWithLogitsLoss`` (classification) or ``MSELoss``
(regression, targets on [-1, 1]). epsilon = inf trains the same model with the same batches, no
clipping, no noise. ``bench_speed.py`` also times an older, cheaper configuration
(:data:`CHEAP_OPACUS_CONFIG`: lr 0.5, batch 256, 5 epochs).

diffprivlib configuration: ``LogisticRegression(epsilon, data_norm=1, C=1)`` and
``LinearRegression(epsilon, bounds_X=(-1, 1), bounds_y=(-1, 1))`` (the rows have unit norm
and the targets are mapped onto [-1, 1]); both are pure epsilon-DP (delta = 0). diffprivlib does
not accept epsilon = inf, so that column is left empty for it.
"""

import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-diffprivlib"
#: The older, cheaper configuration (timed beside the anchor in bench_speed.py only).
CHEAP_OPACUS_CONFIG = {"lr": 0.5, "batch_size": 256, "epochs": 5, "max_grad_norm": 1.0}


def opacus_config(n):
    """The anchor's fixed configuration (issue 15's): a function of n only."""
    return {"lr": 1.0, "batch_size": 64 if n <= 2000 else 512, "epochs": 10, "max_grad_norm": 1.0}


def opacus_accountant(epsilon):
    """The anchor's accountant: PRV below epsilon 0.5 (tighter there), RDP otherwise."""
    return "prv" if epsilon < 0.5 else "rdp"


class AnchorUnavailable(RuntimeError):
    """An anchor library could not run here (the message says why)."""


# ----------------------------------------------------------------------------- Opacus
def _extend_rdp_orders():
    """Opacus' default RDP orders stop at 63, which cannot certify epsilon below about
    log(1/delta) / 62 = 0.19 at delta 1e-5 ("The privacy budget is too low"); add orders up to
    4096 (the same conversion, a finer and longer grid; it only lowers the reported epsilon)."""
    from opacus.accountants import RDPAccountant

    base = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    RDPAccountant.DEFAULT_ALPHAS = base + [64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 1536,
                                           2048, 3072, 4096]


def opacus_fit(task, X_tr, y_tr, X_te, y_te, epsilon, seed, delta=1e-5, **config):
    """Train the Opacus linear model once; (score, epsilon spent, fit seconds).

    ``config`` overrides the anchor's (:func:`opacus_config`, :func:`opacus_accountant`)."""
    try:
        import torch
        from torch import nn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise AnchorUnavailable(f"torch not installed ({exc}); pip install torch==2.13.0 opacus") from exc
    try:
        from opacus import PrivacyEngine
    except ImportError as exc:  # pragma: no cover
        raise AnchorUnavailable(f"opacus not installed ({exc})") from exc
    from sklearn.metrics import r2_score

    cfg = dict(opacus_config(len(X_tr)), accountant=opacus_accountant(epsilon))
    cfg.update(config)
    accountant = cfg.pop("accountant")
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    Xt = torch.as_tensor(X_tr, dtype=torch.float32)
    yt = torch.as_tensor(np.asarray(y_tr, dtype=np.float32)).reshape(-1, 1)
    ds = torch.utils.data.TensorDataset(Xt, yt)
    gen = torch.Generator().manual_seed(seed)
    loader = torch.utils.data.DataLoader(ds, batch_size=cfg["batch_size"], shuffle=True, generator=gen)
    model = nn.Linear(X_tr.shape[1], 1)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.BCEWithLogitsLoss() if task == "classification" else nn.MSELoss()
    t0 = time.perf_counter()
    spent = np.inf
    engine = None
    if np.isfinite(epsilon):
        _extend_rdp_orders()
        engine = PrivacyEngine(accountant=accountant)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, opt, loader = engine.make_private_with_epsilon(
                module=model, optimizer=opt, data_loader=loader, target_epsilon=float(epsilon),
                target_delta=delta, epochs=cfg["epochs"], max_grad_norm=cfg["max_grad_norm"],
                noise_generator=torch.Generator().manual_seed(seed + 10_000),
            )
    for _ in range(cfg["epochs"]):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    if engine is not None:
        spent = engine.get_epsilon(delta)
    dt = time.perf_counter() - t0
    with torch.no_grad():
        out = model(torch.as_tensor(X_te, dtype=torch.float32)).numpy().ravel()
    if task == "classification":
        score = float(np.mean((out > 0).astype(int) == np.asarray(y_te)))
    else:
        score = float(r2_score(y_te, out))
    return score, float(spent), dt


def opacus_runs(task, X_tr, y_tr, X_te, y_te, epsilons, seeds, delta=1e-5, log=print):
    rows = []
    for eps in epsilons:
        for seed in range(seeds):
            score, spent, dt = opacus_fit(task, X_tr, y_tr, X_te, y_te, eps, seed, delta)
            rows.append((eps, seed, score, spent, dt))
            log(f"Opacus DP-SGD eps={eps} seed={seed}: {score:.4f} (eps spent {spent:.3f}, {dt:.2f}s)")
    return rows


# ----------------------------------------------------------------------------- diffprivlib
def _venv_python():
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_diffprivlib_venv(log=print):
    """Create ``benchmarks/.venv-diffprivlib`` with diffprivlib and scikit-learn < 1.8 if missing."""
    py = _venv_python()
    probe = [str(py), "-c", "import diffprivlib, sklearn; print(diffprivlib.__version__, sklearn.__version__)"]
    if py.exists():
        out = subprocess.run(probe, capture_output=True, text=True, check=False)
        if out.returncode == 0:
            return out.stdout.split()
    log(f"creating {VENV} (diffprivlib, scikit-learn<1.8) ...")
    try:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True, text=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "diffprivlib", "scikit-learn<1.8"],
                       check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise AnchorUnavailable(f"could not build the diffprivlib environment: {detail.strip()[-500:]}") from exc
    out = subprocess.run(probe, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise AnchorUnavailable(f"diffprivlib environment broken: {out.stderr.strip()[-500:]}")
    return out.stdout.split()


def diffprivlib_runs(task, X_tr, y_tr, X_te, y_te, epsilons, seeds, log=print, repeat_time=1):
    """Run diffprivlib in its own environment; rows as for :func:`opacus_runs` (finite eps only)."""
    versions = ensure_diffprivlib_venv(log)
    finite = [float(e) for e in epsilons if np.isfinite(e)]
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        np.savez(inp, X_tr=X_tr, y_tr=y_tr, X_te=X_te, y_te=y_te, task=task,
                 epsilons=np.array(finite), seeds=seeds, repeat_time=repeat_time)
        out = subprocess.run([str(_venv_python()), str(HERE / "_anchors_diffprivlib.py"), str(inp), str(outp)],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise AnchorUnavailable(f"diffprivlib helper failed: {out.stderr.strip()[-800:]}")
        res = np.load(outp)
        rows = [tuple(r) for r in res["rows"].tolist()]
    for eps, seed, score, spent, dt in rows:
        log(f"diffprivlib eps={eps:g} seed={int(seed)}: {score:.4f} ({dt:.2f}s)")
    return [(eps, int(seed), score, spent, dt) for eps, seed, score, spent, dt in rows], versions
