"""The private-address guard, switched on: no endpoint into the arena's own network."""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest
from flask.testing import FlaskClient

from arena.addresses import is_public
from arena.endpoints import EndpointError, check_public
from service import Config, create_app


@pytest.fixture
def guarded(config: Config) -> FlaskClient:
    return create_app(dataclasses.replace(config, allow_private_endpoints=False)).test_client()


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "169.254.169.254",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "10.0.0.8",
        "[fd00::1]",
        "0.0.0.0",
        "224.0.0.1",
    ],
)
def test_private_hosts_are_refused(guarded: FlaskClient, host: str) -> None:
    body = {"name": "a", "endpoint": f"http://{host}:8000/bot", "contact": "me@x.org"}
    response = guarded.post("/api/bots", json=body)
    assert response.status_code == 422, response.json
    assert "public internet" in response.json["errors"]["endpoint"][0]


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("::ffff:10.1.2.3", False),
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("2002:0808:0808::", True),  # 6to4 of 8.8.8.8
        ("100.64.0.1", False),  # carrier-grade NAT
        ("192.0.2.1", False),  # documentation
        ("fe80::1", False),
        ("ff02::1", False),
        ("240.0.0.1", False),
    ],
)
def test_is_public(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_every_resolved_address_must_be_public() -> None:
    with pytest.raises(EndpointError, match=r"10\.0\.0\.1"):
        check_public("https://bot.example/", lambda host, port: ["8.8.8.8", "10.0.0.1"])
    check_public("https://bot.example/", lambda host, port: ["8.8.8.8"])
