"""What the benchmark tests share: the scripted planner served over HTTP (caap.testing.planner,
the LLM stand-in; the ``planner`` fixture in conftest.py), benchmark settings pointing at it, and the
episodes a run wrote."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from caap.testing import planner as scripted_planner


def serve_planner() -> Iterator[Any]:
    """The scripted planner on a free port of 127.0.0.1 until the generator is closed."""
    server = scripted_planner.serve(0)
    yield server
    server.stop()


def bench_settings(tmp: Path, planner: Any, **kw: Any) -> Any:
    """``BenchSettings`` for a run into ``tmp`` whose LLM is ``planner`` (``mode`` picks tools/text)."""
    from caap.bench.harness import BenchSettings
    from caap.config import CaapConfig

    config = CaapConfig.model_validate({"llm": {"base_url": planner.base_url, "model": "scripted", "api_key": "k",
                                                "mode": kw.pop("mode", "tools")}})
    data = config.model_dump(mode="json")
    data["llm"]["api_key"] = "k"
    return BenchSettings(out=tmp, config=data, **kw)


def read_episodes(out: Path) -> list[dict]:
    """The records of ``out/episodes.jsonl``."""
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
