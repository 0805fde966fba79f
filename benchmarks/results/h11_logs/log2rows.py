"""Rebuild bench_defaults rows from run logs (+ the sklearn cache), for runs split over processes."""
import json, math, re, sys
sys.path.insert(0, "/work/wt/h11/benchmarks")
import bench_defaults as B

PAT = re.compile(r"^(\S+)\s+n=(\d+)\s+eps=(\S+)\s+seed=(\d+) (\S+)\s+(\S+)\s+(\S+) \(opacus (\S+), base (\S+), (\S+)s\)")

def rows_from(logs, caches, keep=lambda r: True):
    cache = {}
    for c in caches:
        try:
            cache.update(json.load(open(c)))
        except FileNotFoundError:
            pass
    rows, seen_ref, seen_op, seen = [], set(), set(), set()
    for log in logs:
        for line in open(log):
            m = PAT.match(line.strip())
            if not m:
                continue
            ds, n, eps, seed, est, opt, score, op, base, dt = m.groups()
            n, eps, seed = int(n), float(eps), int(seed)
            part = "heldout" if ds in B.HELDOUT else "dev"
            task = B.ESTIMATORS[est][1]
            common = dict(part=part, dataset=ds, task=task, estimator=est, n=n, seed=seed)
            if not keep(common | {"eps": eps}):
                continue
            key = (ds, n, eps, seed, est, opt)
            if key in seen:
                continue
            seen.add(key)
            rows.append(dict(common, method=opt, eps=eps, score=float(score), eps_spent=eps, seconds=float(dt)))
            if (ds, n, eps, seed, est) not in seen_op:
                seen_op.add((ds, n, eps, seed, est))
                rows.append(dict(common, method="opacus", eps=eps, score=float(op), eps_spent=eps, seconds=0.0))
            if (ds, n, seed, est) not in seen_ref:
                seen_ref.add((ds, n, seed, est))
                rows.append(dict(common, method="baseline", eps=math.inf, score=float(base), eps_spent=0.0, seconds=0.0))
                sk = cache.get(f"sklearn|{ds}|{n}|{seed}|{est}")
                if sk is not None:
                    rows.append(dict(common, method="sklearn", eps=math.inf, score=float(sk), eps_spent=math.inf, seconds=0.0))
    return rows
