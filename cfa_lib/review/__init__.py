"""The human check: a person's blind review of the verdicts a rule or a judge decided, scored against the run.

`python -m cfa_lib.review export|score`, `widget.review_widget` in JupyterLab, `scoring.score_review` in
code; ARCHITECTURE.md lists the modules.
"""
