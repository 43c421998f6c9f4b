"""Publishing, apart from the science: the notebooks' source (`notebooks`), their papermill runs
(`pipeline`), the book's table of contents (`toc`), its generated pages (`pages`), MathJax served from
the book (`mathjax`), the checks of the built pages (`scan`), the Jupyter Book build (`build`) and the
PDF (`pdf`)."""


class BookBuildError(RuntimeError):
    """The build failed, or the built book would fetch from the network or shows a secret."""
