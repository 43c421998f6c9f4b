"""MathJax from the npm registry, served by the book itself: the built pages load nothing from the network."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.publishing import BookBuildError

MATHJAX_SPEC = "mathjax@3"
MATHJAX_CACHE = PROJECT_ROOT / ".cache" / "npm"


def mathjax_tarball(cache: Path = MATHJAX_CACHE) -> Path:
    """The npm package `mathjax` (v3), packed once into the cache."""
    found = sorted(cache.glob("mathjax-3.*.tgz"))
    if found:
        return found[-1]
    npm = shutil.which("npm")
    if npm is None:
        raise BookBuildError("npm is needed once to fetch MathJax (apt-get install npm), or put "
                             f"mathjax-3.x.tgz (npm pack {MATHJAX_SPEC}) in {cache}.")
    cache.mkdir(parents=True, exist_ok=True)
    # Packed beside the cache and moved in whole: a build running at the same time (pytest-xdist, the
    # pipeline's jobs) never finds a tarball that is still being written.
    with tempfile.TemporaryDirectory(dir=cache) as packing:
        subprocess.run([npm, "pack", MATHJAX_SPEC, "--pack-destination", packing, "--silent"], check=True,
                       stdout=subprocess.DEVNULL)
        packed = sorted(Path(packing).glob("mathjax-3.*.tgz"))
        if not packed:
            raise BookBuildError(f"npm pack {MATHJAX_SPEC} left no mathjax-3.*.tgz in {cache}")
        os.replace(packed[-1], cache / packed[-1].name)
    return cache / packed[-1].name


def install_mathjax(root: Path) -> Path:
    """Unpack MathJax's es5 build into book/_static/mathjax/ (copied into the html's _static)."""
    target = root / "book" / "_static" / "mathjax"
    tarball = mathjax_tarball()
    stamp = target / ".version"
    if stamp.is_file() and stamp.read_text() == tarball.name:
        return target
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("package/es5/") and m.isfile()]
        for member in members:
            member.name = member.name.removeprefix("package/es5/")
        tar.extractall(target, members=members, filter="data")
    stamp.write_text(tarball.name)
    return target
