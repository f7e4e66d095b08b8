from __future__ import annotations

import pytest

from caap.elements import Element


@pytest.fixture
def dropdown_screen() -> list[Element]:
    return [
        Element(id=1, type="dropdown", bbox=[1, 55, 152, 76], text="Theodora", focused=False),
        Element(id=2, type="button", bbox=[1, 80, 98, 112], text="Submit", focused=False),
    ]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test reads the developer's own endpoint, key, config or display."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "CAAP_CONFIG", "DISPLAY", "AZURE_OPENAI_ENDPOINT",
                "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def planner():
    """The scripted planner (caap.testing.planner) over HTTP on 127.0.0.1, one per test module."""
    from bench_kit import serve_planner

    yield from serve_planner()
