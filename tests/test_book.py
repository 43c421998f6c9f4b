"""The book, tested as a reader would: built from a small run, opened in headless Chromium.

The browser is Debian's `chromium`, driven over the Chrome DevTools Protocol with `websocket-client`
(no driver binary to match). The slow fixture copies the book's sources to a temporary folder, runs
the whole pipeline into it (notebooks 01-04 on the embedded model, 3 questions; with CFA_BOOK_FULL=0
notebook 04 alone on the reference runs), and builds the book there, so a developer's own
book/executed/ and build/book/ are left alone. A results file whose model output contains a
`<script>` element is added to the run, to check that model text reaches the page as text.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from cfa_lib.paths import PROJECT_ROOT, REFERENCE_DIR
from cfa_lib.prompts import PROMPT_VERSION, all_prompts
from cfa_lib.publishing import pages, scan
from tests.test_notebooks import MODEL_CACHE

INJECTED = "<script>window.__cfaInjected = 1</script>"
SCREENSHOT = PROJECT_ROOT / "artifacts" / "book_results.png"
RESULTS_PAGES = ["book/results.html", *(f"book/executed/{name}.html" for name in pages.EXECUTED)]
# The whole main job on the embedded model by default; CFA_BOOK_FULL=0 builds from notebook 04 alone (faster).
FULL = os.environ.get("CFA_BOOK_FULL", "1") == "1"
FAKE_SECRETS = {"OPENAI_API_KEY": f"sk-test-{secrets.token_hex(16)}", "CFA_TEST_TOKEN": secrets.token_hex(12)}


# Fast checks of the generated pages and the guards ------------------------------------------------------

def test_prompts_page_prints_every_prompt_verbatim_with_the_version():
    page = pages.prompts_page()
    assert f"Prompt version: `{PROMPT_VERSION}`" in page
    for name, text in all_prompts().items():
        assert f"`{name}`" in page and text in page


def test_markdown_cells_cannot_carry_markup_or_break_the_table():
    assert pages.md_cell("<script>x</script> | a_b") == r"&lt;script&gt;x&lt;/script&gt; &#124; a\_b"
    assert pages.md_cell(None) == "–"


def test_run_metadata_page_lists_the_reference_runs_with_their_tokens_and_cost(tmp_path):
    page = pages.run_metadata_page(tmp_path)
    prefix = "| option\\_bias | gpt-4o-mini (reference, re-graded)"
    row = next(line for line in page.splitlines() if line.startswith(prefix))
    assert "| 836,948 | 0.3139 | original study (imported) |" in row
    assert f"Current prompt version: `{PROMPT_VERSION}`" in page


def test_the_appendix_says_where_each_runs_answers_came_from():
    """Issue #36: the endpoint (scheme, host, port; never a key) and the server's name for the model, from the
    results file's engine metadata; an embedded model is in process; the original study's files do not say."""
    fleet = {"engine": {"subject": {"model": "qwen3-32b", "served_as": "Qwen/Qwen3-32B",
                                    "endpoint": "http://node1:8000"}}}
    assert pages.served_at(fleet) == "http://node1:8000 (Qwen/Qwen3-32B)"
    assert pages.served_at({"engine": {"subject": {"model": "local", "concurrency": "fixed"}}}) == "in process"
    assert pages.served_at({"model": "gpt-4o-mini"}) is None


def test_our_usage_is_summed_over_subject_and_judge_calls():
    summary = {"usage": {
        "subject": {"n_calls": 16, "cache_hits": 10, "prompt_tokens": 1000, "completion_tokens": 500,
                    "cost_usd": 0.0},
        "judge": {"n_calls": 4, "cache_hits": 4, "prompt_tokens": 300, "completion_tokens": 20, "cost_usd": None},
    }}
    assert pages.run_usage(summary) == {"calls": 20, "cache_hits": 14, "tokens": 1820, "cost_usd": None}


def test_secret_values_are_found_by_variable_name_without_printing_them(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<p>key: sk-test-0123456789abcdef</p>", encoding="utf-8")
    environ = {"OPENAI_API_KEY": "sk-test-0123456789abcdef", "HF_TOKEN": "hf_unused_value", "PATH": "/bin"}
    hits = scan.find_secrets([tmp_path], environ)
    assert hits == [f"{page}: OPENAI_API_KEY"]


def test_scripts_and_styles_from_the_network_are_reported(tmp_path):
    (tmp_path / "a.html").write_text(
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/x.css"><a href="https://arxiv.org/abs/2501.04961">p</a>'
        '<script src="_static/mathjax/tex-chtml.js"></script>', encoding="utf-8")
    found = scan.external_assets(tmp_path)
    assert len(found) == 2
    assert "cdn.jsdelivr.net" in found[0] and "fonts.example.org" in found[1]


# The built book in a browser -------------------------------------------------------------------------------

class Chromium:
    """Headless Chromium on a loopback DevTools port, one page, bounded waits everywhere."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 1800, timeout: float = 60):
        import websocket

        binary = shutil.which("chromium")
        if binary is None:
            pytest.fail("Chromium is missing: run `make browser` (apt-get install chromium).")
        self.timeout = timeout
        self.log = (profile.parent / "chromium.log").open("w")
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                pytest.fail(f"Chromium did not open its DevTools port; see {self.log.name}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            page = next(t for t in json.load(reply) if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout,
                                                  suppress_origin=True)
        self.next_id, self.events = 0, []
        self.send("Page.enable")
        self.send("Network.enable")  # to see every request a page makes

    def requested_urls(self) -> list[str]:
        """URLs requested since the last navigation."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def send(self, method: str, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)
        raise TimeoutError(method)

    def open(self, url: str, loads: int = 1) -> None:
        """Navigate and wait for `loads` load events (2 when the page redirects): images and scripts loaded."""
        self.events.clear()
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        while sum(e.get("method") == "Page.loadEventFired" for e in self.events) < loads:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            self.events.append(json.loads(self.socket.recv()))

    def evaluate(self, expression: str):
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def copy_book_sources(root: Path) -> None:
    for name in ("_config.yml", "_toc.yml", "references.bib"):
        shutil.copy(PROJECT_ROOT / name, root / name)
    (root / "book" / "_static").mkdir(parents=True)
    for page in (PROJECT_ROOT / "book").glob("*.md"):
        if not page.name.startswith("generated_"):
            shutil.copy(page, root / "book" / page.name)
    for css in (PROJECT_ROOT / "book" / "_static").glob("*.css"):
        shutil.copy(css, root / "book" / "_static" / css.name)


def add_injection_run(results_dir: Path) -> None:
    """A results file (rows of a reference run) whose model output holds a script element."""
    data = json.loads((REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json").read_text(encoding="utf-8"))
    data["metadata"].update(experiment="option_bias", model="escape-check", timestamp="20260101T000000Z")
    data["results"] = data["results"][:30]
    biased = next(r for r in data["results"] if r["option_biased"])
    biased["answer_without"] = f"{INJECTED} The answer is 8.15%."
    path = results_dir / "option_bias" / "20260101T000000Z_escape-check_easy" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def run(command: list[str], cwd: Path) -> None:
    """Run with fake credentials set, as a user with an API key would (the book must not carry them)."""
    env = {"CFA_CACHE_DIR": str(MODEL_CACHE), **os.environ, **FAKE_SECRETS}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """Build the book from a small run in a temporary copy of the sources; return that copy's root."""
    root = tmp_path_factory.mktemp("book_root")
    results_dir = root / "results"
    copy_book_sources(root)
    add_injection_run(results_dir)
    pipeline = [sys.executable, "-m", "cfa_lib.publishing.pipeline", "--book-root", str(root),
                "--results-dir", str(results_dir)]
    run(pipeline + (["--models", "local", "--limit", "3"] if FULL else ["--figures-only"]), PROJECT_ROOT)
    run([sys.executable, "-m", "cfa_lib.publishing.build", "html", "--root", str(root), "--output", str(root / "build"),
         "--results-dir", str(results_dir)], PROJECT_ROOT)
    return root


@pytest.fixture(scope="module")
def browser(book, tmp_path_factory):
    chromium = Chromium(tmp_path_factory.mktemp("chromium") / "profile")
    yield chromium
    chromium.close()


def page_url(book: Path, page: str) -> str:
    return (book / "build" / "_build" / "html" / page).as_uri()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_index_and_results_pages_load_with_every_figure_drawn(book, browser):
    browser.open(page_url(book, "index.html"), loads=2)  # the top page redirects to book/index.html
    assert browser.evaluate("location.pathname").endswith("/book/index.html")
    assert browser.evaluate("document.title").startswith("Beyond Multiple Choice")
    assert "Abstract" in browser.evaluate("document.body.innerText")
    for page in RESULTS_PAGES:
        browser.open(page_url(book, page))
        images = browser.evaluate(
            "[...document.images].map(i => [i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight])")
        broken = [src for src, complete, width, height in images if not (complete and width > 0 and height > 0)]
        assert broken == [], f"{page}: images that did not load: {broken}"
        if page.endswith("04_paper_figures.html"):
            figures = [src for src, *_ in images if "_images/" in src]
            assert len(figures) >= 4, f"{page}: expected Figures 1-4, found {figures}"


@pytest.mark.slow
def test_no_output_shows_a_python_traceback(book, browser):
    for path in sorted((book / "book" / "executed").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            for output in cell.get("outputs", []):
                assert output.output_type != "error", f"{path.name}: {output.get('ename')}: {output.get('evalue')}"
                assert "Traceback (most recent call last)" not in str(output.get("text", "")), path.name
    for page in RESULTS_PAGES:
        browser.open(page_url(book, page))
        assert browser.evaluate("document.querySelectorAll('.output.traceback, .output.error').length") == 0
        assert "Traceback (most recent call last)" not in browser.evaluate("document.body.innerText")


@pytest.mark.slow
def test_model_output_with_a_script_element_is_shown_as_text_and_never_runs(book, browser):
    browser.open(page_url(book, "book/executed/04_paper_figures.html"))
    assert INJECTED in browser.evaluate("document.body.innerText")
    assert browser.evaluate("typeof window.__cfaInjected") == "undefined"


@pytest.mark.slow
def test_the_book_reads_offline_with_its_own_mathjax(book, browser):
    browser.open(page_url(book, "book/method.html"))
    rendered = browser.evaluate("MathJax.startup.promise.then(() => document.querySelectorAll('mjx-container').length)")
    assert rendered >= 5  # the formulas of the statistics section, typeset by the local MathJax
    fetched = browser.requested_urls()
    assert any("/_static/mathjax/tex-chtml.js" in url for url in fetched)
    assert [url for url in fetched if not url.startswith(("file://", "data:"))] == []
    assert scan.external_assets(book / "build" / "_build" / "html") == []


@pytest.mark.slow
def test_results_page_screenshot_is_saved_for_review(book, browser):
    browser.open(page_url(book, "book/executed/04_paper_figures.html"))
    browser.evaluate("document.getElementById('option-bias-table-p1a-figure-1').scrollIntoView()")
    browser.screenshot(SCREENSHOT)
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and SCREENSHOT.stat().st_size > 50_000


@pytest.mark.slow
def test_no_file_written_by_the_run_and_the_build_holds_a_credential(book):
    written = [p for p in book.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000]
    assert len(written) > 50
    leaks = [f"{p}: {name}" for p in written for name, value in FAKE_SECRETS.items()
             if value.encode() in p.read_bytes()]
    assert leaks == []


@pytest.mark.slow
def test_run_metadata_appendix_lists_every_run_of_the_book(book, browser):
    browser.open(page_url(book, "book/appendix_runs.html"))
    text = browser.evaluate("document.body.innerText")
    assert "escape-check" in text and "gpt-5-mini (reference, re-graded)" in text
    if FULL:
        assert "local" in text


# Nothing cut on the right: an element past the article's right edge (outside a box that scrolls it), or code
# hidden behind a scroll bar, is a defect a reader meets as a clipped comment, cost line or table column.
OVERFLOW = """(() => {
  const box = document.querySelector('.bd-article-container') || document.body;
  const limit = box.getBoundingClientRect().right + 2;
  const scrolled = el => { for (let p = el.parentElement; p && p !== box; p = p.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
  const name = el => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : '');
  const wide = [...box.querySelectorAll('*')].filter(el => el.getBoundingClientRect().right > limit && !scrolled(el));
  const hidden = [...box.querySelectorAll('pre')].filter(el => el.scrollWidth > el.clientWidth + 2);
  return [...wide.map(el => 'wider than the page: ' + name(el)), ...hidden.map(el => 'code behind a scroll bar: '
          + el.innerText.split('\\n').find(line => line.length > 80))].slice(0, 8);
})()"""


@pytest.mark.slow
def test_no_element_is_wider_than_the_page_and_no_code_hides_behind_a_scroll_bar(book, browser):
    html = book / "build" / "_build" / "html"
    pages_ = sorted(str(p.relative_to(html)) for p in (html / "book").rglob("*.html"))
    assert len(pages_) >= 10
    cut = {}
    for page in pages_:
        browser.open(page_url(book, page))
        if found := browser.evaluate(OVERFLOW):
            cut[page] = found
    assert cut == {}, cut


@pytest.mark.slow
def test_the_items_explorer_filters_every_item_of_the_run_in_the_built_book(book, browser):
    from cfa_lib.report import explorer

    if not FULL:
        pytest.skip("CFA_BOOK_FULL=0 runs no experiment notebook")
    results = next((book / "results" / "option_bias").glob("*_local_*/results.json"))
    items = explorer.items([results])
    browser.open(page_url(book, "book/executed/01_option_bias.html"))
    def info(after: str = "") -> str:
        """The table's count line, once drawn (asynchronously) and different from `after`."""
        return browser.evaluate(f"""new Promise(done => {{ const t0 = Date.now(); (function poll() {{
            const info = document.querySelector('.dt-info')?.innerText;
            if ((info && info !== {json.dumps(after)}) || Date.now() - t0 > 15000) done(info);
            else setTimeout(poll, 100); }})(); }})""")

    unfiltered = info()
    assert unfiltered == f"Showing 1 to {min(10, len(items))} of {len(items)} entries"
    for column, word in (("verdict", "incorrect"), ("condition", "Format B")):
        expected = int(items[column].str.contains(word, regex=False).sum())
        browser.evaluate(f"""(() => {{ const box = document.querySelector('tfoot input[placeholder="{column}"]');
            box.value = {json.dumps(word)}; box.dispatchEvent(new Event('input', {{bubbles: true}}));
            box.dispatchEvent(new KeyboardEvent('keyup', {{bubbles: true}})); }})()""")
        shown = info(after=unfiltered)
        found = re.search(r"of (\d+) entr(?:y|ies) \(filtered from (\d+) total", shown or "")
        assert found and (int(found[1]), int(found[2])) == (expected, len(items)), (column, word, shown)
        browser.evaluate(f"""(() => {{ const box = document.querySelector('tfoot input[placeholder="{column}"]');
            box.value = ''; box.dispatchEvent(new Event('input', {{bubbles: true}}));
            box.dispatchEvent(new KeyboardEvent('keyup', {{bubbles: true}})); }})()""")
        assert info(after=shown) == unfiltered  # the filter cleared: every item again
    cells = browser.evaluate("[...document.querySelectorAll('table.dataTable tbody td')].map(td => td.innerText)")
    assert any(items["response"].iloc[0][:40] in cell for cell in cells)  # the whole response, as text
    # a count links to its rows: the tally's count shows that many items, a paired outcome both answers of each
    for table, per_count in (("items-counts", 1), ("items-pairs", 2)):
        count = browser.evaluate(f"""(() => {{ const a = document.querySelector('table.{table} a.items-filter');
            if (!a) return null; a.click(); return Number(a.innerText); }})()""")
        if count is None:  # a table of zeros links nothing (the paired outcomes of a run with no pair)
            assert table == "items-pairs" and browser.evaluate(
                f"[...document.querySelectorAll('table.{table} td')].every(td => td.innerText.trim() === '0')")
            continue
        shown = info(after=unfiltered)
        found = re.search(r"of (\d+) entr(?:y|ies) \(filtered from (\d+) total", shown or "")
        assert found and (int(found[1]), int(found[2])) == (per_count * count, len(items)), (table, count, shown)
        browser.evaluate("""(() => { for (const box of document.querySelectorAll('tfoot input')) {
            box.value = ''; box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true})); } })()""")
        assert info(after=shown) == unfiltered
