"""The report layer: everything the notebooks and the book show, drawn from results files.

`runs` (which runs, labelled and sourced), `format` (the one set of formatting helpers), `shaping` (names
and data shapes tables and figures share), `tables` (every table) and `figures` (every figure, the
publication style, saving). The experiment modules keep only the science: requests, grading, summary.
"""
