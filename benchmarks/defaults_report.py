"""Issue 15's criteria, counted on the defaults grid of ``bench_defaults.py`` (before / after).

Run: ``python benchmarks/defaults_report.py --after a.csv b.csv ... --before c.csv ...
[--changed logistic:dp_scd ridge:dp_gdws] [--seeds N] --out defaults_h17``.

The grid is run in pieces (``bench_defaults.py --datasets ... --n ... --out ...``). ``--after``
lists the pieces at the current rules (a csv, or the log of a run stopped before it wrote
one: its complete groups); where one cell appears in several pieces the later one
wins. ``--before`` lists pieces run at the previous rules for the estimator:optimizer pairs of
``--changed`` only (the other pairs' code did not change, so their before equals their after).
Writes ``results/<out>.csv``/``.md``/``_<estimator>.png`` (the after grid: one table and one plot
per estimator, development and held-out parts separate) and ``results/<out>_criteria.md``:

* (a) below the majority / zero-R^2 baseline at epsilon >= 0.3 and n >= 1000;
* (b) more than 1 point of accuracy (0.02 R^2) below the Opacus anchor;
* (c) the estimator's default optimizer below the anchor;
* (d) dp_masg equal to dp_nag_opt (the same score in every seed), and within half a point;

counted per part, before and after, on the cells both grids have (mean over seeds); the
failing cells' tables give the seeds and the paired standard error of each gap to the anchor,
and the cells beyond two standard errors are counted.

Session 12's ten-seed grid (``results/defaults_s12_10seeds*``), from the repository root::

    R=benchmarks/results
    python benchmarks/defaults_report.py --after $R/defaults_s11.csv $R/defaults_s12_scd.csv \
        $R/defaults_s12_seeds3to9_dev.csv $R/defaults_s12_seeds3to9_heldout.csv \
        $R/defaults_s12_svc.csv --before $R/defaults_s11.csv $R/defaults_s12_seeds3to9_dev.csv \
        $R/defaults_s12_seeds3to9_heldout.csv $R/defaults_s12_scd_oldrule_seeds3to9.csv \
        --changed logistic:dp_scd svc:dp_gdws svc:dp_sgld --out defaults_s12_10seeds

Session 13's (``results/defaults_s13_10seeds*``; ``--seeds 3 --out defaults_s13`` for seeds 0 to
2): the accelerated methods' ridge cells rerun with their new horizon::

    python benchmarks/bench_defaults.py --estimators ridge --optimizers dp_nag_opt dp_masg \
        --seeds 10 --heldout dev --out defaults_s13_ridge_acc_dev   # and --heldout heldout
    python benchmarks/defaults_report.py --after $R/defaults_s12_10seeds.csv \
        $R/defaults_s13_ridge_acc_dev.csv $R/defaults_s13_ridge_acc_heldout.csv \
        --before $R/defaults_s12_10seeds.csv --changed ridge:dp_nag_opt ridge:dp_masg \
        --out defaults_s13_10seeds

then the SVC's dp_scd cells with its new squared-hinge update clip (``defaults_s13b*``)::

    python benchmarks/bench_defaults.py --estimators svc --optimizers dp_scd --seeds 10 \
        --heldout dev --out defaults_s13_svc_scd_dev   # and --heldout heldout
    python benchmarks/defaults_report.py --after $R/defaults_s12_10seeds.csv \
        $R/defaults_s13_ridge_acc_dev.csv $R/defaults_s13_ridge_acc_heldout.csv \
        $R/defaults_s13_svc_scd_dev.csv $R/defaults_s13_svc_scd_heldout.csv \
        --before $R/defaults_s13_10seeds.csv --changed svc:dp_scd --out defaults_s13b_10seeds

and last the accelerated methods' cells of all three estimators with the horizon's floor 4
(``defaults_s13c*``, the grid the docs showed until session 16)::

    python benchmarks/bench_defaults.py --optimizers dp_nag_opt dp_masg --seeds 10 \
        --heldout dev --out defaults_s13_acc_floor_dev   # and --heldout heldout
    python benchmarks/defaults_report.py --after (the five above) \
        $R/defaults_s13_acc_floor_dev.csv $R/defaults_s13_acc_floor_heldout.csv \
        --before $R/defaults_s13b_10seeds.csv --changed logistic:dp_nag_opt \
        logistic:dp_masg svc:dp_nag_opt svc:dp_masg ridge:dp_nag_opt ridge:dp_masg \
        --out defaults_s13c_10seeds

Session 16 (``defaults_s16_10seeds*``): the second held-out part
(``bench_defaults.HELDOUT2``, fixed before it was run) at the rules of session 15, then
dp_nsgd_tree's ridge cells of all three parts with the squared loss's full-batch momentum::

    python benchmarks/bench_defaults.py --datasets adult_sex make_classification_wide \
        --estimators logistic svc --heldout heldout2 --seeds 10 --out defaults_s16_heldout2_clf
    python benchmarks/bench_defaults.py --datasets adult_age make_regression_heavy \
        --estimators ridge --heldout heldout2 --seeds 10 --out defaults_s16_heldout2_reg
    python benchmarks/bench_defaults.py --optimizers dp_nsgd_tree --estimators ridge \
        --heldout all --datasets wine diabetes make_regression adult_hours \
        make_regression_lowrank --seeds 10 --out defaults_s16_tree_ridge_dev
    python benchmarks/bench_defaults.py --optimizers dp_nsgd_tree --estimators ridge \
        --heldout heldout2 --seeds 10 --out defaults_s16_tree_ridge_heldout2
    python benchmarks/defaults_report.py --after $R/defaults_s13c_10seeds.csv \
        $R/defaults_s16_heldout2_clf.csv $R/defaults_s16_heldout2_reg.csv \
        $R/defaults_s16_tree_ridge_dev.csv $R/defaults_s16_tree_ridge_heldout2.csv \
        --before $R/defaults_s13c_10seeds.csv $R/defaults_s16_heldout2_clf.csv \
        $R/defaults_s16_heldout2_reg.csv --changed ridge:dp_nsgd_tree --out defaults_s16_10seeds

then dp_nsgd_tree's cells of all three estimators and parts with the full batch at every s
(``defaults_s16b_10seeds*``)::

    python benchmarks/bench_defaults.py --optimizers dp_nsgd_tree --heldout all --seeds 10 \
        --out defaults_s16_tree_all
    python benchmarks/defaults_report.py --after (the five above) $R/defaults_s16_tree_all.csv \
        --before $R/defaults_s16_10seeds.csv --changed logistic:dp_nsgd_tree \
        svc:dp_nsgd_tree ridge:dp_nsgd_tree --out defaults_s16b_10seeds

Session 17 (``defaults_s17_10seeds*``): the third held-out part (``bench_defaults.HELDOUT3``,
fixed before it was run) at the rules of session 16; ``make_classification_hard`` is left out
(not linearly learnable: scikit-learn at the baseline; its cells are in
``defaults_s17_heldout3_clf.md``)::

    python benchmarks/bench_defaults.py --estimators logistic svc --heldout heldout3 \
        --seeds 10 --out defaults_s17_heldout3_clf   # the four sets of the first commit
    python benchmarks/bench_defaults.py --estimators logistic svc --heldout heldout3 \
        --datasets make_classification_hard1 --seeds 10 --out defaults_s17_heldout3_clf1
    python benchmarks/bench_defaults.py --estimators ridge --heldout heldout3 --seeds 10 \
        --out defaults_s17_heldout3_reg
    python benchmarks/defaults_report.py --after $R/defaults_s16b_10seeds.csv \
        $R/defaults_s17_heldout3_clf.csv $R/defaults_s17_heldout3_clf1.csv \
        $R/defaults_s17_heldout3_reg.csv --changed --exclude make_classification_hard \
        --out defaults_s17_10seeds

then dp_nsgd_tree's SVC cells of all four parts with the squared hinge's half step
(``defaults_s17b_10seeds*``, the grid the docs show)::

    python benchmarks/bench_defaults.py --optimizers dp_nsgd_tree --estimators svc \
        --heldout all --seeds 10 --out defaults_s17_tree_svc
    python benchmarks/defaults_report.py --after (the four above) \
        $R/defaults_s17_tree_svc.csv --before (the four above) --changed svc:dp_nsgd_tree \
        --exclude make_classification_hard --out defaults_s17b_10seeds

Session 23 (``defaults_s23_heldout4*``): the fourth held-out part (``bench_defaults.HELDOUT4``,
fixed in session 22 before it was run) at the rules of session 17, its first run; the wine set
needs the data directory (``SKDP_DATA_DIR``, else ``../shared/data``)::

    python benchmarks/bench_defaults.py --heldout heldout4 --estimators logistic svc \
        --datasets adult_married make_classification_skewed --seeds 10 \
        --out defaults_s23_heldout4_clf
    python benchmarks/bench_defaults.py --heldout heldout4 --estimators ridge \
        --datasets make_regression_sparse --seeds 10 --out defaults_s23_heldout4_reg
    python benchmarks/bench_defaults.py --heldout heldout4 --estimators ridge \
        --datasets wine_alcohol --seeds 10 --out defaults_s23_heldout4_wine
    python benchmarks/defaults_report.py --after $R/defaults_s23_heldout4_clf.csv \
        $R/defaults_s23_heldout4_reg.csv $R/defaults_s23_heldout4_wine.csv --changed \
        --out defaults_s23_heldout4

Session 31 (``defaults_s31_heldout5*``): the fifth held-out part (``bench_defaults.HELDOUT5``,
fixed in session 24 before it was run; classification only) at the classifiers' rules of
session 17, its first run, seeds 0 to 2 and then 3 to 9 (Adult needs the data directory)::

    python benchmarks/bench_defaults.py --heldout heldout5 --estimators logistic svc \
        --seeds 3 --out defaults_s31_heldout5
    python benchmarks/bench_defaults.py --heldout heldout5 --estimators logistic svc \
        --seeds 7 --first-seed 3 --out defaults_s31_heldout5_seeds3to9
    python benchmarks/defaults_report.py --after $R/defaults_s31_heldout5.csv \
        $R/defaults_s31_heldout5_seeds3to9.csv --changed --out defaults_s31_heldout5_10seeds

(about 10 and 20 minutes on this machine with the anchors computed on the way). Then three of
its cells on fresh seeds (the criterion-(a) cell and the two (b) cells beyond their noise; a
few minutes)::

    python benchmarks/bench_defaults.py --heldout heldout5 --estimators logistic svc \
        --datasets adult_private --n 1000 --eps 0.3 --seeds 30 --first-seed 10 \
        --out defaults_s31_heldout5_fresh_a
    python benchmarks/bench_defaults.py --heldout heldout5 --estimators logistic svc \
        --datasets make_classification_mid --n 5000 --eps 0.1 --seeds 30 --first-seed 10 \
        --out defaults_s31_heldout5_fresh_b1
    python benchmarks/bench_defaults.py --heldout heldout5 --estimators logistic svc \
        --datasets make_classification_mid --n 500 --eps 3 --seeds 100 --first-seed 10 \
        --out defaults_s31_heldout5_fresh_b2

Session 32 (``defaults_s32_heldout6*``): the sixth held-out part (``bench_defaults.HELDOUT6``,
fixed in session 32 before it was run: weak targets) at the rules of session 17, unchanged
since, its first run, seeds 0 to 2 and then 3 to 9 (Adult needs the data directory)::

    python benchmarks/bench_defaults.py --heldout heldout6 --seeds 3 --out defaults_s32_heldout6
    python benchmarks/bench_defaults.py --heldout heldout6 --seeds 7 --first-seed 3 \
        --out defaults_s32_heldout6_seeds3to9
    python benchmarks/defaults_report.py --after $R/defaults_s32_heldout6.csv \
        $R/defaults_s32_heldout6_seeds3to9.csv --changed --out defaults_s32_heldout6_10seeds

(about 15 and 35 minutes on this machine, the anchors computed on the way).

Session 33 (``defaults_s33_heldout7_scd*``): dp_scd's logistic update clip of session 33 judged
on the seventh held-out part (``bench_defaults.HELDOUT7``), the anchors and dp_scd's logistic
cells only, ten seeds; the "before" from a checkout of the commit before the change (bd5df0c),
sharing the anchor cache, with the data directory in ``SKDP_DATA_DIR``::

    python benchmarks/bench_defaults.py --heldout heldout7 --estimators logistic \
        --optimizers dp_scd --seeds 10 --out defaults_s33_heldout7_scd
    (cd ../before && python benchmarks/bench_defaults.py --heldout heldout7 --estimators \
        logistic --optimizers dp_scd --seeds 10 --cached-only \
        --out defaults_s33_heldout7_scd_oldrule)   # then copied into results/
    python benchmarks/defaults_report.py --after $R/defaults_s33_heldout7_scd.csv \
        --before $R/defaults_s33_heldout7_scd_oldrule.csv --changed logistic:dp_scd \
        --out defaults_s33_heldout7_scd_10seeds

Session 34 (``defaults_s34_heldout7_svc_scd*``): dp_scd's squared-hinge update clip of session
34 judged the same way, the SVC's dp_scd cells (and the default's, dp_scd where it is chosen) on
the seventh held-out part, ten seeds; the "before" ran in this checkout before the constants
changed (the anchors were cached)::

    python benchmarks/bench_defaults.py --heldout heldout7 --estimators svc \
        --optimizers dp_scd --seeds 10 --out defaults_s34_heldout7_svc_scd_before  # old rule
    python benchmarks/bench_defaults.py --heldout heldout7 --estimators svc \
        --optimizers dp_scd --seeds 10 --out defaults_s34_heldout7_svc_scd
    python benchmarks/defaults_report.py --after $R/defaults_s34_heldout7_svc_scd.csv \
        --before $R/defaults_s34_heldout7_svc_scd_before.csv --changed svc:dp_scd \
        --out defaults_s34_heldout7_svc_scd_10seeds

Session 35 (``defaults_s35_heldout7*``): the whole seventh held-out part, every optimizer of
every estimator at the rules of session 34, ten seeds: the first run of its cells but
dp_scd's classifier cells (which reproduce those of sessions 33 and 34), and of
``make_regression_mid``'s anchors. No rule was changed after it. The two runs share the anchor
cache and can run at once::

    python benchmarks/bench_defaults.py --heldout heldout7 --estimators logistic svc \
        --seeds 10 --out defaults_s35_heldout7_cls
    python benchmarks/bench_defaults.py --heldout heldout7 --estimators ridge \
        --seeds 10 --out defaults_s35_heldout7_ridge
    python benchmarks/defaults_report.py --after $R/defaults_s35_heldout7_cls.csv \
        $R/defaults_s35_heldout7_ridge.csv --changed --out defaults_s35_heldout7_10seeds

(about 25 minutes together on this machine, the regression anchors computed on the way). Then
its one (b) cell beyond two standard errors on 30 fresh seeds (about 5 minutes)::

    python benchmarks/bench_defaults.py --heldout heldout7 --estimators logistic svc \
        --datasets adult_own_child --n 5000 --eps 0.1 --seeds 30 --first-seed 10 \
        --out defaults_s35_heldout7_fresh_b

and the first four parts' grid (``defaults_s17b_10seeds``, the one the docs showed until then)
with dp_scd's classifier cells at the clips of sessions 33 and 34 (``defaults_s35_10seeds*``,
the grid the docs show now; its anchors predate the cache's keys, so they come from the s17b
csv; a few minutes)::

    python benchmarks/bench_defaults.py --heldout all --datasets adult breast_cancer digits \
        make_classification adult_sex make_classification_wide wine_good \
        make_classification_hard1 --estimators logistic svc --optimizers dp_scd --seeds 10 \
        --cached-only --anchors-from $R/defaults_s17b_10seeds.csv --out defaults_s35_scd_s17b
    python benchmarks/defaults_report.py --after $R/defaults_s17b_10seeds.csv \
        $R/defaults_s35_scd_s17b.csv --before $R/defaults_s17b_10seeds.csv \
        --changed logistic:dp_scd svc:dp_scd svc:auto --exclude make_classification_hard \
        --out defaults_s35_10seeds

Session 36 (``defaults_s36_*``): dp_scd's squared-hinge multiple at most ``n^0.75 / (52 z)``
(``dev_rules_scd_svc_small_s.py``). The first four parts' SVC dp_scd cells at the new rule, the
fourth to sixth parts' dp_scd classifier cells at today's rules (their grids predate sessions 33
and 34) and the seventh part's SVC dp_scd cells, ten seeds, anchors from the parts' grids (a few
minutes in all)::

    python benchmarks/bench_defaults.py --heldout all --datasets adult breast_cancer digits \
        make_classification adult_sex make_classification_wide wine_good \
        make_classification_hard1 --estimators svc --optimizers dp_scd --seeds 10 \
        --cached-only --anchors-from $R/defaults_s17b_10seeds.csv --out defaults_s36_svc_scd_s17b
    python benchmarks/bench_defaults.py --heldout heldout4 --estimators logistic svc \
        --optimizers dp_scd --seeds 10 --cached-only --anchors-from $R/defaults_s23_heldout4.csv \
        --out defaults_s36_scd_heldout4   # and heldout5 (s31), heldout6 (s32)
    python benchmarks/bench_defaults.py --heldout heldout7 --estimators svc --optimizers dp_scd \
        --seeds 10 --cached-only --anchors-from $R/defaults_s35_heldout7_10seeds.csv \
        --out defaults_s36_svc_scd_heldout7
    python benchmarks/defaults_report.py --after $R/defaults_s35_10seeds.csv \
        $R/defaults_s36_svc_scd_s17b.csv --before $R/defaults_s35_10seeds.csv \
        --changed svc:dp_scd svc:auto --exclude make_classification_hard --out defaults_s36_10seeds

then the eighth held-out part, fixed in session 35 and never run before, every optimizer of
every estimator at the new rule (its anchors in the cache, computed in session 35 and again in
session 36 with the output unread; about 45 minutes), and its SVC cells at the old rule::

    python benchmarks/bench_defaults.py --heldout heldout8 --estimators logistic svc \
        --seeds 10 --cached-only --out defaults_s36_heldout8_cls
    python benchmarks/bench_defaults.py --heldout heldout8 --estimators ridge --seeds 10 \
        --cached-only --out defaults_s36_heldout8_ridge
    python benchmarks/dev_rules_scd_svc_small_s.py heldout8_before
    python benchmarks/defaults_report.py --after $R/defaults_s36_heldout8_cls.csv \
        $R/defaults_s36_heldout8_ridge.csv --before $R/defaults_s36_heldout8_svc_before.csv \
        --changed svc:dp_scd svc:auto --out defaults_s36_heldout8_10seeds

Session 37 (``defaults_s37_*``): DPRidge's ``optimizer="auto"`` runs dp_masg from s = 150
(``--before-auto ridge:dp_scd``: the before grid is the after grid with ridge's default column
taken from dp_scd, its previous rule everywhere). The ninth held-out part, fixed in session 36
and never run before, every optimizer of every estimator (its anchors in the cache, computed with
the output unread; the grid about 20 minutes), its criteria, then the first four parts (only the
ridge figure is kept: the classifiers' are session 36's) and every part::

    python benchmarks/bench_defaults.py --heldout heldout9 --seeds 10 \
        --out defaults_s37_heldout9_10seeds
    python benchmarks/defaults_report.py --after $R/defaults_s37_heldout9_10seeds.csv \
        --changed --before-auto ridge:dp_scd --out defaults_s37_heldout9_10seeds
    python benchmarks/defaults_report.py --after $R/defaults_s35_10seeds.csv \
        $R/defaults_s36_svc_scd_s17b.csv --changed --before-auto ridge:dp_scd \
        --exclude make_classification_hard --out defaults_s37_10seeds
    python benchmarks/defaults_report.py --after (the pieces of defaults_summary.py's session
        36 command) $R/defaults_s36_heldout8_10seeds.csv $R/defaults_s37_heldout9_10seeds.csv \
        --changed --before-auto ridge:dp_scd --exclude make_classification_hard \
        --out defaults_s37_all   # only its _criteria.md is kept

Session 42 (``defaults_s42_heldout11_10seeds*``): the eleventh held-out part, fixed in session
38 and never run before, every optimizer of every estimator at today's rules (no change), run
in two pieces of two data sets each in two processes (about 15 minutes)::

    python benchmarks/bench_defaults.py --heldout heldout11 --datasets adult_bachelors \
        make_regression_mixed --seeds 10 --out h11_shard_a   # and wine_acidic
        # make_classification_flip --out h11_shard_b, in a second process
    python benchmarks/defaults_report.py --after $R/h11_shard_a.csv $R/h11_shard_b.csv \
        --changed --out defaults_s42_heldout11_10seeds   # the pieces are not kept

Session 43 (``defaults_s43_heldout12_10seeds*``): the twelfth held-out part, fixed in session 42
and never run before, the same way (about a minute per piece)::

    python benchmarks/bench_defaults.py --heldout heldout12 --datasets adult_craft \
        make_regression_clean --seeds 10 --out h12_shard_a   # and wine_strong
        # make_classification_twin --out h12_shard_b, in a second process
    python benchmarks/defaults_report.py --after $R/h12_shard_a.csv $R/h12_shard_b.csv \
        --changed --out defaults_s43_heldout12_10seeds   # the pieces are not kept

Session 45 (``defaults_s45_heldout13_10seeds*``): the thirteenth held-out part, fixed in
session 43 and never run before, the same way (15 to 21 minutes a piece, two processes)::

    python benchmarks/bench_defaults.py --heldout heldout13 --datasets adult_clerical \
        make_regression_tall --seeds 10 --out h13_shard_a   # and wine_sulphurous
        # make_classification_sparse --out h13_shard_b, in a second process
    python benchmarks/defaults_report.py --after $R/h13_shard_a.csv $R/h13_shard_b.csv \
        --changed --out defaults_s45_heldout13_10seeds   # the pieces are not kept

Session 51: the fourteenth held-out part in full and the fifteenth (fixed in session 50, never
run before), each in two pieces of two data sets in two processes (15 to 30 minutes a piece),
then the accelerated classifiers at ``KAPPA_C`` 1.5 on every looked-at classification set (every
part up to the thirteenth, ten seeds, the anchors served from the earlier grids' csvs; the run
of session 51 took each anchor from the first sorted csv that had it, so 48 Opacus scores of
Adult and ``make_regression`` at seeds 0 to 2 came from the early grids that rounded them to
four decimals, within 5e-5 of those of the later grids that the command below serves), and
every looked-at part's criteria before (``KAPPA_C`` 3) and after::

    python benchmarks/bench_defaults.py --heldout heldout15 --datasets adult_some_college \
        make_regression_lean --seeds 10 --out h15_shard_a   # and wine_salty
        # make_classification_lean --out h15_shard_b, in a second process
    python benchmarks/defaults_report.py --after $R/h15_shard_a.csv $R/h15_shard_b.csv \
        --changed --out defaults_s51_heldout15_10seeds   # the pieces are not kept
    (the same for heldout14: adult_never_married make_regression_few / wine_volatile
        make_classification_broad -> defaults_s51_heldout14_10seeds)
    python benchmarks/bench_defaults.py --heldout all --datasets (the looked-at
        classification sets, in shards) --optimizers dp_nag_opt dp_masg \
        --estimators logistic svc --seeds 10 --anchors-from $R/defaults_*.csv --cached-only \
        --out s51_acc_X
    python benchmarks/defaults_report.py --after $R/s51_acc_*.csv --changed --no-auto \
        --out defaults_s51_nag_masg_all   # its csv and criteria are kept
    python benchmarks/defaults_report.py --after (defaults_summary.py's fifteen pieces) \
        $R/defaults_s45_heldout13_10seeds.csv $R/defaults_s51_nag_masg_all.csv \
        --before (the same without the last) --changed logistic:dp_nag_opt logistic:dp_masg \
        svc:dp_nag_opt svc:dp_masg --exclude make_classification_hard \
        --out defaults_s51_all   # only its _criteria.md is kept

Session 52: DPRidge's accelerated rows at the squared loss's ``KAPPA_C`` 2 on every looked-at
regression set (parts up to the fifteenth, 21 sets, ten seeds, the cached anchors; two shards
of the sets in two processes, about ten minutes), then every part's criteria before
(``KAPPA_C`` 3) and after::

    python benchmarks/bench_defaults.py --heldout all --datasets (the looked-at regression
        sets, in two shards) --optimizers dp_nag_opt dp_masg --estimators ridge --seeds 10 \
        --anchors-from $R/defaults_*.csv --cached-only --out s52_ridge_acc_X
    python benchmarks/defaults_report.py --after $R/s52_ridge_acc_*.csv --changed --no-auto \
        --out defaults_s52_ridge_nag_masg_all   # kept; the pieces are not
    python benchmarks/defaults_report.py --after (defaults_summary.py's eighteen pieces of
        session 51) $R/defaults_s51_heldout15_10seeds.csv \
        $R/defaults_s52_ridge_nag_masg_all.csv --before (the same without the last) \
        --changed ridge:dp_nag_opt ridge:dp_masg --exclude make_classification_hard \
        --out defaults_s52_all   # only its _criteria.md is kept

Session 53: the docs' figures at today's rules, without new fits: the first four parts (session
35's grid and session 36's SVC ``dp_scd`` rows, with the accelerated rows of sessions 51 and 52
restricted to those parts' data sets, ``part`` in dev, heldout, heldout2, heldout3) and the
fifteenth (its grid, with its ridge accelerated rows of session 52); the figures use
``bench_defaults.PLOT_RANGE``, gaps outside it on its edge::

    python benchmarks/defaults_report.py --after $R/defaults_s35_10seeds.csv \
        $R/defaults_s36_svc_scd_s17b.csv (defaults_s51_nag_masg_all.csv's and
        defaults_s52_ridge_nag_masg_all.csv's rows of those parts, two files) --changed \
        --exclude make_classification_hard --out defaults_s53_first4   # csv not kept
    python benchmarks/defaults_report.py --after $R/defaults_s51_heldout15_10seeds.csv \
        (defaults_s52_ridge_nag_masg_all.csv's heldout15 rows) --changed \
        --out defaults_s53_heldout15   # csv not kept

``defaults_s12_scd_oldrule_seeds3to9`` holds dp_scd's logistic cells at the rule before session
12 (the "before" of that pair at seeds 3 to 9); the SVC's dp_gdws and dp_sgld cells of the
``seeds3to9`` runs predate their change. The seeds 0 to 2 grid, comparable with the earlier
ones: ``--after $R/defaults_s11.csv $R/defaults_s12_scd.csv $R/defaults_s12_svc.csv --before
$R/defaults_s11.csv --changed (the same) --seeds 3 --out defaults_s12``.
"""

import argparse
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_defaults as bd  # noqa: E402

KEY = ("part", "dataset", "estimator", "method", "n", "eps", "seed")


_LINE = re.compile(r"^(\S+)\s+n=(\d+)\s+eps=(\S+)\s+seed=(\d+) (\S+)\s+(\S+)\s+(\S+) "
                   r"\(opacus (\S+), base (\S+), (\S+)s\)")


def rows_from_log(path):
    """The rows of a bench_defaults run that was stopped before it wrote its csv, from its log:
    only the (data, n, epsilon, seed, estimator) groups whose optimizers all finished; the anchor
    and scikit-learn scores from the cache (full precision), the baseline recomputed."""
    cache = json.loads(bd.CACHE.read_text())
    groups = {}
    for line in open(path):
        m = _LINE.match(line.strip())
        if m:
            ds, n, eps, seed, est, opt, score, _, _, dt = m.groups()
            groups.setdefault((ds, int(n), float(eps), int(seed), est), {})[opt] = (float(score), float(dt))
    rows = []
    for (ds, n, eps, seed, est), fits in groups.items():
        if set(fits) != set(bd.OPTIMIZERS):
            continue  # the run stopped inside this group
        task, _, y_tr, _, y_te = bd.subsample(ds, n, seed)
        part = bd.part_of(ds)
        common = dict(part=part, dataset=ds, task=task, estimator=est, n=n, seed=seed)
        op = cache[bd.opacus_key(ds, n, eps, seed)]
        rows.append(dict(common, method="opacus", eps=eps, score=op[0], eps_spent=op[1], seconds=op[2]))
        rows.append(dict(common, method="baseline", eps=math.inf, score=bd.baseline_score(task, y_tr, y_te),
                         eps_spent=0.0, seconds=0.0))
        rows.append(dict(common, method="sklearn", eps=math.inf, score=cache[bd.sklearn_key(ds, n, seed, est)],
                         eps_spent=math.inf, seconds=0.0))
        for opt, (score, dt) in fits.items():
            rows.append(dict(common, method=opt, eps=eps, score=score, eps_spent=math.nan, seconds=dt))  # not logged
    return rows


def _load(paths):
    rows = {}
    for p in paths:
        for r in (rows_from_log(p) if str(p).endswith(".log") else bd.read_csv(Path(p))):
            rows[tuple(r[k] for k in KEY)] = r
    return rows


def merge(after_paths, before_paths, changed):
    after = _load(after_paths)
    before = {k: r for k, r in after.items() if (k[2], k[3]) not in changed}
    groups = {(k[0], k[1], k[2], k[4], k[6]) for k in after}  # the seeds the after grid has
    for k, r in _load(before_paths).items():
        if (k[2], k[3]) in changed and (k[0], k[1], k[2], k[4], k[6]) in groups:
            before[k] = r
    return list(after.values()), list(before.values())


def seed_scores(rows):
    """{(part, estimator, dataset, n, eps, method): {seed: score}}."""
    out = {}
    for r in rows:
        out.setdefault((r["part"], r["estimator"], r["dataset"], r["n"], r["eps"], r["method"]),
                       {})[r["seed"]] = r["score"]
    return out


def criteria(rows):
    """{part: {criterion: [failing (est, method, dataset, n, eps, gap)], total: n}}.

    (d) counts the cells where dp_masg scored exactly as dp_nag_opt in every seed (the same
    models); equal means over seeds can be a coincidence of different models on a small test set
    (breast cancer, 143 test rows: 0.958 / 0.951, 0.944 / 0.944, 0.937 / 0.944)."""
    per_seed = seed_scores(rows)
    out = {}
    for (part, est), cells in bd.summarise(rows).items():
        tol = 0.01 if bd.ESTIMATORS[est][1] == "classification" else 0.02
        o = out.setdefault(part, {c: [] for c in "abcd"} | {f"{c}_total": 0 for c in "abcd"}
                           | {"d_close": [], "c_sklearn": {}})
        for (ds, n, eps), c in cells.items():
            for m in bd.OPTIMIZERS:
                if m not in c:
                    continue
                s, a = c[m], c.get("opacus", float("nan"))
                if eps >= 0.3 and n >= 1000:
                    o["a_total"] += 1
                    if s < c["baseline"]:
                        o["a"].append((est, m, ds, n, eps, s - c["baseline"]))
                if a == a:
                    o["b_total"] += 1
                    if s < a - tol:
                        o["b"].append((est, m, ds, n, eps, s - a))
            if "auto" in c and not math.isnan(c.get("opacus", math.nan)):
                # the default, optimizer="auto": the optimizer its public rule runs in the cell
                m, s, a = bd.auto_choice(est, ds, n, eps), c["auto"], c["opacus"]
                o["c_total"] += 1
                if s < a:
                    o["c"].append((est, m, ds, n, eps, s - a))
                    # <= 0: the objective's own non-private optimum is no better than the anchor
                    o["c_sklearn"][(est, ds, n, eps)] = c["sklearn"] - a
            if "dp_masg" in c and "dp_nag_opt" in c:
                o["d_total"] += 1
                diff = c["dp_masg"] - c["dp_nag_opt"]
                masg = per_seed[(part, est, ds, n, eps, "dp_masg")]
                nag = per_seed[(part, est, ds, n, eps, "dp_nag_opt")]
                if masg.keys() == nag.keys() and all(abs(masg[s] - nag[s]) < 1e-12 for s in masg):
                    o["d"].append((est, "dp_masg", ds, n, eps, diff))
                elif abs(diff) < 0.005:
                    o["d_close"].append((est, "dp_masg", ds, n, eps, diff))
    return out


def _common(after, before):
    keys = {(r["part"], r["dataset"], r["estimator"], r["method"], r["n"], r["eps"]) for r in before}
    keep = {(r["part"], r["dataset"], r["estimator"], r["method"], r["n"], r["eps"]) for r in after} & keys
    f = [r for r in after if (r["part"], r["dataset"], r["estimator"], r["method"], r["n"], r["eps"]) in keep]
    g = [r for r in before if (r["part"], r["dataset"], r["estimator"], r["method"], r["n"], r["eps"]) in keep]
    return f, g


def _by_pair(fails):
    out = {}
    for est, m, *_ in fails:
        out[(est, m)] = out.get((est, m), 0) + 1
    return ", ".join(f"{e} {m} {k}" for (e, m), k in sorted(out.items()))


def paired_gaps(rows, reference="opacus"):
    """{(part, estimator, method, dataset, n, eps): (seeds, standard error)} of the per-seed gap
    score - reference: the Opacus anchor of the cell, or the subsample's ``"baseline"`` (a seed
    fixes the subsample both come from, so the difference is paired)."""
    by, baselines = {}, {}
    for r in rows:
        if r["method"] == "baseline":
            baselines.setdefault((r["part"], r["estimator"], r["dataset"], r["n"]), {})[
                r["seed"]] = r["score"]
        elif r["method"] != "sklearn":
            by.setdefault((r["part"], r["estimator"], r["dataset"], r["n"], r["eps"]), {}) \
              .setdefault(r["method"], {})[r["seed"]] = r["score"]
    out = {}
    for (part, est, ds, n, eps), methods in by.items():
        anchor = (baselines.get((part, est, ds, n), {}) if reference == "baseline"
                  else methods.get("opacus", {}))
        for m, scores in methods.items():
            d = [scores[s] - anchor[s] for s in scores if s in anchor]
            if m != "opacus" and len(d) > 1:
                mean = sum(d) / len(d)
                var = sum((x - mean) ** 2 for x in d) / (len(d) - 1)
                out[(part, est, m, ds, n, eps)] = (len(d), math.sqrt(var / len(d)))
    return out


def beyond_noise(cells, part, se, tol):
    """The failing cells whose gap is beyond the tolerance by more than two standard errors."""
    return [c for c in cells if c[5] + tol[c[0]] < -2.0 * se.get((part,) + c[:5], (0, 0.0))[1]]


def criteria_markdown(after, before, changed):
    se = paired_gaps(after)
    se_a = paired_gaps(after, "baseline")
    tol_b = {e: (0.01 if bd.ESTIMATORS[e][1] == "classification" else 0.02) for e in bd.ESTIMATORS}
    tol_c = {e: 0.0 for e in bd.ESTIMATORS}
    ca = criteria(after)
    fa, fb = _common(after, before)
    ca_c, cb_c = criteria(fa), criteria(fb)
    names = {"a": "(a) below the baseline (eps >= 0.3, n >= 1000)",
             "b": "(b) > 1 point (0.02 R^2) below Opacus",
             "c": "(c) default optimizer below Opacus",
             "d": "(d) dp_masg identical to dp_nag_opt (every seed)"}
    lines = ["# Issue 15 criteria on the defaults grid", "",
             "Failing cells (optimizer x cell, mean over seeds) per criterion. *before/after on the "
             "common cells*: the cells both grids have (the before grid differs from the after one "
             f"only in the pairs {', '.join(f'{e}:{m}' for e, m in sorted(changed))}). *after, whole grid*: "
             "every cell of the after grid.", ""]
    for part in bd.PART_TITLES:
        if part not in ca:
            continue
        lines += [f"## {bd.PART_TITLES[part]} part", "",
                  "| criterion | before (common cells) | after (common cells) | after, whole grid | after: failing pairs |",
                  "|---|---|---|---|---|"]
        for c in "abcd":
            b = cb_c.get(part, {})
            a = ca_c.get(part, {})
            lines.append(
                f"| {names[c]} | {len(b.get(c, []))} / {b.get(c + '_total', 0)} | "
                f"{len(a.get(c, []))} / {a.get(c + '_total', 0)} | {len(ca[part][c])} / {ca[part][c + '_total']} | "
                f"{_by_pair(ca[part][c])} |")
        lines.append(f"| dp_masg within half a point of dp_nag_opt (not identical) | "
                     f"{len(cb_c.get(part, {}).get('d_close', []))} | {len(ca_c.get(part, {}).get('d_close', []))} | "
                     f"{len(ca[part]['d_close'])} / {ca[part]['d_total']} | |")
        lines.append("")
        sig_a = beyond_noise(ca[part]["a"], part, se_a, tol_c)
        sig_b = beyond_noise(ca[part]["b"], part, se, tol_b)
        auto_c = [(e, "auto", ds, n, eps, g) for e, m, ds, n, eps, g in ca[part]["c"]]
        sig_c = beyond_noise(auto_c, part, se, tol_c)
        lines += [f"Beyond the seeds' noise (after, whole grid): of the {len(ca[part]['a'])} cells of "
                  f"(a), {len(sig_a)} are below the baseline by more than two standard errors of "
                  f"the paired per-seed gap ({_by_pair(sig_a) or 'none'}); "
                  f"of the {len(ca[part]['b'])} cells of "
                  f"(b), {len(sig_b)} miss the tolerance by more than two standard errors of the "
                  f"paired per-seed gap ({_by_pair(sig_b) or 'none'}); of the {len(ca[part]['c'])} "
                  f"of (c), {len(sig_c)} are below the anchor by more than two "
                  f"({_by_pair(sig_c) or 'none'}); of those, "
                  f"{sum(ca[part]['c_sklearn'][c[:1] + c[2:5]] <= 0 for c in sig_c)} are cells "
                  "where the anchor is at or above non-private scikit-learn on the estimator's "
                  "own objective (C = 1), so that even that objective's exact optimum does not "
                  "beat it.", ""]
        for title, cells, gap, reference in (
            ("Largest gaps to Opacus (criterion b, after):", sorted(ca[part]["b"], key=_gap)[:15],
             "gap", None),
            ("Default optimizer below Opacus (criterion c, after; the last column: non-private "
             "scikit-learn on the estimator's objective minus the anchor):",
             sorted(ca[part]["c"], key=_gap), "gap", ca[part]["c_sklearn"]),
            ("Below the baseline (criterion a, after):", sorted(ca[part]["a"], key=_gap),
             "score - baseline", None),
        ):
            lines += _cell_table(title, cells, gap, part, se, reference)
    return "\n".join(lines)


def _gap(cell):
    return cell[5]


def _cell_table(title, cells, gap, part=None, se=None, reference=None):
    """Markdown lines of a table of failing cells (estimator, optimizer, data, n, eps, gap), with
    the seeds and the standard error of the paired gap to Opacus where ``se`` has them (the
    default's row is looked up under the optimizer it ran), and a last column of ``reference``
    values ({(estimator, data, n, eps): value}) where given."""
    if not cells:
        return []
    se = se or {}
    extra = reference is not None
    lines = [title, "", f"| estimator | optimizer | data | n | eps | {gap} | seeds | s.e. of the gap |"
             + (" sklearn - anchor |" if extra else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if extra else "")]
    for e, m, ds, n, eps, g in cells:
        k, err = se.get((part, e, m, ds, n, eps), (0, math.nan))
        lines.append(f"| {e} | {m} | {ds} | {n} | {eps:g} | {g:+.3f} | {k} | {err:.3f} |"
                     + (f" {reference.get((e, ds, n, eps), math.nan):+.3f} |" if extra else ""))
    return lines + [""]


def pick_table(rows):
    """For the docs: per estimator, n range and epsilon, each optimizer's mean distance to the
    best of the six in the cell, over the data sets of both parts (accuracy; R^2 for ridge),
    best first."""
    table = bd.summarise(rows)
    buckets = ((0, 999, "n < 1000"), (1000, 2000, "1000-2000"), (2001, 10000, "5000-10k"),
               (10001, 10**9, "30k"))
    lines = []
    for est in bd.ESTIMATORS:
        cells = {k: v for (part, e), cs in table.items() if e == est for k, v in cs.items()}
        if not cells:
            continue
        lines += [f"{est}:", ""]
        for lo, hi, label in buckets:
            for eps in sorted({k[2] for k in cells}):
                sel = [c for (ds, n, e), c in cells.items() if lo <= n <= hi and e == eps
                       and all(m in c for m in bd.OPTIMIZERS)]
                if not sel:
                    continue
                # regret: the distance to the best of the six in each cell, averaged (Opacus's
                # regression anchor collapses at small n and would swamp a gap to it)
                gaps = {m: float(sum(c[m] - max(c[o] for o in bd.OPTIMIZERS) for c in sel) / len(sel))
                        for m in bd.OPTIMIZERS}
                order = sorted(gaps, key=lambda m: -gaps[m])
                lines.append(f"  {label:10s} eps {eps:<4g} ({len(sel)} cells): " +
                             ", ".join(f"{m} {gaps[m]:+.3f}" for m in order))
        lines.append("")
    return "\n".join(lines)


def rst_tables(rows):
    """The docs' table per estimator (reStructuredText list-tables): for each n and epsilon, each
    optimizer's mean distance to the best of the six over the data sets with that n (both
    parts), and the median of (best of the six - Opacus)."""
    table = bd.summarise(rows)
    out = []
    for est in bd.ESTIMATORS:
        cells = {k: v for (part, e), cs in table.items() if e == est for k, v in cs.items()}
        if not cells:
            continue
        out += [f".. list-table:: {est}: mean distance to the best optimizer of the cell "
                "(0 = best on every data set)", "   :header-rows: 1", "",
                "   * - n", "     - eps", "     - data sets"]
        out += [f"     - {m}" for m in bd.OPTIMIZERS] + ["     - best - Opacus (median)"]
        for n in sorted({k[1] for k in cells}):
            for eps in sorted({k[2] for k in cells}):
                sel = [(ds, c) for (ds, nn, e), c in cells.items() if nn == n and e == eps
                       and all(m in c for m in bd.OPTIMIZERS) and "opacus" in c]
                if not sel:
                    continue
                best = [max(c[m] for m in bd.OPTIMIZERS) for _, c in sel]
                d = {m: sum(c[m] - b for (_, c), b in zip(sel, best)) / len(sel) for m in bd.OPTIMIZERS}
                top = max(d.values())
                vs = sorted(b - c["opacus"] for (_, c), b in zip(sel, best))
                med = vs[len(vs) // 2] if len(vs) % 2 else (vs[len(vs) // 2 - 1] + vs[len(vs) // 2]) / 2
                out += [f"   * - {n}", f"     - {eps:g}", f"     - {', '.join(sorted(ds for ds, _ in sel))}"]
                out += [f"     - **{d[m]:+.3f}**" if d[m] == top else f"     - {d[m]:+.3f}" for m in bd.OPTIMIZERS]
                out.append(f"     - {med:+.3f}")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--after", nargs="+", required=True)
    p.add_argument("--before", nargs="*", default=[])
    p.add_argument("--changed", nargs="*", default=["logistic:dp_scd", "ridge:dp_gdws"])
    p.add_argument("--out", default="defaults_h17")
    p.add_argument("--seeds", type=int, default=None,
                   help="keep seeds 0 .. seeds - 1 only (default: every seed the pieces have)")
    p.add_argument("--exclude", nargs="*", default=[],
                   help="data sets left out of the grid and its criteria (an uninformative set: "
                        "non-private scikit-learn at the baseline)")
    p.add_argument("--no-auto", dest="auto", action="store_false",
                   help="grids of the named defaults (before optimizer=\"auto\")")
    p.add_argument("--before-auto", nargs="*", default=[], metavar="ESTIMATOR:OPTIMIZER",
                   help="the before grid's default of an estimator whose optimizer=\"auto\" rule "
                        "changed (its previous rule, one optimizer everywhere): the before grid "
                        "is the after grid with that estimator's auto column taken from OPTIMIZER")
    args = p.parse_args(argv)
    changed = {tuple(c.split(":")) for c in args.changed}
    after, before = merge(args.after, args.before, changed)
    after = [r for r in after if r["dataset"] not in args.exclude]
    before = [r for r in before if r["dataset"] not in args.exclude]
    if args.seeds is not None:  # the first seeds only (to compare with a grid that has fewer)
        after = [r for r in after if r["seed"] < args.seeds]
        before = [r for r in before if r["seed"] < args.seeds]
    if args.before_auto:  # a changed auto rule: the before grid is the after grid's optimizers
        before = [r for r in after if r["method"] != "auto"]
    if args.auto:  # the default is optimizer="auto": derive its column (bd.with_auto)
        after, before = bd.with_auto(after), bd.with_auto(before)
        for est, name in (c.split(":") for c in args.before_auto):
            before = [r for r in before if not (r["estimator"] == est and r["method"] == "auto")]
            before += [dict(r, method="auto") for r in before
                       if r["estimator"] == est and r["method"] == name]
        changed |= {(c.split(":")[0], "auto") for c in args.before_auto}
    for path in bd.write(after, list(bd.OPTIMIZERS) + ["auto"] * args.auto, args.out):
        print("wrote", path)
    if args.before:
        bd.write(before, list(bd.OPTIMIZERS), args.out + "_before")
    crit = bd.RESULTS / f"{args.out}_criteria.md"
    crit.write_text(criteria_markdown(after, before, changed) + "\n## Mean distance to the best optimizer "
                    "of the cell, by n and epsilon (all data sets of both parts, best first)\n\n```\n" + pick_table(after) + "\n```\n")
    print("wrote", crit)
    rst = bd.RESULTS / f"{args.out}_tables.rst"
    rst.write_text(rst_tables(after))
    print("wrote", rst)


if __name__ == "__main__":
    main()
