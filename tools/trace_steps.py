"""Follow one screenshot through the observer's steps: after each step that changed anything, the
elements it added, changed or removed (optionally only those overlapping a region).

    python tools/trace_steps.py SCREEN.png [--web] [--region x1,y1,x2,y2] [--typed x1,y1,x2,y2:TEXT] [--task TASK]

A developer's lens for tracing a failed episode to the step that made the wrong element.
"""

from __future__ import annotations

import argparse

from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.geometry import as_box, intersection
from caap.observe.observation import Typed, task_names
from caap.observe.vision import VisionObserver, miniwob_observe


def _show(e: Element) -> str:
    return f"{e.type.value:<14} {list(e.bbox)} {e.text!r}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("screen")
    ap.add_argument("--web", action="store_true", help="a MiniWoB page: its detector and web pages' steps")
    ap.add_argument("--region", help="x1,y1,x2,y2: only elements overlapping it")
    ap.add_argument("--typed", action="append", default=[],
                    help="x1,y1,x2,y2:TEXT, a value the agent typed into the field there (repeatable)")
    ap.add_argument("--task", default="", help="the episode's task: its names are looked for (read_task_names)")
    args = ap.parse_args()
    cfg = ObserveConfig()
    if args.web:
        cfg = miniwob_observe(cfg)
    observer = VisionObserver.from_config(cfg)
    region = as_box([int(v) for v in args.region.split(",")]) if args.region else None
    image = Image.open(args.screen).convert("RGB")
    pipeline, parts = observer.pipeline, observer.parts
    look = pipeline.look(image, parts)
    look.typed = tuple(Typed(as_box([int(v) for v in box.split(",")]), text)
                       for box, _, text in (t.partition(":") for t in args.typed))
    look.names = task_names(args.task)
    current: list[Element] = []
    wanted = {s.name for s in pipeline.enabled(parts)}
    for step in pipeline.steps:
        if step.name not in wanted:
            continue
        after = pipeline.run(look, current, start=step.name, stop=_next(pipeline, step.name))
        before_set = {(e.type, e.bbox, e.text) for e in current}
        after_set = {(e.type, e.bbox, e.text) for e in after}
        gone = [e for e in current if (e.type, e.bbox, e.text) not in after_set]
        new = [e for e in after if (e.type, e.bbox, e.text) not in before_set]
        if region is not None:
            gone = [e for e in gone if intersection(e.bbox, region) > 0]
            new = [e for e in new if intersection(e.bbox, region) > 0]
        if gone or new:
            print(f"== {step.name}")
            for e in gone:
                print("   -", _show(e))
            for e in new:
                print("   +", _show(e))
        current = after


def _next(pipeline: object, name: str) -> str | None:
    names = [s.name for s in pipeline.steps]  # type: ignore[attr-defined]
    i = names.index(name)
    return names[i + 1] if i + 1 < len(names) else None


if __name__ == "__main__":
    main()
