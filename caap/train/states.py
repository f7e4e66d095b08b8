"""Train the state head (``caap.observe.read.states``) on labelled screens.

Every labelled element whose type carries a state with a known value becomes one example: its
views (``state_view``) cut from the labelled box and, for training, from copies of the box with each
side moved a little (the detector's boxes are never exactly the labels'), its type, and its states
(unknown ones masked out of the loss). Training screens and validation screens come from separate
datasets (the validation ones held back from the training apps and MiniWoB seeds 2800-2999); each
epoch is scored on the validation examples, the best epoch kept, and each state's threshold is the
one that reads the validation examples best. The head is written into the reader's directory.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.data.format import Dataset, DatasetError, open_dataset
from caap.observe.primitives import rgb_pixels
from caap.observe.read.states import (
    STATES,
    TYPES,
    VIEW,
    build_network,
    one_per_screen,
    run_network,
    save_head,
    state_mask,
    state_view,
    to_tensor,
    type_index,
)
from caap.taxonomy import ENABLED, TEXT_ELEMENT_TYPES, prompt_default

THRESHOLD_GRID = tuple(round(0.05 * k, 2) for k in range(2, 19))
# A state claimed wrongly costs more than one missed: an agent that believes a field focused types
# into nothing, where a missed focus costs one click. Its threshold is the most accurate one whose
# validation precision of "true" reaches this floor on every validation dataset (a kind of screen
# where focus claims go wrong is not averaged away by another), or the highest on the grid.
PRECISION_FLOOR: dict[str, float] = {"focused": 0.98, "enabled": 0.98, "indeterminate": 0.98}
# The claim a floor guards: "true" unless named here (a control wrongly called greyed is skipped by
# the agent, so for ``enabled`` the claim to guard is "false").
CLAIM: dict[str, bool] = {"enabled": False}
# A state is trained only where the training examples hold this many of each value; a head whose
# output never saw a ticked example would read noise. Its settings name the states it has.
MIN_EACH_VALUE = 20
# A type the head learnt a state on is read only where that beats assuming the type's usual value
# (the one the prompt takes when the head says nothing) on every kind of validation screen (desktop
# apps, MiniWoB, generated UIs), with a wrong claim counted as FALSE_CLAIM_COST misses, as the
# thresholds' floors weigh them. A state learnt from few examples of a type (held-down buttons on
# desktop apps: 5 in training) otherwise guesses there while its numbers, carried by other types
# and kinds of screen, look fine.
FALSE_CLAIM_COST = 2


@dataclass
class Examples:
    views: np.ndarray    # uint8 (N, H, W, 3)
    types: np.ndarray    # int64 (N,)
    labels: np.ndarray   # float32 (N, S): 1 true, 0 false
    known: np.ndarray    # float32 (N, S): 1 where the label is known and the type carries the state
    groups: list[str]    # each example's dataset group (the app or task)
    origin: np.ndarray | None = None  # int (N,): which of the datasets each example came from
    kinds: tuple[str, ...] = ()  # each dataset's kind of screen (its labels' source kind), by origin
    screens: np.ndarray | None = None  # int (N,): which screen each example was cut from

    def __len__(self) -> int:
        return len(self.types)

    def kind_of(self) -> np.ndarray:
        """Each example's kind of screen ("" where the datasets' kinds are not known)."""
        if self.origin is None or not self.kinds:
            return np.full(len(self), "", dtype=object)
        return np.array(self.kinds, dtype=object)[self.origin]


JITTER = 0.12  # each side of a training copy moves by up to this share of the box's short side


def _jittered(box: Sequence[int], rng: random.Random, width: int, height: int,
              share: float = JITTER) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = (int(v) for v in box)
    j = max(1, round(share * min(x2 - x1, y2 - y1)))
    nx1, ny1 = x1 + rng.randint(-j, j), y1 + rng.randint(-j, j)
    nx2, ny2 = x2 + rng.randint(-j, j), y2 + rng.randint(-j, j)
    nx1, ny1 = max(0, min(nx1, nx2 - 3)), max(0, min(ny1, ny2 - 3))
    return nx1, ny1, min(width, max(nx2, nx1 + 3)), min(height, max(ny2, ny1 + 3))


def _stacked(chunks: list[np.ndarray], pending: list[np.ndarray]) -> np.ndarray:
    """The views of ``chunks`` and ``pending`` as one array, each chunk freed once copied: the views
    are most of training's memory, and a plain ``np.stack`` holds them twice."""
    if pending:
        chunks.append(np.stack(pending))
        pending.clear()
    out = np.empty((sum(len(c) for c in chunks), *chunks[0].shape[1:]), np.uint8)
    at = 0
    while chunks:
        c = chunks.pop(0)
        out[at:at + len(c)] = c
        at += len(c)
    return out


def collect(datasets: Sequence[str | Path], *, copies: int = 0, seed: int = 0, plain: float = 1.0,
            jitter: float = JITTER, observer: Any = None, view: int = VIEW,
            progress: Callable[[int, int], None] | None = None) -> Examples:
    """The examples of every labelled element with a known state; ``copies`` jittered boxes each
    besides the labelled one (each side moved by up to ``jitter`` of the short side). ``plain``:
    the share of texts with no state on (a page's many unselected labels and rows) kept; the rest
    are left out, for training time. With an ``observer`` (the detector and its fitting steps), the
    views are cut from the boxes it finds instead, each with the type it gives and the states of the
    labelled element it matches (IoU ≥ 0.5; unmatched boxes are left out): the head's thresholds
    are then fitted on what it reads in use. ``view``: the version of ``state_view`` cut."""
    rng = random.Random(seed)
    sets: list[Dataset] = [open_dataset(d) for d in datasets]
    screens = [(ds, path) for ds in sets for path in ds.label_paths()]
    chunks: list[np.ndarray] = []
    views: list[np.ndarray] = []
    types: list[int] = []
    screen_of: list[int] = []
    labels: list[np.ndarray] = []
    known: list[np.ndarray] = []
    groups: list[str] = []
    origin: list[int] = []
    where = {id(ds): i for i, ds in enumerate(sets)}
    kinds = [""] * len(sets)
    for n, (ds, path) in enumerate(screens):
        ann = ds.load(path)
        kinds[where[id(ds)]] = kinds[where[id(ds)]] or ann.source.kind
        wanted = []
        image = None
        if observer is None:
            pairs = [(e, e) for e in ann.elements]
        else:
            with Image.open(ds.image_path(ann)) as im:
                image = im.convert("RGB")
            pairs = _detected(observer, image, ann)
        for e, gold in pairs:
            mask = state_mask(e.type)
            values = [getattr(gold, s) for s in STATES]
            have = np.array([m * (v is not None) for m, v in zip(mask, values, strict=True)], np.float32)
            notable = any(v is not None and bool(v) != (s == ENABLED) for s, v in zip(STATES, values, strict=True))
            if have.any() and (plain >= 1.0 or e.type not in TEXT_ELEMENT_TYPES or notable or rng.random() < plain):
                wanted.append((e, have, np.array([bool(v) for v in values], np.float32)))
        if wanted:
            if image is None:
                with Image.open(ds.image_path(ann)) as im:
                    image = im.convert("RGB")
            rgb = rgb_pixels(image)
            for e, have, value in wanted:
                boxes = [e.bbox] + [_jittered(e.bbox, rng, ann.width, ann.height, jitter) for _ in range(copies)]
                for box in boxes:
                    views.append(state_view(rgb, box, view))
                    screen_of.append(n)
                    types.append(type_index(e.type))
                    labels.append(value)
                    known.append(have)
                    groups.append(path.parent.name)
                    origin.append(where[id(ds)])
        if len(views) >= 20000:
            chunks.append(np.stack(views))
            views.clear()
        if progress is not None:
            progress(n + 1, len(screens))
    if not views and not chunks:
        raise DatasetError(f"{', '.join(map(str, datasets))}: no labelled element with a known state")
    return Examples(_stacked(chunks, views), np.array(types, np.int64), np.stack(labels), np.stack(known), groups,
                    np.array(origin, np.int64), tuple(kinds), np.array(screen_of, np.int64))


def _detected(observer: Any, image: Image.Image, ann: Any) -> list[tuple[Any, Any]]:
    """(found element, labelled element) for each of the observer's boxes matching a label."""
    from caap.train.eval_detector import match_boxes

    found = observer.observe(image).elements
    matched = match_boxes([(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in ann.elements], 0.5)
    return [(e, ann.elements[m]) for e, m in zip(found, matched, strict=True) if m >= 0]


def trainable_states(ex: Examples) -> tuple[str, ...]:
    """The states the examples teach: at least ``MIN_EACH_VALUE`` known examples of true and of false."""
    out = []
    for k, s in enumerate(STATES):
        rows = ex.known[:, k] > 0
        true = int((ex.labels[rows, k] > 0.5).sum())
        if min(true, int(rows.sum()) - true) >= MIN_EACH_VALUE:
            out.append(s)
    return tuple(out)


def types_read(ex: Examples, states: Sequence[str]) -> dict[str, list[str]]:
    """For each of ``states`` (the examples' label columns, in order), the types it was taught on:
    those with ``MIN_EACH_VALUE`` known examples. The head reads a state only on these."""
    out: dict[str, list[str]] = {}
    for k, s in enumerate(states):
        counts = np.bincount(ex.types[ex.known[:, k] > 0], minlength=len(TYPES))
        out[s] = [t.value for t, n in zip(TYPES, counts, strict=True) if n >= MIN_EACH_VALUE]
    return out


def unproven_types(probs: np.ndarray, ex: Examples, thresholds: dict[str, float], states: Sequence[str],
                   trained: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The (state, type) pairs of ``trained`` whose claims, on some kind of validation screen, do not
    beat the type's usual value there (``FALSE_CLAIM_COST``), as ``{"<state> on <type>": reason}``."""
    out: dict[str, str] = {}
    kind_of = ex.kind_of()
    for k, s in enumerate(states):
        said = probs[:, k] >= thresholds[s]
        truth = ex.labels[:, k] > 0.5
        for t in trained.get(s, ()):
            usual = bool(prompt_default(t, s))  # what the prompt implies when the head says nothing
            rows = (ex.known[:, k] > 0) & (ex.types == type_index(t))
            for kind in sorted(set(kind_of[rows])):
                mine = rows & (kind_of == kind)
                false_claims = int((mine & (said != usual) & (truth == usual)).sum())
                misses = int((mine & (said == usual) & (truth != usual)).sum())
                cost, cost_usual = FALSE_CLAIM_COST * false_claims + misses, int((mine & (truth != usual)).sum())
                if false_claims and cost >= cost_usual:  # a head that claims nothing there does no harm
                    value = str(not usual).lower()
                    out[f"{s} on {t}"] = (f"on {kind or 'unnamed'} validation screens ({int(mine.sum())} of the type) "
                                          f"{false_claims} wrong claims of {value} and {misses} missed, where "
                                          f"always '{str(usual).lower()}' misses {cost_usual}")
                    break
    return out


def only_states(ex: Examples, states: Sequence[str]) -> Examples:
    """The examples with their labels cut to ``states`` (those with none of them known dropped)."""
    cols = [STATES.index(s) for s in states]
    keep = np.asarray(ex.known[:, cols].any(axis=1), bool)
    kept: list[bool] = keep.tolist()
    views = ex.views if keep.all() else ex.views[keep]  # no copy of the views where none is dropped
    return Examples(views, ex.types[keep], ex.labels[keep][:, cols], ex.known[keep][:, cols],
                    [g for g, k in zip(ex.groups, kept, strict=True) if k],
                    ex.origin[keep] if ex.origin is not None else None, ex.kinds,
                    ex.screens[keep] if ex.screens is not None else None)


def scores(probs: np.ndarray, ex: Examples, thresholds: dict[str, float],
           states: Sequence[str] = STATES) -> dict[str, dict[str, Any]]:
    """Per state: examples, accuracy at the threshold, the majority baseline, recall and precision of true."""
    out: dict[str, dict[str, Any]] = {}
    for k, s in enumerate(states):
        rows = ex.known[:, k] > 0
        n = int(rows.sum())
        if not n:
            continue
        truth = ex.labels[rows, k] > 0.5
        said = probs[rows, k] >= thresholds[s]
        tp = int((said & truth).sum())
        out[s] = {"elements": n, "accuracy": float((said == truth).mean()),
                  "majority": float(max(truth.mean(), 1 - truth.mean())),
                  "recall_true": tp / int(truth.sum()) if truth.any() else None,
                  "precision_true": tp / int(said.sum()) if said.any() else None}
    return out


def _precise_everywhere(said: np.ndarray, truth: np.ndarray, origin: np.ndarray, floor: float) -> bool:
    """Whether the "true" said reaches ``floor`` precision within every origin (dataset) it is said in."""
    for o in np.unique(origin):
        mine = said & (origin == o)
        if mine.any() and float(truth[mine].mean()) < floor:
            return False
    return True


def fit_thresholds(probs: np.ndarray, ex: Examples, states: Sequence[str] = STATES) -> dict[str, float]:
    """Each state's threshold: the grid value with the best validation accuracy (0.5 on a tie or no
    data), among those meeting the state's ``PRECISION_FLOOR`` for its ``CLAIM`` where it has one.
    The accuracy is the mean over the kinds of screen (desktop apps, MiniWoB, generated UIs), each
    counted the same: generated pages hold most validation examples, and a threshold that suits
    them must not decide for desktop apps."""
    out: dict[str, float] = {}
    for k, s in enumerate(states):
        rows = ex.known[:, k] > 0
        if not rows.any():
            out[s] = 0.5
            continue
        truth = ex.labels[rows, k] > 0.5
        p = probs[rows, k]
        grid = THRESHOLD_GRID
        floor = PRECISION_FLOOR.get(s)
        if floor is not None:
            origin = ex.origin[rows] if ex.origin is not None else np.zeros(len(p), np.int64)
            if CLAIM.get(s, True):
                grid = tuple(t for t in grid if _precise_everywhere(p >= t, truth, origin, floor)) or grid[-1:]
            else:
                grid = tuple(t for t in grid if _precise_everywhere(p < t, ~truth, origin, floor)) or grid[:1]
        kind = ex.kind_of()[rows]
        parts = [kind == k for k in set(kind)]
        out[s] = float(max(grid, key=lambda t: (float(np.mean([((p[m] >= t) == truth[m]).mean() for m in parts])),
                                                -abs(t - 0.5))))
    return out


def predict(network: Any, ex: Examples) -> np.ndarray:
    return run_network(network, ex.views, ex.types)


def train(train_ex: Examples, val_ex: Examples, out_dir: str | Path, *, epochs: int = 12, batch: int = 128,
          lr: float = 2e-3, width: int = 32, seed: int = 0, minutes: float | None = None, view: int = VIEW,
          card: dict[str, Any] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train, keep the epoch with the best mean validation accuracy over the states, fit the
    thresholds on the validation examples and write the head into ``out_dir``. ``minutes``: stop
    after the epoch that passes this much time. The head reads the states the training examples
    teach (``trainable_states``); ``view``: the version of ``state_view`` the examples were cut
    with. Returns the report written into the head's config."""
    import torch

    states = trainable_states(train_ex)
    if not states:
        raise DatasetError(f"no state has {MIN_EACH_VALUE} training examples of each value")
    train_ex, val_ex = only_states(train_ex, states), only_states(val_ex, states)
    log("states: " + ", ".join(states))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    network = build_network(width, len(states))
    optimiser = torch.optim.AdamW(network.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * math.ceil(len(train_ex) / batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.15)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    best: tuple[float, dict[str, Any], int] | None = None
    started = time.monotonic()
    history = []
    for epoch in range(epochs):
        network.train()
        order = rng.permutation(len(train_ex))
        total, seen = 0.0, 0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            x = to_tensor(train_ex.views[idx])
            if rng.random() < 0.5:  # a theme's colours are not the state: brightness and channel order vary
                x = x[:, torch.from_numpy(rng.permutation(3))]
            logits = network(x, torch.from_numpy(train_ex.types[idx]))
            known = torch.from_numpy(train_ex.known[idx])
            loss = (loss_fn(logits, torch.from_numpy(train_ex.labels[idx])) * known).sum() / known.sum().clamp(min=1)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total, seen = total + loss.item() * len(idx), seen + len(idx)
        probs = predict(network, val_ex)
        val = scores(probs, val_ex, dict.fromkeys(states, 0.5), states)
        mean = float(np.mean([v["accuracy"] for v in val.values()]))
        history.append({"epoch": epoch + 1, "loss": total / max(seen, 1), "val_mean_accuracy": mean,
                        "seconds": round(time.monotonic() - started, 1)})
        log(f"epoch {epoch + 1}: loss {total / max(seen, 1):.4f}, validation "
            + ", ".join(f"{s} {v['accuracy']:.4f}" for s, v in val.items()))
        if best is None or mean > best[0]:
            best = (mean, {k: v.detach().clone() for k, v in network.state_dict().items()}, epoch + 1)
        if minutes is not None and time.monotonic() - started > 60 * minutes:
            break
    assert best is not None
    network.load_state_dict(best[1])
    settings = calibrate(network, val_ex, types_read(train_ex, states), states)
    report = {"width": width, "view": view, "states": list(states), **settings,
              "best_epoch": best[2], "history": history, "train_examples": len(train_ex), **(card or {})}
    save_head(network, report, out_dir)
    return report


def calibrate(network: Any, val_ex: Examples, trained: dict[str, list[str]], states: Sequence[str]) -> dict[str, Any]:
    """Fit a head's thresholds on the validation examples (already cut to ``states``) and the
    types it reads (``trained`` less ``unproven_types``); returns those settings with the
    validation scores as the head then reads (pairs it does not read left out). Where the examples
    know their screens, focus is fitted as the head then reads it: one per screen (``one_focus``)."""
    probs = predict(network, val_ex)
    screens = val_ex.screens
    one_focus = screens is not None and "focused" in states
    if screens is not None and one_focus:
        k = list(states).index("focused")
        eligible = np.isin(val_ex.types, [type_index(t) for t in trained.get("focused", ())])
        probs[:, k] = one_per_screen(probs[:, k], screens, eligible)
    thresholds = fit_thresholds(probs, val_ex, states)
    not_read = unproven_types(probs, val_ex, thresholds, states, trained)
    read = {s: [t for t in ts if f"{s} on {t}" not in not_read] for s, ts in trained.items()}
    known = val_ex.known.copy()
    for k, s in enumerate(states):
        known[~np.isin(val_ex.types, [type_index(t) for t in read.get(s, ())]), k] = 0.0
    as_read = Examples(val_ex.views, val_ex.types, val_ex.labels, known, val_ex.groups, val_ex.origin, val_ex.kinds)
    kind_of = val_ex.kind_of()
    per_kind = {kind or "unnamed": scores(probs, Examples(val_ex.views, val_ex.types, val_ex.labels,
                                                          known * (kind_of == kind)[:, None], val_ex.groups),
                                          thresholds, states)
                for kind in sorted(set(kind_of))}
    return {"types_trained": trained, "types_read": read, "not_read": not_read, "thresholds": thresholds,
            "one_focus": one_focus, "validation_examples": len(val_ex),
            "validation": scores(probs, as_read, thresholds, states), "validation_per_kind": per_kind}


def recalibrate(directory: str | Path, val_ex: Examples, names: Sequence[str] = (), *,
                boxes: str = "labelled") -> dict[str, Any]:
    """Refit a trained head's thresholds and the types it reads on ``val_ex`` (all of
    ``caap.observe.read.states.STATES``' columns) and rewrite its settings; the weights stay. The
    types it was trained on are its ``types_trained`` (a head from before that field: those it reads)."""
    from caap.observe.read.states import StateHead

    head = StateHead.load(directory)
    states = head.reads
    trained = head.config.get("types_trained") or {
        s: sorted(head.types_read[s], key=type_index) for s in states}
    settings = calibrate(head.network, only_states(val_ex, states), trained, states)
    before = {k: head.config.get(k) for k in ("thresholds", "types_read", "not_read", "one_focus")}
    config = {**head.config, **settings, "validation_data": [str(n) for n in names], "validation_boxes": boxes,
              "recalibrated_from": before}
    save_head(head.network, config, directory)
    return config
