from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from caap.elements import Element

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def dropdown_screen() -> list[Element]:
    return [
        Element(id=1, type="dropdown", bbox=[1, 55, 152, 76], text="Theodora", focused=False),
        Element(id=2, type="button", bbox=[1, 80, 98, 112], text="Submit", focused=False),
    ]


@pytest.fixture(scope="session")
def _model_cache(tmp_path_factory) -> Path:
    """One cache of derived model files (the detector's ONNX graphs) for the whole run: exported
    once, apart from the developer's own cache."""
    return tmp_path_factory.mktemp("caap-cache")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path, _model_cache):
    """No test reads the developer's own endpoint, key, config, display or model cache."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "CAAP_CONFIG", "DISPLAY", "AZURE_OPENAI_ENDPOINT",
                "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CAAP_CACHE_DIR", str(_model_cache))
    monkeypatch.chdir(tmp_path)


# --- the shipped observer, loaded once for the whole run ----------------------------------------
# Tests that use ``shipped_observer`` or ``miniwob_observer`` carry the ``shipped_weights`` marker
# (``-m "not shipped_weights"`` leaves them out) and are skipped, with the reason, in a checkout
# without the models in ``models/`` or without the vision extra.
SHIPPED_FIXTURES = frozenset({"shipped_observer", "miniwob_observer"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SHIPPED_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.shipped_weights)


def _load_observer(cfg: Any, cache: Any) -> Any:
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.observe.vision import DEFAULT_READER, VisionObserver

    if not cfg.detector.is_file() or not (DEFAULT_READER / "model.safetensors").is_file():
        pytest.skip("the shipped models are not in this checkout")
    # Each screen looked at whole: one observer serves the whole run, and a test's result must not
    # depend on the screens an earlier test looked at (tests/observe/test_partial.py tests partial looks).
    cfg = cfg.model_copy(update={"partial_look": 0.0})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CAAP_CACHE_DIR", str(cache))  # the detector's exported graph goes to the run's cache
        return VisionObserver.from_config(cfg)


@pytest.fixture(scope="session")
def ppocr() -> Any:
    """One PP-OCR for the tests that read crops with it (its models come with the rapidocr wheel)."""
    from caap.observe.ocr.ppocr import PPOCR

    return PPOCR()


@pytest.fixture(scope="session")
def shipped_observer(_model_cache: Any) -> Any:
    """The observer as ``caap observe`` runs it: the any-application detector, the shipped reader
    and PP-OCR, the default ``[observe]`` settings."""
    from caap.config import ObserveConfig
    from caap.observe.vision import DEFAULT_DETECTOR

    return _load_observer(ObserveConfig(detector=DEFAULT_DETECTOR), _model_cache)


@pytest.fixture(scope="session")
def miniwob_observer(_model_cache: Any) -> Any:
    """The observer as the MiniWoB++ benchmark runs it (the MiniWoB detector, web pages' text chooser)."""
    from caap.config import ObserveConfig
    from caap.observe.vision import miniwob_observe

    return _load_observer(miniwob_observe(ObserveConfig()), _model_cache)


@pytest.fixture(scope="module")
def planner():
    """The scripted planner (caap.testing.planner) over HTTP on 127.0.0.1, one per test module."""
    from bench_kit import serve_planner

    yield from serve_planner()


class LabelStudioKit:
    """A real Label Studio for round-trip tests, from tools/labelstudio_server.py (installed into
    its own venv once). ``running(document_root, data_dir)`` starts a server and stops it after."""

    def __init__(self, tools: Any, install_s: float) -> None:
        self.tools = tools  # the tools/labelstudio_server.py module
        self.install_s = install_s  # seconds the install took (0: the venv was reused)
        self.start_s = 0.0  # seconds the latest server took to answer

    @contextmanager
    def running(self, document_root: Path, data_dir: Path, *, timeout: float = 300) -> Iterator[Any]:
        started = time.monotonic()
        try:
            server = self.tools.start_server(document_root, data_dir, timeout=timeout)
        except self.tools.LabelStudioError as exc:
            pytest.fail(f"Label Studio did not start: {exc}")
        self.start_s = time.monotonic() - started
        try:
            yield server
        finally:
            self.tools.stop_server(server)


def _labelstudio_tools() -> Any:
    name = "labelstudio_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / "labelstudio_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def label_studio() -> LabelStudioKit:
    """Label Studio installed (skip where it cannot be) and the SDK importable (fail where it is not)."""
    tools = _labelstudio_tools()
    try:
        install_s = tools.ensure_installed()
    except tools.LabelStudioError as exc:
        # The server comes from PyPI; where the registry cannot be reached or the wheel does not build
        # on this host there is nothing to test against (a server that installs but misbehaves fails).
        pytest.skip(f"Label Studio could not be installed into {tools.VENV}, so the round trip cannot run: {exc}")
    try:
        import label_studio_sdk  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"label-studio-sdk is not installed in caap's venv (pip install 'label-studio-sdk>=2.1,<3'): {exc}")
    return LabelStudioKit(tools, install_s)
