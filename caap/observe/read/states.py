"""The state head: a small convolutional network that reads a control's states from its pixels.

The reader writes states in its record, but it learnt them from MiniWoB pages, and desktop toolkits
draw a ticked box, a selected row or a focused field in ways it never saw. The state head looks at
one element at a time, as views side by side in one image 32 px high (``state_view``):

- the square at the box's left end (where a check box, radio button or tree expander sits),
- the whole box squeezed to 32×64 (a selected row's fill, a focus ring's four sides),
- the square at the box's right end (a switch's knob, a drop-down's arrow),
- (view 2) the box's top-left and bottom-right corners, 32×32 px at the screen's own scale: a
  1 px focus ring, a dotted one inside a button or a pressed button's bevel survive no squeezing,
  and a text view's border is squeezed away entirely in the other views,

each with a margin of the page around it, so a fill can be told from the page's own colour. The
element's type enters beside the pooled features. It gives the probability of each boolean state
it was trained for (``caap.taxonomy``'s: checked, focused, highlighted, expanded, indeterminate,
enabled; a head names its own in its settings, and the types it learnt each on, so one trained
before a state or a type's state was added still loads and reads only what it learnt); the
``read_states`` step writes those the element's type carries, at the thresholds fitted on
validation screens (``StateHead.thresholds``).

The head lives in the reader's checkpoint directory (``HEAD_FILE`` weights, ``HEAD_CONFIG`` its
settings and data card) and is loaded with the reader; a reader directory without it keeps the
reader's own states.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.taxonomy import BOOLEAN_ATTRIBUTES, ElementType, attributes_of

HEAD_FILE = "state-head.safetensors"
HEAD_CONFIG = "state-head.json"
VIEW_H = 32
SIDE_W = 32          # each end's square
MIDDLE_W = 64        # the whole box, squeezed
VIEW_W = 2 * SIDE_W + MIDDLE_W  # view 1
CORNER = 32          # each native corner's side (view 2)
VIEWS = (1, 2)       # a head's settings name the view it was trained on (1 when they do not)
VIEW = 2             # what new heads are trained on
TYPES: tuple[ElementType, ...] = tuple(ElementType)
STATES: tuple[str, ...] = BOOLEAN_ATTRIBUTES  # what a head is trained for
MEAN, SPREAD = 0.5, 0.25  # pixels in [0, 1] are centred and scaled by these before the network


class StateHeadError(ValueError):
    """A state head that cannot be loaded; the message names the file."""


def margin_of(box: Sequence[int]) -> int:
    """The page margin around a box in its views: a fifth of its height, 2-6 px."""
    return int(min(6, max(2, round(0.2 * (box[3] - box[1])))))


def _region(rgb: np.ndarray, box: Sequence[int]) -> np.ndarray:
    """The box and its margin, the image's edge pixels repeated where the margin leaves the image."""
    h, w = rgb.shape[:2]
    m = margin_of(box)
    x1, y1, x2, y2 = int(box[0]) - m, int(box[1]) - m, int(box[2]) + m, int(box[3]) + m
    cx1, cy1, cx2, cy2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if cx2 <= cx1 or cy2 <= cy1:
        return np.zeros((max(1, y2 - y1), max(1, x2 - x1), 3), np.uint8)
    crop = rgb[cy1:cy2, cx1:cx2]
    pads = ((cy1 - y1, y2 - cy2), (cx1 - x1, x2 - cx2), (0, 0))
    return np.pad(crop, pads, mode="edge") if any(p for pair in pads[:2] for p in pair) else crop


def _resized(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    if pixels.shape[0] == height and pixels.shape[1] == width:
        return pixels
    return np.asarray(Image.fromarray(np.ascontiguousarray(pixels)).resize((width, height), Image.Resampling.BILINEAR))


def view_width(view: int = VIEW) -> int:
    """The width of a ``state_view`` of this version."""
    return VIEW_W + (2 * CORNER if view == 2 else 0)


def _corner(region: np.ndarray, bottom_right: bool) -> np.ndarray:
    """A ``CORNER`` square of the region at the screen's scale, its edge repeated where it is smaller."""
    h, w = region.shape[:2]
    part = region[max(0, h - CORNER):, max(0, w - CORNER):] if bottom_right else region[:CORNER, :CORNER]
    ph, pw = CORNER - part.shape[0], CORNER - part.shape[1]
    if ph or pw:
        pads = ((ph, 0), (pw, 0)) if bottom_right else ((0, ph), (0, pw))
        part = np.pad(part, (*pads, (0, 0)), mode="edge")
    return part


def state_view(rgb: np.ndarray, box: Sequence[int], view: int = VIEW) -> np.ndarray:
    """The head's input for one box: uint8 ``(VIEW_H, view_width(view), 3)``: left square, whole,
    right square, and with view 2 the native top-left and bottom-right corners."""
    if view not in VIEWS:
        raise ValueError(f"state view {view}: one of {VIEWS}")
    region = _region(rgb, box)
    rh, rw = region.shape[:2]
    side = min(rh, rw)
    parts = [_resized(region[:, :side], SIDE_W, VIEW_H), _resized(region, MIDDLE_W, VIEW_H),
             _resized(region[:, rw - side:], SIDE_W, VIEW_H)]
    if view == 2:
        parts += [_corner(region, False), _corner(region, True)]
    return np.concatenate(parts, axis=1)


def type_index(element_type: ElementType | str) -> int:
    return TYPES.index(ElementType(element_type))


def state_mask(element_type: ElementType | str, states: Sequence[str] = STATES) -> np.ndarray:
    """1 for each of ``states`` the type carries (``caap.taxonomy``), 0 for the rest."""
    carried = attributes_of(element_type)
    return np.array([1.0 if s in carried else 0.0 for s in states], np.float32)


def build_network(width: int = 32, states: int = len(STATES)) -> Any:
    """The network: four conv blocks (32×128 → 4×16), average and max pooled, the type's embedding
    beside them, two linear layers to one logit per state. 0.07 M parameters at width 32."""
    import torch
    from torch import nn

    class StateNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c = width

            def block(cin: int, cout: int, stride: int) -> list[nn.Module]:
                return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout),
                        nn.ReLU(inplace=True)]

            # Strided convolutions, not pooling: a few times cheaper on a CPU for the same map sizes.
            self.features = nn.Sequential(*block(3, c // 2, 2), *block(c // 2, c, 2), *block(c, 2 * c, 2),
                                          *block(2 * c, 2 * c, 1))
            self.types = nn.Embedding(len(TYPES), 8)
            self.head = nn.Sequential(nn.Linear(4 * c + 8, 64), nn.ReLU(inplace=True), nn.Linear(64, states))

        def forward(self, x: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            f = self.features(x)
            pooled = torch.cat([f.mean(dim=(2, 3)), f.amax(dim=(2, 3)), self.types(types)], dim=1)
            return self.head(pooled)

    return StateNet()


def to_tensor(views: np.ndarray) -> Any:
    """uint8 ``(N, H, W, 3)`` views as the network's float input ``(N, 3, H, W)``."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(views)).permute(0, 3, 1, 2).float()
    return (x / 255.0 - MEAN) / SPREAD


def run_network(network: Any, views: np.ndarray, types: np.ndarray, batch: int = 512) -> np.ndarray:
    """The network's probabilities for uint8 views ``(N, H, W, 3)`` and type indices ``(N,)``, in
    batches of ``batch``: ``(N, states)``."""
    import torch

    network.eval()
    out = [np.zeros((0, int(network.head[-1].out_features)), np.float32)]
    with torch.inference_mode():
        for i in range(0, len(views), batch):
            x = to_tensor(views[i:i + batch])
            out.append(torch.sigmoid(network(x, torch.from_numpy(np.asarray(types[i:i + batch], np.int64)))).numpy())
    return np.concatenate(out)


def one_per_screen(p: np.ndarray, screens: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """``p`` with every eligible element but the likeliest of its screen set to 0 (ties all kept):
    a screen shows one keyboard focus, in its active window. Ineligible elements keep theirs."""
    out = p.copy()
    for screen in np.unique(screens[eligible]):
        mine = eligible & (screens == screen)
        out[mine & (p < p[mine].max())] = 0.0
    return out


class StateHead:
    """A trained head, loaded once; ``probabilities`` reads a screen's elements in one batch."""

    def __init__(self, network: Any, config: dict[str, Any]) -> None:
        self.network = network.eval()
        self.config = config
        self.view = int(config.get("view", 1))
        # Calibrated as one window's keyboard focus: only the likeliest focusable element may be read focused.
        self.one_focus = bool(config.get("one_focus", False))
        self.reads: tuple[str, ...] = tuple(config.get("states", STATES))  # its outputs, in order
        self.thresholds: dict[str, float] = {s: float(config.get("thresholds", {}).get(s, 0.5)) for s in self.reads}
        # The types each state was trained on; an output never taught on a type reads noise there.
        # A head from before heads said so had every type that carried the state then: buttons
        # carried no checked.
        trained = config.get("types_read") or {
            s: [t.value for t in TYPES if s in attributes_of(t) and (t, s) != (ElementType.BUTTON, "checked")]
            for s in self.reads}
        self.types_read: dict[str, frozenset[str]] = {s: frozenset(trained.get(s, ())) for s in self.reads}

    def mask(self, element_type: ElementType | str) -> np.ndarray:
        """1 for each of the head's states that the type carries and the head was trained on, else 0."""
        name = ElementType(element_type).value
        carried = state_mask(element_type, self.reads)
        return np.array([c if name in self.types_read[s] else 0.0 for c, s in zip(carried, self.reads, strict=True)],
                        np.float32)

    @classmethod
    def load(cls, directory: str | Path) -> StateHead:
        from safetensors.torch import load_file

        directory = Path(directory)
        try:
            config = json.loads((directory / HEAD_CONFIG).read_text(encoding="utf-8"))
            states = config.get("states", STATES)
            if not isinstance(states, list | tuple) or not states or not set(states) <= set(STATES):
                raise StateHeadError(f"{directory / HEAD_CONFIG}: 'states' must be a list of {', '.join(STATES)}")
            read = config.get("types_read")
            if read is not None and not (isinstance(read, dict) and all(
                    isinstance(v, list) and set(v) <= {t.value for t in TYPES} for v in read.values())):
                raise StateHeadError(f"{directory / HEAD_CONFIG}: 'types_read' must map each state to element types")
            network = build_network(int(config.get("width", 32)), len(states))
            network.load_state_dict(load_file(str(directory / HEAD_FILE)))
        except StateHeadError:
            raise
        except FileNotFoundError as exc:
            raise StateHeadError(f"{directory}: the state head is incomplete ({Path(exc.filename).name} missing)") \
                from None
        except Exception as exc:  # corrupt JSON, safetensors or a state dict of another shape
            raise StateHeadError(f"{directory}: cannot load the state head ({HEAD_FILE}, {HEAD_CONFIG}): "
                                 f"{str(exc).splitlines()[0][:200]}") from None
        if config.get("view", 1) not in VIEWS:
            raise StateHeadError(f"{directory / HEAD_CONFIG}: 'view' must be one of {', '.join(map(str, VIEWS))}")
        if tuple(config.get("types", [t.value for t in TYPES])) != tuple(t.value for t in TYPES):
            raise StateHeadError(f"{directory / HEAD_CONFIG}: trained for other element types than this caap has")
        return cls(network, config)

    def probabilities(self, rgb: np.ndarray, elements: Sequence[Element]) -> np.ndarray:
        """``(len(elements), len(self.reads))`` probabilities; rows of elements that carry none of
        the head's states are 0."""
        out = np.zeros((len(elements), len(self.reads)), np.float32)
        todo = [i for i, e in enumerate(elements) if self.mask(e.type).any()]
        if todo:
            views = np.stack([state_view(rgb, elements[i].bbox, self.view) for i in todo])
            out[todo] = run_network(self.network, views, np.array([type_index(elements[i].type) for i in todo]))
        if self.one_focus and "focused" in self.reads:
            k = self.reads.index("focused")
            out[:, k] = one_per_screen(out[:, k], np.zeros(len(elements), np.int64),
                                       np.array([self.mask(e.type)[k] > 0 for e in elements], bool))
        return out

    def states(self, rgb: np.ndarray, elements: Sequence[Element]) -> list[dict[str, bool]]:
        """Each element's states its type carries, as the head reads them at its thresholds."""
        probs = self.probabilities(rgb, elements)
        out: list[dict[str, bool]] = []
        for e, row in zip(elements, probs, strict=True):
            mask = self.mask(e.type)
            out.append({s: bool(row[k] >= self.thresholds[s]) for k, s in enumerate(self.reads) if mask[k]})
        return out


def save_head(network: Any, config: dict[str, Any], directory: str | Path) -> None:
    """Write the head's weights and settings into a reader directory (both files replaced whole).
    ``config`` may name the head's ``states`` (a subset of ``STATES``, in that order; all by default)
    and ``types_read``, the types each was trained on (every type that carries it by default)."""
    from safetensors.torch import save_file

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    states = list(config.get("states", STATES))
    read = config.get("types_read") or {s: [t.value for t in TYPES if s in attributes_of(t)] for s in states}
    config = {**config, "states": states, "types_read": read, "types": [t.value for t in TYPES]}
    tmp_w, tmp_c = directory / (HEAD_FILE + ".tmp"), directory / (HEAD_CONFIG + ".tmp")
    save_file({k: v.detach().cpu().contiguous() for k, v in network.state_dict().items()}, str(tmp_w))
    tmp_c.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    tmp_w.replace(directory / HEAD_FILE)
    tmp_c.replace(directory / HEAD_CONFIG)
