"""``rummy_store.urls`` and the worker's URL settings without a server: redaction, passwords
from secret files, TLS options for redis-py and Celery."""

from __future__ import annotations

import doctest
import ssl
from pathlib import Path

import pytest
import rummy_store.urls as urls
from rummy_store.urls import SecretFileError, redact_text, resolve_url, with_password


def test_doctests() -> None:
    assert doctest.testmod(urls).failed == 0


@pytest.mark.parametrize("url", [
    "redis://rummy:pw@h:6379/0", "rediss://:pw@h:6380/1", "amqp://guest:pw@rabbit:5672//",
    "redis://u:p%40w@h/0", "unix:///run/redis.sock?password=pw&db=1",
])
def test_every_password_is_redacted(url: str) -> None:
    password = "p%40w" if "p%40w" in url else "pw"
    text = redact_text(f"error: cannot reach {url}: refused")
    assert password not in text.replace("refused", "") and "***" in text


def test_redaction_keeps_urls_without_passwords_and_the_rest_of_the_text() -> None:
    text = "redis://localhost:6379/0 and rummy@host and http://example.org/a:b@c"
    assert redact_text(text) == text


def test_a_password_file_fills_a_url_without_one(tmp_path: Path) -> None:
    f = tmp_path / "pw"
    f.write_text("s:e@c/r et\n", encoding="utf-8")
    env = {"RUMMY_REDIS_PASSWORD_FILE": str(f)}
    url = resolve_url("redis://rummy@h:6379/0", "RUMMY_REDIS_PASSWORD_FILE", env)
    assert url == "redis://rummy:s%3Ae%40c%2Fr%20et@h:6379/0"
    assert resolve_url("redis://:mine@h/0", "RUMMY_REDIS_PASSWORD_FILE", env) == \
        "redis://:mine@h/0"
    assert resolve_url("redis://h/0", "RUMMY_REDIS_PASSWORD_FILE", {}) == "redis://h/0"
    assert with_password("unix:///s.sock?db=2", "p w") == "unix:///s.sock?db=2&password=p%20w"


@pytest.mark.parametrize("content", [None, ""])
def test_an_unusable_password_file_is_named_not_shown(tmp_path: Path,
                                                      content: str | None) -> None:
    f = tmp_path / "pw"
    if content is not None:
        f.write_text(content, encoding="utf-8")
    with pytest.raises(SecretFileError, match=f"RUMMY_BROKER_PASSWORD_FILE={f}"):
        resolve_url("redis://h/0", "RUMMY_BROKER_PASSWORD_FILE",
                    {"RUMMY_BROKER_PASSWORD_FILE": str(f)})


def test_worker_urls_take_the_broker_password_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from rummy_worker import config

    f = tmp_path / "pw"
    f.write_text("brokerpw", encoding="utf-8")
    monkeypatch.setenv("RUMMY_BROKER_PASSWORD_FILE", str(f))
    monkeypatch.setenv("RUMMY_BROKER_URL", "redis://rummy@broker:6379/0")
    monkeypatch.setenv("RUMMY_RESULT_URL", "rediss://broker:6380/1")
    monkeypatch.delenv("RUMMY_STATE_URL", raising=False)
    monkeypatch.delenv("RUMMY_REDIS_CA_FILE", raising=False)
    assert config.broker_url() == "redis://rummy:brokerpw@broker:6379/0"
    assert config.result_url() == "rediss://:brokerpw@broker:6380/1"
    assert config.state_url() == config.result_url()
    assert config.broker_use_ssl() is None
    assert config.backend_use_ssl() == {"ssl_cert_reqs": ssl.CERT_REQUIRED}


def test_celery_tls_options_name_the_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rummy_worker import config

    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    monkeypatch.setenv("RUMMY_REDIS_CA_FILE", str(ca))
    monkeypatch.delenv("RUMMY_BROKER_PASSWORD_FILE", raising=False)
    monkeypatch.setenv("RUMMY_BROKER_URL", "rediss://broker:6380/0")
    monkeypatch.setenv("RUMMY_RESULT_URL", "redis://broker:6379/1")
    assert config.broker_use_ssl() == {"ssl_cert_reqs": ssl.CERT_REQUIRED,
                                       "ssl_ca_certs": str(ca)}
    assert config.backend_use_ssl() is None
    monkeypatch.setenv("RUMMY_BROKER_URL", "amqps://u:p@rabbit:5671//")
    assert config.broker_use_ssl() == {"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": str(ca)}
    monkeypatch.setenv("RUMMY_REDIS_CA_FILE", str(tmp_path / "missing.crt"))
    with pytest.raises(SecretFileError, match="no such CA file"):
        config.broker_use_ssl()
