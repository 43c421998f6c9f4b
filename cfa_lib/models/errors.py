"""Exceptions raised before any question is asked (bad name, backend not ready, broken cache)."""

from __future__ import annotations


class ModelSpecError(ValueError):
    """A model name that no backend accepts."""


class ModelUnavailableError(RuntimeError):
    """The backend cannot be used yet; the message says what to set, start or install."""


class CacheError(RuntimeError):
    """The completion cache file cannot be used; the message names the file."""
