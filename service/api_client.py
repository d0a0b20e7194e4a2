"""A small client of the arena's own HTTP API, for the ``gongzhu`` command and its demo.

It needs only requests (and the arena's settings file, read with the standard library): a bot
author's install (``pip install .``) has it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from arena.settings import NoArenaError, load_settings


class ApiCallError(RuntimeError):
    """A call the arena refused or could not answer; the message says why."""


@dataclass
class ArenaClient:
    """The arena's API at ``url``; ``operator_token`` for the operator's endpoints."""

    url: str
    operator_token: str = ""

    @classmethod
    def find(cls, url: str | None, token: str | None = None) -> ArenaClient:
        """The arena at ``url``, else the one the data directory's settings name (``gongzhu
        run`` writes them), or :class:`ApiCallError` saying how to name one. The operator token,
        when not given, is read from the settings' token file, and only for that arena."""
        if url:
            return cls(url.rstrip("/"), token or "")
        try:
            settings = load_settings(os.environ)
        except NoArenaError as error:
            raise ApiCallError(str(error)) from None
        if token is None:
            token = Path(settings.operator_token_file).read_text().strip()
        return cls(settings.url.rstrip("/"), token)

    def call(self, method: str, path: str, *, token: str | None = None, **kw: Any) -> Any:
        """One API call; the answer's JSON, or :class:`ApiCallError` with the arena's message."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            response = requests.request(method, self.url + path, headers=headers, timeout=30, **kw)
        except requests.RequestException as error:
            raise ApiCallError(f"cannot reach the arena at {self.url}: {error}") from None
        if response.status_code >= 400:
            try:
                message = response.json()["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:300]
            raise ApiCallError(f"{method} {path}: {response.status_code}: {message}")
        return response.json() if response.content else None

    def operator(self, method: str, path: str, **kw: Any) -> Any:
        if not self.operator_token:
            raise ApiCallError(
                "this needs the operator token: set GONGZHU_OPERATOR_TOKEN or --token"
            )
        return self.call(method, path, token=self.operator_token, **kw)

    def wait_ready(self, timeout_s: float = 60) -> None:
        """Wait until ``/ready`` answers 200 (Redis reachable, workers alive)."""
        deadline = time.monotonic() + timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                response = requests.get(self.url + "/ready", timeout=2)
                if response.status_code == 200:
                    return
                last = response.text[:200]
            except requests.RequestException as error:
                last = str(error)
            time.sleep(0.5)
        raise ApiCallError(f"the arena at {self.url} is not ready after {timeout_s:.0f} s: {last}")
