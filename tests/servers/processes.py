"""Model servers as separate processes on loopback ports: llama.cpp's OpenAI-compatible server and the stand-in
Ollama (fake_ollama.py), both serving the embedded GGUF. Each is a real process that a test can stop mid-run,
as a node of a fleet goes down."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO

import httpx

from cfa_lib.models.names import default_gguf
from cfa_lib.paths import PROJECT_ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServerProcess:
    url: str
    proc: subprocess.Popen[bytes]
    log: IO[bytes] = field(repr=False)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-2000:].decode(errors="replace")


def _start(command: list[str], url: str, ready_path: str, timeout_s: float = 120) -> ServerProcess:
    log = tempfile.TemporaryFile()
    server = ServerProcess(url, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT),
                           log)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(url + ready_path, timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if server.proc.poll() is not None or time.monotonic() > deadline:
            message = f"{command[2]} did not start: {server.tail()}"
            server.stop()
            raise RuntimeError(message)
        time.sleep(0.3)


def start_llama_server(alias: str = "smollm2", port: int | None = None) -> ServerProcess:
    """`python -m llama_cpp.server` with the embedded GGUF, serving it as `alias` at /v1."""
    port = port or free_port()
    return _start([sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf()), "--host", "127.0.0.1",
                   "--port", str(port), "--n_ctx", "2048", "--model_alias", alias],
                  f"http://127.0.0.1:{port}", "/v1/models")


def start_fake_ollama(names: list[str], port: int | None = None) -> ServerProcess:
    """The stand-in Ollama (fake_ollama.py) serving `names`, each answered by the embedded GGUF."""
    port = port or free_port()
    return _start([sys.executable, "-m", "tests.servers.fake_ollama", "--port", str(port),
                   *[arg for name in names for arg in ("--name", name)]],
                  f"http://127.0.0.1:{port}", "/api/tags")


def ollama_counts(server: ServerProcess) -> dict[str, int]:
    """The requests the stand-in Ollama received, by method and path."""
    return httpx.get(server.url + "/__stats", timeout=5).json()["counts"]
