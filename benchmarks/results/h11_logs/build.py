import sys, math
sys.path.insert(0, "/tmp/h11"); sys.path.insert(0, "/work/wt/h11/benchmarks")
import numpy as np
import bench_defaults as B
from log2rows import rows_from
caches = ["/tmp/h11_after3/benchmarks/.cache/anchors.json", "/tmp/h11_after/benchmarks/.cache/anchors.json", "/tmp/h11_before/benchmarks/.cache/anchors.json", "/tmp/h11_after2/benchmarks/.cache/anchors.json"]
keep = lambda r: r["n"] in (1000, 3673, 5000, 30000) and (r["eps"] in (0.1, 0.3, 1.0) or math.isinf(r["eps"])) and r["estimator"] in ("logistic", "ridge")
before = rows_from(["/tmp/h11/before_adult.log", "/tmp/h11/before_rest.log", "/tmp/h11/before4.log"], caches, keep)
after = [r for r in rows_from(["/tmp/h11/after.log"], caches, keep) if r["method"] != "dp_nsgd_tree"]
after2 = [r for r in rows_from(["/tmp/h11/after2.log"], caches, keep) if r["method"] == "dp_nsgd_tree" and r["estimator"] == "logistic"]
after2 += [r for r in rows_from(["/tmp/h11/after3.log"], caches, keep) if r["method"] == "dp_nsgd_tree"]
after2 += rows_from(["/tmp/h11/after4.log"], caches, keep)
after += after2
opts = ["dp_gdws", "dp_sgld", "dp_nsgd_tree"]
B.write(before, opts, "defaults_h11_before")
B.write(after, opts, "defaults_h11_after")
# before -> after comparison, cells present in both
tb, ta = B.summarise(before), B.summarise(after)
lines = ["# dp_gdws, dp_sgld, dp_nsgd_tree: defaults before -> after (issue 15)", "",
         "Mean over 2 seeds; accuracy (logistic) or R^2 (ridge). Marks as in bench_defaults "
         "(B below baseline at eps >= 0.3, n >= 1000; A more than 1 point / 0.02 R^2 below Opacus; D default optimizer below Opacus).", ""]
for part in ("dev", "heldout"):
    for est in ("logistic", "ridge"):
        cb, ca = tb.get((part, est), {}), ta.get((part, est), {})
        keys = sorted(set(cb) & set(ca))
        if not keys:
            continue
        lines += [f"## {est}, {'held-out' if part == 'heldout' else 'development'} part", "",
                  "| data | n | eps | baseline | sklearn | opacus | " + " | ".join(opts) + " |",
                  "|---|---|---|---|---|---|" + "---|" * len(opts)]
        for k in keys:
            b, a = cb[k], ca[k]
            cells = []
            for o in opts:
                if o in b and o in a:
                    vb, va = B.violations(est, o, b, k[1], k[2]), B.violations(est, o, a, k[1], k[2])
                    cells.append(f"{b[o]:.3f}{' '+vb if vb else ''} → **{a[o]:.3f}{' '+va if va else ''}**")
                else:
                    cells.append("")
            lines.append(f"| {k[0]} | {k[1]} | {k[2]:g} | {a['baseline']:.3f} | {a['sklearn']:.3f} | {a['opacus']:.3f} | " + " | ".join(cells) + " |")
        lines.append("")
open("/work/wt/h11/benchmarks/results/defaults_h11_compare.md", "w").write("\n".join(lines))
print("\n".join(lines))
