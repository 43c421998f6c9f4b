"""The study's experiments: one module per experiment with only its science, and what they share.

* `contract`: the `Experiment` base class (options, requests, grading, summary, re-grading), `Summary`;
* `registry`: `EXPERIMENTS`, the one list of experiments, and `load_results` for any results file;
* `execute`: `execute` (estimate, ask, grade, usage, metadata, write) and `run_or_load` (the notebooks' cell);
* `loading`: a results file read back into typed rows and recomputed summaries (`LoadedRun`);
* `settings`, `session`: the shared parameters, and one run's clients and usage;
* `outcome`: `Outcome`, the one type of a graded item; `judging`: judges, panels, calibration;
* `option_bias` (with `variants` and `option_bias_summary`), `three_tier` (with `three_tier_summary`),
  `counterfactual` (with `counterfactual_summary`): the experiments.
"""
