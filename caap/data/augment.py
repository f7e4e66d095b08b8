"""Dataset augmentation as in the CAAP paper: colour changes, slight box-size changes and Gaussian
noise, tripling the data. Never a flip or any other geometric change of the screenshot: screen
layouts are not mirror-symmetric (text reads left to right, scrollbars sit on the right), so a
flipped screen is a screen the agent will never see.

``augment_dataset`` writes a NEW canonical dataset: every original plus ``multiplier - 1``
augmented copies (``<stem>__aug<k>``), each with the original's ``source`` (so seed-based splits
keep a copy on its original's side) and a ``source.note`` recording what was applied. It is
deterministic: each copy's random stream derives from (seed, group, stem, k), not from the order
the images are visited in.
"""

from __future__ import annotations

import json
import shutil
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.data.export import SplitRule, fresh_output_dir, guard_output, load_items, split_of
from caap.data.format import Annotation, Dataset, DatasetError
from caap.elements import Element

AUG_PREFIX = "aug:"


@dataclass(frozen=True)
class AugmentConfig:
    """Ranges the random parameters are drawn from (uniformly). Factors are multiplicative (1 = unchanged)."""

    brightness: float = 0.15  # factor in [1 - b, 1 + b]
    contrast: float = 0.15  # factor in [1 - c, 1 + c]
    saturation: float = 0.25  # factor in [1 - s, 1 + s]
    hue_deg: float = 18.0  # rotation in [-h, +h] degrees
    noise_sigma: tuple[float, float] = (1.0, 6.0)  # Gaussian noise sigma, in 0-255 units
    box_px: int = 2  # each box edge moves by at most this many pixels

    def __post_init__(self) -> None:
        for name in ("brightness", "contrast", "saturation"):
            value = getattr(self, name)
            if not 0 <= value < 1:
                raise DatasetError(f"augment config: {name} must be in [0, 1), got {value}")
        lo, hi = self.noise_sigma
        if not 0 <= lo <= hi:
            raise DatasetError(f"augment config: noise_sigma must be (low, high) with 0 <= low <= high, got {lo, hi}")
        if self.box_px < 0 or self.hue_deg < 0:
            raise DatasetError("augment config: box_px and hue_deg must not be negative")


# --- the transforms (pure: image/elements in, new ones out; randomness only from rng) -----------

# RGB <-> YIQ: a hue rotation is a rotation of the (I, Q) chroma plane and saturation its scaling,
# so both fold into one 3x3 channel mix; much faster than a round trip through HSV.
_RGB2YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]], dtype=np.float64)
_YIQ2RGB = np.linalg.inv(_RGB2YIQ)


def colour_matrix(saturation: float, hue_deg: float) -> np.ndarray:
    """The 3x3 RGB mix that scales saturation and rotates hue by ``hue_deg`` degrees."""
    t = np.deg2rad(hue_deg)
    c, s = np.cos(t) * saturation, np.sin(t) * saturation
    chroma = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    return (_YIQ2RGB @ chroma @ _RGB2YIQ).astype(np.float32)


def _colour_array(
    a: np.ndarray, brightness: float, contrast: float, saturation: float, hue_deg: float
) -> np.ndarray:
    """float32 HxWx3 in and out (unclipped): hue/saturation mix, contrast about the mean grey, brightness."""
    a = a @ colour_matrix(saturation, hue_deg).T
    grey_mean = float((a @ np.array([0.299, 0.587, 0.114], dtype=np.float32)).mean())
    return ((a - grey_mean) * contrast + grey_mean) * brightness


def _noise_array(a: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    if sigma <= 0:
        return a
    return a + rng.standard_normal(size=a.shape, dtype=np.float32) * np.float32(sigma)


def _to_image(a: np.ndarray) -> Image.Image:
    return Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8), "RGB")


def _to_array(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.float32)


def apply_colour(
    img: Image.Image, *, brightness: float = 1.0, contrast: float = 1.0, saturation: float = 1.0, hue_deg: float = 0.0
) -> Image.Image:
    """Deterministic colour change of an image, returned as RGB (the parameters ``colour_jitter`` draws)."""
    return _to_image(_colour_array(_to_array(img), brightness, contrast, saturation, hue_deg))


def _draw_colour(rng: np.random.Generator, brightness: float, contrast: float, saturation: float,
                 hue_deg: float) -> dict[str, float]:
    return {
        "bright": float(rng.uniform(1 - brightness, 1 + brightness)),
        "contrast": float(rng.uniform(1 - contrast, 1 + contrast)),
        "sat": float(rng.uniform(1 - saturation, 1 + saturation)),
        "hue": float(rng.uniform(-hue_deg, hue_deg)),
    }


def colour_jitter(
    img: Image.Image,
    rng: np.random.Generator,
    *,
    brightness: float = 0.15,
    contrast: float = 0.15,
    saturation: float = 0.25,
    hue_deg: float = 18.0,
) -> tuple[Image.Image, dict[str, float]]:
    """A random brightness/contrast/saturation change and hue rotation; returns the image and what was drawn
    (``{"bright", "contrast", "sat", "hue"}``)."""
    p = _draw_colour(rng, brightness, contrast, saturation, hue_deg)
    return apply_colour(img, brightness=p["bright"], contrast=p["contrast"], saturation=p["sat"], hue_deg=p["hue"]), p


def gaussian_noise(img: Image.Image, rng: np.random.Generator, sigma: float) -> Image.Image:
    """Add zero-mean Gaussian noise (``sigma`` in 0-255 units, independent per pixel and channel); RGB out."""
    return _to_image(_noise_array(_to_array(img), rng, sigma))


def jitter_box(
    bbox: tuple[int, int, int, int], rng: np.random.Generator, max_px: int, width: int, height: int
) -> tuple[int, int, int, int]:
    """Move each edge by an integer in [-max_px, max_px], clipped to the image. An axis whose jitter
    would leave no pixel keeps its original edges, so a box never collapses."""
    x1, y1, x2, y2 = bbox
    d = rng.integers(-max_px, max_px + 1, size=4) if max_px > 0 else np.zeros(4, dtype=int)
    nx1, nx2 = max(0, x1 + int(d[0])), min(width, x2 + int(d[2]))
    ny1, ny2 = max(0, y1 + int(d[1])), min(height, y2 + int(d[3]))
    if nx2 <= nx1:
        nx1, nx2 = x1, x2
    if ny2 <= ny1:
        ny1, ny2 = y1, y2
    return (nx1, ny1, nx2, ny2)


def jitter_boxes(
    elements: list[Element], rng: np.random.Generator, max_px: int, width: int, height: int
) -> list[Element]:
    """New elements with jittered boxes (``jitter_box``); everything else unchanged."""
    return [e.model_copy(update={"bbox": jitter_box(e.bbox, rng, max_px, width, height)}) for e in elements]


# --- one augmented copy -------------------------------------------------------------------------


def augment_one(
    img: Image.Image, ann: Annotation, rng: np.random.Generator, config: AugmentConfig, k: int
) -> tuple[Image.Image, Annotation]:
    """One augmented copy of a screenshot and its annotation (``source.note`` says what was applied).

    Same draws as ``colour_jitter`` then ``gaussian_noise`` then ``jitter_boxes``, but in one float
    pass over the pixels (no uint8 round trip in between)."""
    c = config
    p = _draw_colour(rng, c.brightness, c.contrast, c.saturation, c.hue_deg)
    a = _colour_array(_to_array(img), p["bright"], p["contrast"], p["sat"], p["hue"])
    sigma = float(rng.uniform(*c.noise_sigma))
    out = _to_image(_noise_array(a, rng, sigma))
    elements = jitter_boxes(ann.elements, rng, c.box_px, ann.width, ann.height)
    note = (
        f"{AUG_PREFIX}k={k};bright={p['bright']:.3f};contrast={p['contrast']:.3f};"
        f"sat={p['sat']:.3f};hue={p['hue']:.1f};noise={sigma:.2f};box={c.box_px}"
    )
    if ann.source.note:
        note += f" | {ann.source.note}"  # keep the original's note after ours
    source = ann.source.model_copy(update={"note": note})
    return out, ann.model_copy(update={"source": source, "elements": elements})


def _write(root: Path, group: str, stem: str, img: Image.Image, ann: Annotation) -> None:
    """Like ``Dataset.add`` (image first, label last), but PNG level 1: noisy images barely compress
    and level 6 made encoding ~80% of the augmentation time."""
    rel = f"images/{group}/{stem}.png"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    img.save(root / rel, format="PNG", compress_level=1)
    ann = ann.model_copy(update={"image": rel, "width": img.width, "height": img.height})
    label = root / "labels" / group / f"{stem}.json"
    label.parent.mkdir(parents=True, exist_ok=True)
    label.write_text(json.dumps(ann.to_json(), ensure_ascii=False) + "\n", encoding="utf-8")


def _rng(seed: int, group: str, stem: str, k: int) -> np.random.Generator:
    # Keyed by the image's identity, so adding or removing other images never changes this copy.
    return np.random.default_rng([seed, k, zlib.crc32(f"{group}/{stem}".encode())])


def augment_dataset(
    src_root: str | Path,
    out_root: str | Path,
    *,
    multiplier: int = 3,
    seed: int = 0,
    overwrite: bool = False,
    config: AugmentConfig | None = None,
    only_train: SplitRule | None = None,
) -> dict[str, Any]:
    """Write a new dataset at ``out_root``: every original plus ``multiplier - 1`` augmented copies.

    With ``only_train``, images that the split rule puts in validation are copied but not
    augmented, so validation measures the originals only.

    Images are converted to RGB (screenshots have no meaningful alpha). Returns ``{"out_root",
    "originals", "augmented", "images", "seconds"}``.
    """
    if multiplier < 1:
        raise DatasetError(f"multiplier must be at least 1 (1 = copy only), got {multiplier}")
    if seed < 0:
        raise DatasetError(f"seed must not be negative, got {seed}")
    config = config or AugmentConfig()
    src = Path(src_root)
    out = Path(out_root)
    guard_output(out, src)
    items = load_items(src, allow_unknown=True)
    if multiplier > 1:
        # Re-augmenting would stack augmentations, and the copies' names could clash with existing stems.
        for it in items:
            if it.ann.source.note and it.ann.source.note.startswith(AUG_PREFIX):
                raise DatasetError(f"{it.label_path}: source.note: already an augmented copy; augment the originals")
        names = {(it.group, it.stem) for it in items}
        for it in items:
            for k in range(1, multiplier):
                if (it.group, f"{it.stem}__aug{k}") in names:
                    raise DatasetError(f"{it.label_path}: its copy {it.stem}__aug{k} would clash with an existing stem")
    meta = Dataset(src).meta()
    generator = {
        "tool": "caap.data.augment",
        "source": str(src.resolve()),
        "source_name": meta.get("name"),
        "source_generator": meta.get("generator"),
        "multiplier": multiplier,
        "seed": seed,
        "config": asdict(config),
        "only_train": str(only_train) if only_train else None,
    }
    started = time.perf_counter()
    augmented = 0
    with fresh_output_dir(out, overwrite=overwrite) as tmp:
        Dataset.create(tmp, name=f"{meta.get('name', src.name)}-aug{multiplier}", generator=generator)
        for it in items:
            # The original, byte for byte (no re-encoding).
            img_rel = Path(it.ann.image)
            if img_rel.is_absolute() or ".." in img_rel.parts:
                raise DatasetError(f"{it.label_path}: image: '{it.ann.image}' must be a path inside the dataset")
            (tmp / img_rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(it.image_path, tmp / img_rel)
            label = tmp / "labels" / it.label_path.relative_to(src / "labels")
            label.parent.mkdir(parents=True, exist_ok=True)
            label.write_text(json.dumps(it.ann.to_json(), ensure_ascii=False) + "\n", encoding="utf-8")
            if multiplier == 1 or (only_train is not None and split_of(it.ann, only_train) == "val"):
                continue
            with Image.open(it.image_path) as im:
                base = im.convert("RGB")
            for k in range(1, multiplier):
                img, ann = augment_one(base, it.ann, _rng(seed, it.group, it.stem, k), config, k)
                _write(tmp, it.group, f"{it.stem}__aug{k}", img, ann)
                augmented += 1
    return {
        "out_root": str(out.resolve()),
        "originals": len(items),
        "augmented": augmented,
        "images": len(items) + augmented,
        "seconds": round(time.perf_counter() - started, 3),
    }
