"""The API as a whole: the OpenAPI document, offline docs, the one error shape, health."""

from __future__ import annotations

import dataclasses
import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.config import ConfigError
from arena.settings import ArenaSettings
from referee.build import describe, describe_all
from service import Config, create_app


def test_openapi_documents_every_path(app: Flask, client: FlaskClient) -> None:
    response = client.get("/api/openapi.json")
    document = json.loads(response.data)
    assert document["openapi"].startswith("3.")
    documented = set(document["paths"])
    routes = {
        re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for rule in app.url_map.iter_rules()
        if rule.endpoint.split(".")[0] not in {"static", "api-docs", "docs_assets", "pages"}
    }
    assert routes == documented
    for item in document["paths"].values():
        for method in {"get", "post", "patch", "delete"} & set(item):
            assert item[method].get("summary"), item[method]
    assert set(document["components"]["securitySchemes"]) == {"operator", "owner"}


RESTRUCTURED_TEXT = re.compile(r"``|:[\w-]+:`|`__?(?!\w)|^\.\. ", re.MULTILINE)
"""reStructuredText markup CommonMark would show as it is: a literal, a Sphinx role, a
hyperlink, a directive."""


def _prose(document: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every description and summary of an OpenAPI document, with its path."""
    if isinstance(document, dict):
        for name, value in document.items():
            yield from _prose(value, f"{key}/{name}")
    elif isinstance(document, list):
        for n, value in enumerate(document):
            yield from _prose(value, f"{key}[{n}]")
    elif isinstance(document, str) and key.rsplit("/", 1)[-1] in {"description", "summary"}:
        yield key, document


def test_the_openapi_descriptions_are_markdown_and_say_what_the_docstrings_say(
    app: Flask, client: FlaskClient
) -> None:
    served = client.get("/api/openapi.json").json
    prose = dict(_prose(served))
    assert len(prose) > 300
    assert {where: text for where, text in prose.items() if RESTRUCTURED_TEXT.search(text)} == {}
    assert sum("`" in text for text in prose.values()) > 10  # code spans, now CommonMark's
    with app.app_context():
        built = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    source = dict(_prose(built))
    assert source.keys() == prose.keys()
    assert [k for k in source if RESTRUCTURED_TEXT.search(source[k])]  # there was markup
    plain = re.compile(r":[\w-]+:|[`~]")
    for where, text in source.items():  # only the markup changed
        assert plain.sub("", prose[where]) == plain.sub("", text), where
    without_prose = re.compile(r'"(description|summary)": "(?:[^"\\]|\\.)*"')
    assert without_prose.sub("", json.dumps(served)) == without_prose.sub("", json.dumps(built))


def test_docs_page_loads_with_no_external_url(client: FlaskClient) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.data.decode()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assets = re.findall(r"(?:src|href)=\"([^\"]+)\"", html)
    assert len(assets) == 3
    for asset in assets:
        assert client.get(asset).status_code == 200
    assert client.get("/api/docs/assets/index.html").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "status", "error"),
    [
        ("get", "/api/nowhere", 404, "not_found"),
        ("delete", "/api/bots", 405, "method_not_allowed"),
        ("put", "/api/ladder", 405, "method_not_allowed"),
    ],
)
def test_one_error_shape(
    client: FlaskClient, method: str, path: str, status: int, error: str
) -> None:
    response = getattr(client, method)(path)
    assert response.status_code == status and response.is_json
    assert response.json["status"] == status and response.json["error"] == error
    assert path in response.json["message"]


def test_unexpected_errors_are_json_500(app: Flask) -> None:
    @app.route("/boom")
    def boom() -> str:
        raise RuntimeError("secret detail")

    response = app.test_client().get("/boom")
    assert response.status_code == 500 and response.json["error"] == "internal"
    assert "secret detail" not in response.get_data(as_text=True)


def test_health_and_readiness(client: FlaskClient, config: Config) -> None:
    assert client.get("/health").json == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200
    assert ready.json == {
        "status": "ready",
        "redis": True,
        "archive": {"writable": True, "logs_waiting": 0, "bytes_waiting": 0},
        "workers": 0,
        "queue_depth": 0,
        "pull_bots_connected": 0,
        "referee": describe(),  # tests/referee/test_compiled.py: "compiled (mypyc)" as installed
        "builds": {
            "referee": describe(),
            "bot_sdk": describe("bot_sdk"),
            "replays": describe("replays"),
        },
    }
    down = create_app(dataclasses.replace(config, redis_url="redis://127.0.0.1:1/0"))
    response = down.test_client().get("/ready")
    assert response.status_code == 503 and response.json["redis"] is False
    assert response.json["referee"] == describe()
    assert response.json["builds"] == describe_all()


def test_configuration_from_the_environment() -> None:
    config = Config.from_environment(
        {
            "REDIS_URL": "redis://r:1/2",
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "yes",
            "GONGZHU_REPLAY_KEY": "/k.pem",
            "GONGZHU_SECRET_GRACE_S": "60",
        }
    )
    assert config.redis_url == "redis://r:1/2" and config.allow_private_endpoints
    assert str(config.replay_key_path) == "/k.pem" and config.secret_grace_s == 60
    assert Config.from_environment({"REDIS_URL": "redis://r:1/2"}) == Config("redis://r:1/2")
    with pytest.raises(ConfigError, match="GONGZHU_ALLOW_PRIVATE_ENDPOINTS"):
        Config.from_environment({"REDIS_URL": "redis://r", "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "?"})
    with pytest.raises(ConfigError, match="GONGZHU_SECRET_KEY"):
        create_app(Config())


def test_with_no_redis_url_the_data_directorys_settings_name_the_arena(tmp_path: Path) -> None:
    """Without REDIS_URL the configuration is the settings file's; with neither, no guess."""
    with pytest.raises(ConfigError, match=f"no arena is configured: {tmp_path}/arena.json"):
        Config.from_environment({"GONGZHU_DATA_DIR": str(tmp_path)})
    (tmp_path / "token").write_text("tok\n")
    (tmp_path / "key").write_text("k")
    ArenaSettings(
        url="http://127.0.0.1:8150", bind="127.0.0.1:8150", redis_url="redis://:pw@h:6400/0",
        redis_port=6400, data_dir=str(tmp_path), operator_token_file=str(tmp_path / "token"),
        secret_key_file=str(tmp_path / "key"), replay_key_file="/k.pem",
        redis_password_file=None, allow_private_endpoints=False,
    ).write(tmp_path / "arena.json")  # fmt: skip
    assert stat.S_IMODE((tmp_path / "arena.json").stat().st_mode) == 0o600
    config = Config.from_environment({"GONGZHU_DATA_DIR": str(tmp_path)})
    assert config.redis_url == "redis://:pw@h:6400/0" and config.operator_token == "tok"
    assert config.secret_key == "k" and str(config.replay_key_path) == "/k.pem"
    given = {"GONGZHU_DATA_DIR": str(tmp_path), "GONGZHU_QUEUE": "q", "REDIS_URL": "redis://e"}
    assert Config.from_environment(given).redis_url == "redis://e"  # the environment wins
