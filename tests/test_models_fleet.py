"""Issue #36: the models file. A model the file lists is served where it says (its endpoint, the variable holding
its key, its concurrency ceiling, its price, whether its replies vary); a bad file is one sentence naming the file,
the entry and the field. The slow tests run the embedded GGUF on loopback: a client test with two counting
proxies before one llama.cpp server (two endpoints as the client sees them), and a pipeline run over three
server processes (two llama.cpp servers and the stand-in Ollama, tests/servers/fake_ollama.py, since no Ollama can
be installed here), one of which is stopped mid-run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import Request, get_client  # noqa: E402
from cfa_lib.models.errors import ModelSpecError  # noqa: E402
from cfa_lib.models.fleet import endpoint, listed, read_models_file  # noqa: E402
from cfa_lib.models.names import parse_model_name  # noqa: E402
from cfa_lib.models.pricing import price_for  # noqa: E402
from tests.servers.counting_proxy import start_counting_proxy  # noqa: E402
from tests.servers.fake_openai import FaultConfig, start_fake_openai  # noqa: E402
from tests.servers.processes import ollama_counts, start_fake_ollama, start_llama_server  # noqa: E402
from tests.test_models_llama_server import CHAT, llama_server  # noqa: E402,F401 - the session's server fixture

FILE = '''
[models."smollm-a"]
backend = "openai"
base_url = "{a}"
served_as = "smollm2"
api_key_env = "NODE_A_KEY"
max_concurrency = 3
price = "free"
deterministic = true

[models."smollm-b"]
backend = "openai"
base_url = "{b}"
served_as = "smollm2"
price = [0.5, 1.5]
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "message"), [
    ('[models."m"]\nbackend = "openai"\n', '[models."m"] base_url: Field required'),
    ('[models."m"]\nbackend = "vllm"\nbase_url = "http://h:8000/v1"\n', '[models."m"] backend: Input should be'),
    ('[models."m"]\nbackend = "openai"\nbase_url = "http://u:secret@h:8000/v1"\n',
     "holds a user or a password: put the key in the variable api_key_env names"),
    ('[models."m"]\nbackend = "openai"\nbase_url = "http://h/v1"\nmax_concurrency = 0\n',
     '[models."m"] max_concurrency: Input should be greater than or equal to 1'),
    ('[models."m"]\nbackend = "openai"\nbase_url = "http://h/v1"\napi_key = "sk-x"\n',
     '[models."m"] api_key: Extra inputs are not permitted'),
    ('[servers]\nx = 1\n', "holds only [models.\"<name>\"] tables"),
])
def test_a_bad_models_file_names_the_file_the_entry_and_the_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ModelSpecError, match="^" + str(path).replace(".", r"\.")) as error:
        read_models_file(path)
    assert message in str(error.value)


def test_a_listed_name_is_served_where_the_file_says(tmp_path, monkeypatch):
    monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FILE.format(a="http://10.0.0.5:8000/v1/",
                                                                          b="https://node-b.example:8443/v1"))))
    spec = parse_model_name("smollm-a")  # no built-in rule accepts this name
    assert (spec.name, spec.backend, spec.model) == ("smollm-a", "openai", "smollm2")
    assert price_for("openai", "smollm2", listed("smollm-a")) == (0.0, 0.0)  # "free"
    assert price_for("openai", "smollm2", listed("smollm-b")) == (0.5, 1.5)
    assert price_for("openai", "gpt-4o-mini", listed("gpt-4o-mini")) == (0.15, 0.60)  # unlisted: the price list
    client = get_client("smollm-a", cache_dir=tmp_path)
    assert client.backend.base_url == "http://10.0.0.5:8000/v1" and client.backend.api_key_env == "NODE_A_KEY"
    assert client.server_ceiling == 3 and client.deterministic is True
    assert endpoint("https://user@node-b.example:8443/v1/chat") == "https://node-b.example:8443"
    assert parse_model_name("gpt-4o-mini").backend == "openai"  # names the file does not list keep the rules


def test_a_servers_ceiling_holds_whatever_the_runs_options_say(tmp_path, monkeypatch):
    """The file's max_concurrency is the most its server takes at once: a run resolved to 64 (a session's
    options) still sends at most 3 requests at a time."""
    from cfa_lib.models.run_options import RunOptions

    server, app = start_fake_openai(FaultConfig(delay_s=0.2))
    try:
        monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FILE.format(a=f"{server.url}/v1",
                                                                              b=f"{server.url}/v1"))))
        client = get_client("smollm-a", cache_dir=tmp_path / "cache")
        requests = [Request([{"role": "user", "content": f"question {i}"}]) for i in range(12)]
        replies = client.complete_many(requests, progress=False, options=RunOptions(max_concurrency=64))
        assert all(c.ok for c in replies) and app.stats()["answered"] == 12
        assert app.stats()["peak_in_flight"] == 3 and client.engine_stats()["max_concurrency"] == 3
    finally:
        server.stop()


def test_a_busy_server_is_up_and_a_closed_port_is_down(tmp_path, monkeypatch):
    """In a fleet, one model's server also answers another model's judge: llama.cpp then holds even /v1/models
    behind the generation in progress. A server that takes the connection but is slow to answer the pre-flight
    check is up (the run's requests wait their turn); a port where nothing listens fails at once."""
    import asyncio

    from cfa_lib.models import ModelUnavailableError
    from tests.servers.mini_http import HttpResponse, MiniHTTPServer
    from tests.servers.processes import free_port

    async def busy(request, watch):
        await asyncio.sleep(6)  # longer than the check's 5-second wait
        return HttpResponse(body={"object": "list", "data": []})

    server = MiniHTTPServer(busy).start()
    closed = free_port()
    try:
        monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FILE.format(a=f"{server.url}/v1",
                                                                              b=f"http://127.0.0.1:{closed}/v1"))))
        get_client("smollm-a", cache_dir=tmp_path).check()
        with pytest.raises(ModelUnavailableError, match=f"no OpenAI-compatible server answers at .*:{closed}"):
            get_client("smollm-b", cache_dir=tmp_path).check()
    finally:
        server.stop()


@pytest.mark.slow
def test_two_listed_models_each_reach_their_own_endpoint(llama_server, tmp_path, monkeypatch):  # noqa: F811
    (server_a, count_a), (server_b, count_b) = start_counting_proxy(llama_server), start_counting_proxy(llama_server)
    try:
        monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FILE.format(a=f"{server_a.url}/v1",
                                                                              b=f"{server_b.url}/v1"))))
        monkeypatch.setenv("NODE_A_KEY", "node-a-key")
        requests = [Request([{"role": "user", "content": f"Name the number {i} in words."}], {"max_tokens": 8})
                    for i in range(3)]
        a = get_client("smollm-a", cache_dir=tmp_path / "cache")
        b = get_client("smollm-b", cache_dir=tmp_path / "cache")  # one shared cache: the names keep them apart
        replies = a.complete_many(requests, progress=False) + b.complete_many(requests[:2], progress=False)
        assert all(c.ok for c in replies), [c.error for c in replies]
        assert (count_a.counts[CHAT], count_b.counts[CHAT]) == (3, 2)  # each request at its own server
        assert count_a.authorizations["Bearer node-a-key"] == 3  # the key from the variable the file names
        assert all(c.cost_usd == 0.0 for c in replies[:3]) and all(c.cost_usd > 0 for c in replies[3:])
        stats = a.engine_stats()
        assert (stats["endpoint"], stats["served_as"]) == (server_a.url, "smollm2")
    finally:
        server_a.stop()
        server_b.stop()


def _notebook(path: Path, source: str) -> Path:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("model = None", metadata={"tags": [
        "parameters"]}), nbformat.v4.new_code_cell(source)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


@pytest.mark.slow
def test_models_on_their_own_servers_run_side_by_side_and_a_failure_ends_only_its_lane(tmp_path, capsys):
    """run_lanes: each model's notebooks in its own lane; the model whose server is down (its first notebook
    fails) skips its others, the other model runs all of its, and the figures notebook still draws them."""
    from cfa_lib.publishing import pipeline

    ok = _notebook(tmp_path / "nb" / "ok.ipynb", "print('answered by', model)")
    down = _notebook(tmp_path / "nb" / "down.ipynb", "raise ConnectionError('no server answers at node-b')")
    figures = _notebook(tmp_path / "nb" / pipeline.FIGURES_NOTEBOOK, "print('figures')")
    out = tmp_path / "out"
    jobs = [pipeline.Job(ok, out / "a" / "01.ipynb", {"model": "a"}, "a"),
            pipeline.Job(down, out / "b" / "01.ipynb", {"model": "b"}, "b"),
            pipeline.Job(ok, out / "a" / "02.ipynb", {"model": "a"}, "a"),
            pipeline.Job(ok, out / "b" / "02.ipynb", {"model": "b"}, "b"),
            pipeline.Job(figures, out / pipeline.FIGURES_NOTEBOOK, {}, "all models")]
    with pytest.raises(pipeline.PipelineError, match=r"^1 of 2 models failed \(b\); the others' notebooks"):
        pipeline.run_lanes(jobs)
    assert (out / "a" / "01.ipynb").exists() and (out / "a" / "02.ipynb").exists()
    assert not (out / "b" / "02.ipynb").exists()  # the failed model's later notebooks were skipped
    assert (out / pipeline.FIGURES_NOTEBOOK).exists()
    printed = capsys.readouterr().out
    assert "a: 2 of 2 notebooks in" in printed and "b: 0 of 2 notebooks in" in printed and "failed:" in printed


def test_models_on_their_own_servers_are_told_apart(tmp_path, monkeypatch):
    from cfa_lib.publishing import pipeline

    monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FILE.format(a="http://127.0.0.1:8001/v1",
                                                                          b="http://127.0.0.1:8002/v1"))))
    assert pipeline.on_own_servers(["smollm-a", "smollm-b"])
    assert not pipeline.on_own_servers(["smollm-a", "local"]) and not pipeline.on_own_servers(["smollm-a"])


FLEET = '''
[models."smollm-a"]
backend = "openai"
base_url = "{a}"
served_as = "smollm2"
judge = "judge-a"
deterministic = true

[models."judge-a"]
backend = "openai"
base_url = "{a}"
served_as = "smollm2"
deterministic = true

[models."smollm-b"]
backend = "openai"
base_url = "{b}"
served_as = "smollm2"
judge = "judge-b"
deterministic = true

[models."judge-b"]
backend = "openai"
base_url = "{b}"
served_as = "smollm2"
deterministic = true

[models."smollm-c"]
backend = "ollama"
base_url = "{c}"
judge = "judge-c"
deterministic = true

[models."judge-c"]
backend = "ollama"
base_url = "{c}"
deterministic = true
'''


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_a_pipeline_over_three_servers_keeps_going_when_one_dies(tmp_path, monkeypatch, capsys):
    """One pipeline run, three models each on its own server process: two llama.cpp servers (OpenAI protocol,
    each behind a counting proxy) and the stand-in Ollama (Ollama's protocol, fake_ollama.py: no Ollama can be
    installed here), each model judged by another name at its own server, so never self-judged. Server B's
    process is stopped after its first answers: model B fails its own notebooks in one sentence, A and C run
    all of theirs, every request of A and C is counted at its own server and nowhere else, and the results
    files record where the answers came from."""
    import json
    import re
    import threading
    import time

    from cfa_lib.publishing import pipeline

    llama_a, llama_b = start_llama_server(), start_llama_server()
    ollama = start_fake_ollama(["smollm-c", "judge-c"])
    (proxy_a, count_a), (proxy_b, count_b) = start_counting_proxy(llama_a.url), start_counting_proxy(llama_b.url)
    stop_watch = threading.Event()

    def kill_b_midway() -> None:
        while not stop_watch.is_set() and count_b.counts[CHAT] < 3:
            time.sleep(0.05)
        llama_b.stop()

    watcher = threading.Thread(target=kill_b_midway, daemon=True)
    try:
        monkeypatch.setenv("CFA_MODELS_FILE", str(write(tmp_path, FLEET.format(
            a=f"{proxy_a.url}/v1", b=f"{proxy_b.url}/v1", c=ollama.url))))
        monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("CFA_MAX_ATTEMPTS", "2")
        monkeypatch.setenv("CFA_TIMEOUT_S", "60")
        watcher.start()
        code = pipeline.main(["--models", "smollm-a smollm-b smollm-c", "--limit", "2", "--no-reference",
                              "--book-root", str(tmp_path / "book"), "--results-dir", str(tmp_path / "results")])
        printed = capsys.readouterr()
        counted_c = ollama_counts(ollama).get("POST /api/chat", 0)
    finally:
        stop_watch.set()
        for server in (proxy_a, proxy_b, llama_a, llama_b, ollama):
            server.stop()
    assert code == 1 and "1 of 3 models failed (smollm-b)" in printed.err

    def sent(model: str) -> int:
        """The requests a model's lane reported sent to its server: all its results files count, less the cache's."""
        line = re.search(rf"^{model}: 4 of 4 notebooks in \d+ s, (\d+) requests \((\d+) from the cache, 0 failed\)",
                         printed.out, re.M)
        assert line, printed.out
        return int(line.group(1)) - int(line.group(2))

    assert "smollm-b: 4 of 4" not in printed.out
    # every request each model's results files count (less those the cache answered) reached its own server, and
    # no other; llama.cpp's server also saw one refused json_schema probe per notebook process (HTTP 400)
    assert count_a.statuses[f"{CHAT} 200"] == sent("smollm-a") > 0, (count_a.statuses, printed.out)
    assert counted_c == sent("smollm-c") > 0, (counted_c, printed.out)
    assert count_b.counts[CHAT] >= 3
    for model, url in (("smollm-a", proxy_a.url), ("smollm-c", ollama.url)):
        runs = sorted((tmp_path / "results").glob(f"*/*{model}*/results.json"))
        assert len(runs) == 4, runs  # option bias, three-tier, counterfactual, confidence
        for path in runs:
            engine = json.loads(path.read_text())["metadata"]["engine"]
            assert engine["subject"]["endpoint"] == url, (path, engine["subject"])
    assert (tmp_path / "book" / "book" / "executed" / pipeline.FIGURES_NOTEBOOK).exists()  # drawn from A's and C's
