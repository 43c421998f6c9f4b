"""One run in progress: its settings and options, the questions, a ready client per model, and the calls
whose usage the results file reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cfa_lib.data import Question
from cfa_lib.experiments import judging
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import Ask, ChatClient, Completion, Request, complete_keyed, get_client
from cfa_lib.models.steps import SUBJECT
from cfa_lib.params import Parameters


def ready_client(name: str, given: Mapping[str, ChatClient] | None = None) -> ChatClient:
    """A client whose pre-flight check passed: a missing key or server fails before the first question.

    `given` maps model names to clients passed in (a scripted model in a test, a client the caller already
    configured); any other name is made by `get_client`.
    """
    client = (given or {}).get(name) or get_client(name)
    client.check()
    return client


def usage(completions: Sequence[Completion | None]) -> dict[str, Any]:
    """Token totals, cost (None when any priced call is unknown) and cache hits of a set of calls."""
    done = [c for c in completions if c is not None]
    costs = [c.cost_usd for c in done if not c.cached]
    return {
        "n_calls": len(done),
        "cache_hits": sum(c.cached for c in done),
        "failed": sum(not c.ok for c in done),
        "prompt_tokens": sum(c.prompt_tokens or 0 for c in done),
        "completion_tokens": sum(c.completion_tokens or 0 for c in done),
        "cost_usd": None if any(cost is None for cost in costs) else round(sum(costs), 6),
    }


class Session:
    """The clients are made (and checked) when the session starts: the subject first, then the helper models
    by role (judges by name, the gold model), one client per model name, the subject's reused; `clients` are
    clients passed in by model name (`ready_client`)."""

    def __init__(self, settings: Settings, options: Parameters, questions: Sequence[Question],
                 helpers: Mapping[str, str], clients: Mapping[str, ChatClient] | None = None) -> None:
        self.settings, self.options, self.questions = settings, options, list(questions)
        self._given = dict(clients or {})
        self.engine = settings.engine()  # resolved once: every batch of the run is sent with it
        self.subject = ready_client(settings.model, self._given)
        self._by_name: dict[str, ChatClient] = {settings.model: self.subject}
        self._by_role: dict[str, ChatClient] = {SUBJECT: self.subject}
        for role, name in helpers.items():
            self.client(name, role)
        self._calls: dict[str, list[Completion]] = {}

    def client(self, name: str, role: str) -> ChatClient:
        """The ready client of model `name`, recorded under `role` for the engine's statistics."""
        if name not in self._by_name:
            self._by_name[name] = ready_client(name, self._given)
        self._by_role.setdefault(role, self._by_name[name])
        return self._by_name[name]

    @property
    def judges(self) -> dict[str, ChatClient]:
        return {name: self.client(name, name) for name in self.settings.judges}

    def ask(self, requests: Mapping[Any, Request], desc: str, client: ChatClient | None = None,
            counted_as: str = SUBJECT) -> dict[Any, Completion]:
        """`{key: completion}` from `client` (default: the subject); the calls count in `counted_as`'s usage."""
        replies = complete_keyed(client or self.subject, requests, options=self.engine, desc=desc)
        self._calls.setdefault(counted_as, []).extend(replies.values())
        return replies

    def ask_panel(self, requests: Mapping[Any, Request], counted_as: str = "judge"
                  ) -> dict[Any, dict[str, Completion]]:
        """Every judge of the panel answers every request (`{key: {judge: completion}}`), counted in
        `counted_as`'s usage."""
        replies = judging.ask_panel(self.judges, requests, options=self.engine)
        self._calls.setdefault(counted_as, []).extend(c for by_judge in replies.values() for c in by_judge.values())
        return replies

    def recipients(self, ask: Ask) -> dict[str, ChatClient]:
        """Who answers a declared step (`cfa_lib.models.steps`), by model name: every judge of the panel, the model
        it names (made and checked on first use) or the subject."""
        if ask.panel:
            return self.judges
        if ask.model is None:
            return {self.settings.model: self.subject}
        return {ask.model: self.client(ask.model, ask.counted_as)}

    def answer(self, ask: Ask) -> dict[Any, Any]:
        """The replies to one declared step, sent with the run's engine settings (a panel's: `{key: {judge:
        completion}}`)."""
        if ask.panel:
            return self.ask_panel(ask.requests, ask.counted_as)
        (client,) = self.recipients(ask).values()
        return self.ask(ask.requests, ask.desc, client, ask.counted_as)

    def estimate(self, steps: Sequence[Ask]) -> list[str]:
        """The cost before any call, a line per model: the first step as it will be sent, every later one at its
        most (`Experiment.estimated_steps`), summed per client; cached requests are free."""
        plan: dict[int, tuple[str, ChatClient, list[Request], dict[str, int]]] = {}
        for position, ask in enumerate(steps):
            for name, client in self.recipients(ask).items():
                _, _, requests, counts = plan.setdefault(id(client), (name, client, [], {}))
                requests.extend(ask.requests.values())
                label = "" if position == 0 else ask.desc.lower() if ask.counted_as == SUBJECT else ask.counted_as
                counts[label] = counts.get(label, 0) + len(ask.requests)
        lines = []
        for name, client, requests, counts in plan.values():
            later = ", ".join(f"{label} {n}" for label, n in counts.items() if label and n)
            parts = [f"subject {counts['']}"] if counts.get("") else []
            parts += [f"at most: {later}"] if later else []
            if requests:
                lines.append(f"{name} ({'; '.join(parts)}): {client.estimate(requests)}")
        return lines

    def usage(self) -> dict[str, dict[str, Any]]:
        """Usage per role (subject, judge, ...) in the order the roles were first asked."""
        return {role: usage(calls) for role, calls in self._calls.items()}

    def engine_stats(self) -> dict[str, Any]:
        """The engine's record of each client (concurrency history, 429s, batches, spend); a client serving
        two roles (the subject judging itself) is listed under its first role only."""
        seen: set[int] = set()
        stats = {}
        for role, client in self._by_role.items():
            if id(client) not in seen:
                seen.add(id(client))
                stats[role] = client.engine_stats()
        return stats
