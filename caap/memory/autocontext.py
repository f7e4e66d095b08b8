"""Auto-context (after WebWISE): a successful episode becomes a demonstration for later ones.

At most ``per_family`` (2) are kept for a family; a new success replaces the longest kept one only
when it took fewer actions, so the kept demonstrations are the shortest known solutions. Files go
to ``DIR/<family-slug>-<n>.json`` with ``source: "auto-context"``; rationales can be added later
with ``caap rationalize``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from caap.decide.demos import DemoFileError, Demonstration, DemoStep, load_demo, save_demo
from caap.elements import Element
from caap.memory.families import slug
from caap.records import StepRecord


def demo_from_steps(task: str, steps: Sequence[StepRecord], *, family: str | None,
                    screen: tuple[int, int] | None = None) -> Demonstration:
    """A demonstration from an episode's step records (the elements and the actions done in each
    step); the element lists around each action are kept."""
    out: list[DemoStep] = []
    for i, record in enumerate(steps):
        before = [Element.model_validate(e) for e in record.elements]
        after = [Element.model_validate(e) for e in steps[i + 1].elements] if i + 1 < len(steps) else None
        for action in record.done_actions:
            if action.spec is not None and not action.spec.acts_on_screen:
                continue
            planned = action.planned()
            out.append(DemoStep(action=action.name, args=planned.args, element=planned.element,
                                before=before, after=after, point=planned.point))
    return Demonstration(task=task, steps=out, source="auto-context", family=family,
                         screen={"width": screen[0], "height": screen[1]} if screen else None)


def save_auto_demo(directory: str | Path, demo: Demonstration, *, per_family: int = 2) -> Path | None:
    """Keep ``demo`` if its family has fewer than ``per_family`` or it is shorter than the longest
    kept one (which it replaces). Returns the file written, or None when it was not kept."""
    if not demo.steps:
        return None
    directory = Path(directory)
    stem = slug(demo.family or demo.task)
    kept: list[tuple[int, Path]] = []
    for path in sorted(directory.glob(f"{stem}-*.json")):
        try:
            kept.append((len(load_demo(path).steps), path))
        except DemoFileError:
            continue  # a broken file is not ours to judge; it will not be counted or overwritten
    if len(kept) < per_family:
        used = {p.name for _, p in kept}
        n = next(i for i in range(1, per_family + len(used) + 2) if f"{stem}-{i}.json" not in used)
        return save_demo(demo, directory / f"{stem}-{n}.json")
    longest_steps, longest = max(kept)
    if len(demo.steps) < longest_steps:
        return save_demo(demo, longest)
    return None
