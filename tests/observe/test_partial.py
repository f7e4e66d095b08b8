"""A partial look (caap/observe/partial.py): where a screen changed since the last look, the
elements kept and the regions cut out, and the observer with the shipped models reading a partly
changed screen as a whole look reads it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.observe import partial
from caap.taxonomy import ElementType

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "partial"  # an episode's screens (validation seeds)


def _el(box: tuple[int, int, int, int], kind: ElementType = ElementType.BUTTON) -> Element:
    return Element(type=kind, bbox=box, text="x")


def test_changed_pixels_near_each_other_are_one_region_and_far_ones_two():
    before = np.zeros((200, 300, 3), np.uint8)
    after = before.copy()
    after[10:12, 10:20] = 255
    after[10:12, 24:30] = 255   # 4 px on: the same region
    after[150:160, 200:210, 1] = 7  # one channel changed far away: a second region
    boxes = sorted(partial.changed_boxes(before, after))
    assert boxes == [(10, 10, 30, 12), (200, 150, 210, 160)]
    assert partial.changed_boxes(before, before.copy()) == []
    with pytest.raises(ValueError, match="sizes"):
        partial.changed_boxes(before, after[:, :100])


def test_a_change_takes_in_the_elements_it_touches_and_the_rest_are_kept():
    before = np.zeros((400, 600, 3), np.uint8)
    after = before.copy()
    after[52:56, 102:106] = 200  # inside the field's box only
    field = _el((100, 50, 220, 70), ElementType.INPUT_FIELD)
    label = _el((20, 52, 90, 68), ElementType.TEXT)
    far = _el((400, 300, 480, 330))
    c = partial.CONTEXT
    todo = partial.plan(partial.changed_boxes(before, after), [label, field, far], (600, 400))
    assert todo.kept == (0, 2)
    assert todo.regions == (((102, 52, 106, 56), (100, 50, 220, 70)),)  # the change, and the field whole
    assert todo.cutouts == ((100 - c, 50 - c, 220 + c, 70 + c),)
    # A change touching the label too takes it in: one cut-out round both.
    after[60:62, 85:104] = 200
    todo = partial.plan(partial.changed_boxes(before, after), [label, field, far], (600, 400))
    assert todo.kept == (2,) and todo.cutouts == ((0, 50 - c, 220 + c, 70 + c),)
    # A box the detector finds now that the change touches is taken in whole, and what it touches.
    wide = _el((95, 40, 300, 80))
    beside = _el((290, 45, 330, 75))
    todo = partial.plan(partial.changed_boxes(before, after), [label, field, far, beside], (600, 400), [wide])
    assert todo.kept == (2,) and todo.cutouts == ((0, 40 - c, 330 + c, 80 + c),)
    # Nothing changed: nothing to look at, everything kept.
    assert partial.plan([], [label, field, far], (600, 400)) == partial.Plan((), (), (0, 1, 2))


def test_changes_whose_cutouts_would_overlap_are_one_cutout_and_what_none_touches_is_kept():
    before = np.zeros((300, 600, 3), np.uint8)
    after = before.copy()
    after[100:104, 100:104] = 99
    gap = 2 * partial.CONTEXT - 8  # their cut-outs would overlap
    after[100:104, 104 + gap:108 + gap] = 99
    between = _el((106, 95, 102 + gap, 110))  # touched by neither change, though between them
    todo = partial.plan(partial.changed_boxes(before, after), [between], (600, 300))
    c = partial.CONTEXT
    assert todo.cutouts == ((100 - c, 100 - c, 108 + gap + c, 104 + c),) and todo.kept == (0,)
    # A dense screen is not taken in by a rectangle round the change: only what touches it, box by box.
    row = [_el((x, 200, x + 30, 220)) for x in range(0, 600, 40)]
    after[205:207, 5:8] = 99
    todo = partial.plan(partial.changed_boxes(before, after), [between, *row], (600, 300))
    assert todo.kept == tuple(i for i in range(len(row) + 1) if i != 1)
    far_apart = before.copy()
    far_apart[100:104, 100:104] = 99
    far_apart[100:104, 400:404] = 99
    assert len(partial.plan(partial.changed_boxes(before, far_apart), [], (600, 300)).cutouts) == 2


def test_only_elements_centred_in_the_region_are_new_and_a_kept_one_found_again_is_not():
    cutout, region = (76, 26, 244, 94), ((100, 50, 220, 70), (60, 50, 64, 52))
    kept = [_el((20, 52, 90, 68))]
    found = [                    # boxes in the cut-out's pixels
        _el((30, 26, 140, 42)),  # centred in the region: new
        _el((0, 30, 20, 40)),    # in the context on the left: a kept element's business
        _el((24, 26, 94, 42)),   # centred in the region: new
    ]
    assert partial.new_in_region(found, cutout, region, kept) == [0, 2]
    # a kept element found again (its box on the screen), centred in the region: not new
    again = [_el((34, 26, 104, 42))]
    assert partial.new_in_region(again, cutout, region, [_el((110, 52, 180, 68))]) == []
    moved = partial.shifted(found[0], 76, 26)
    assert moved.bbox == (106, 52, 216, 68) and found[0].bbox == (30, 26, 140, 42)


@pytest.fixture(scope="module")
def observer():
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.observe.vision import DEFAULT_DETECTOR, DEFAULT_READER, MINIWOB_DETECTOR, VisionObserver

    if not DEFAULT_DETECTOR.is_file() or not (DEFAULT_READER / "model.safetensors").is_file():
        pytest.skip("the shipped models are not in this checkout")
    return VisionObserver.load(MINIWOB_DETECTOR, memo=0, screen_memo=0, screens="web")


def _same(got: list[Element], want: list[Element]) -> None:
    """Element lists alike: types, texts and states exactly, boxes to 2 px (an icon fitted to its ink
    in a cut-out may end a pixel over), without the confidences (a kept element keeps those of the
    look that found it: the detector's score of a box moves when another part of the screen does)."""
    def plain(e: Element) -> dict:
        record = e.to_json()
        for key in ("score", "text_confidence", "bbox"):
            record.pop(key, None)
        return record

    left = sorted(got, key=lambda e: (e.bbox[1], e.bbox[0]))
    right = sorted(want, key=lambda e: (e.bbox[1], e.bbox[0]))
    assert len(left) == len(right), ([(e.bbox, e.text) for e in left], [(e.bbox, e.text) for e in right])
    for a in left:
        near = [b for b in right if max(abs(p - q) for p, q in zip(a.bbox, b.bbox, strict=True)) <= 2]
        assert any(plain(a) == plain(b) for b in near), (a, near)


@pytest.fixture(scope="module")
def desktop_observer(observer):
    from caap.observe.vision import VisionObserver

    return VisionObserver.load(memo=0, screen_memo=0, screens="desktop")


@pytest.mark.parametrize("first,second,desktop", [
    (SCREENS / "use-spinner-caret-after-digit.png", SCREENS / "use-spinner-focused.png", False),
    (SCREENS / "identify-shape-l-read-one.png", SCREENS / "identify-shape-letter.png", False),
    # A change at the start of the task's line: the cut-out is mostly the line's yellow, and ink is
    # what differs from the screen's page colour, not the cut-out's (else the first letters are a figure).
    (PAIRS / "enter-password-typed.png", PAIRS / "enter-password-typed-again.png", False),
    # GTK 4's stack switcher: the current page's tab is weighed against the strip's other tabs,
    # one of which did not change (the whole-screen steps).
    (PAIRS / "gtk4-stack-page1.png", PAIRS / "gtk4-stack-page2.png", True),
], ids=["spinner-focus", "shape-letter", "task-line-page-colour", "gtk4-tab-switch"])
def test_a_partly_changed_screen_reads_as_a_whole_look_reads_it(observer, desktop_observer, first, second, desktop):
    observer = desktop_observer if desktop else observer
    a = Image.open(first).convert("RGB")
    b = Image.open(second).convert("RGB")
    observer.forget()
    observer.partial_look = 0.0
    whole = observer.observe(b)
    assert whole.look == "whole"
    observer.forget()
    observer.partial_look = ObserveConfig().partial_look
    seen_a = observer.observe(a)
    detected_a = observer.last.detected
    part = observer.observe(b)
    assert part.look == "part" and part.steps and 0 < observer.looked_at < 1
    _same(part.elements, whole.elements)
    # The elements outside the change are the first look's (the whole-screen steps may weigh their
    # states again); the others were looked at again.
    detected_b = observer.last.detected
    changed = partial.changed_boxes(np.asarray(a), np.asarray(b)) + partial.detector_changes(detected_a, detected_b)
    todo = partial.plan(changed, seen_a.elements, a.size, detected_b)
    assert todo.kept and len(todo.kept) < len(seen_a.elements)
    assert [(seen_a.elements[i].bbox, seen_a.elements[i].text) for i in todo.kept] == \
        [(e.bbox, e.text) for e in part.elements[:len(todo.kept)]]
    assert len(part.provenance) == len(part.elements)
    assert part.to_json()["look"] == "part"
    # The same screen again, the screen memo off: nothing changed, nothing looked at.
    again = observer.observe(b)
    assert again.look == "again" and not again.steps
    _same(again.elements, part.elements)


def test_a_screen_changed_in_large_part_or_with_partial_looks_off_is_looked_at_whole(observer):
    a = Image.open(SCREENS / "use-spinner-focused.png").convert("RGB")
    b = Image.open(SCREENS / "click-menu-hovered-entry.png").convert("RGB")
    observer.forget()
    observer.partial_look = ObserveConfig().partial_look
    observer.observe(a)
    assert observer.observe(b).look == "whole"
    observer.partial_look = 0.0
    observer.observe(a)
    assert observer.observe(Image.open(SCREENS / "use-spinner-caret-after-digit.png").convert("RGB")).look == "whole"
    # Other task names: whole (a step reads them); another size: whole.
    observer.partial_look = 1.0
    observer.observe(a)
    assert observer.observe(a.copy(), names=["Alice"]).look == "whole"
    assert observer.observe(a.resize((200, 210))).look == "whole"
    with pytest.raises(ValueError, match="partial_look"):
        ObserveConfig(partial_look=1.5)
    observer.partial_look = ObserveConfig().partial_look


def test_where_the_detector_sees_otherwise_is_a_change_though_no_pixel_changed():
    label_cut = _el((214, 221, 689, 242), ElementType.TEXT)   # a label's box cut short by a menu beside it
    label = _el((62, 221, 689, 242), ElementType.TEXT)        # the whole label, the menu closed
    same = [_el((10, 10, 50, 30)), _el((100, 10, 150, 31))]   # found on both screens (a px off: the same box)
    moved = [_el((10, 10, 50, 30)), _el((100, 11, 150, 31))]
    assert partial.detector_changes([*same, label_cut], [*moved, label]) == [(62, 221, 689, 242), (62, 221, 689, 242)]
    assert partial.detector_changes(same, moved) == []
    retyped = [same[0], same[1].model_copy(update={"type": ElementType.ICON})]
    assert partial.detector_changes(same, retyped) == [(100, 10, 150, 31), (100, 10, 150, 31)]
    assert partial.detector_changes([], same) == [e.bbox for e in same]
    # The plan drops the last look's label the detector now sees whole, and looks at the whole of it.
    todo = partial.plan(partial.detector_changes([label_cut], [label]), [label_cut], (800, 300), [label])
    assert todo.kept == () and todo.cutouts == ((62 - partial.CONTEXT, 221 - partial.CONTEXT, 689 + partial.CONTEXT,
                                                 242 + partial.CONTEXT),)


def test_a_value_typed_since_the_last_look_reads_its_field_again(observer):
    """The same pixels, another typed value: the field is looked at again with it (a field is read
    back with the value the agent typed, ``caap.observe.steps.typed``), and only the field."""
    from caap.observe.observation import Typed

    image = Image.open(SCREENS / "email-inbox-typed-over-heading.png").convert("RGB")
    search = (3, 73, 129, 90)

    def field(seen) -> str | None:
        fields = [e for e in seen.elements if e.type.value == "input_field"]
        assert len(fields) == 1
        return fields[0].text

    observer.forget()
    observer.partial_look = ObserveConfig().partial_look
    assert field(observer.observe(image, typed=[Typed(search, "Sonny")])) == "Sonny"
    other = observer.observe(image, typed=[Typed(search, "Sunny")])
    assert other.look == "part" and 0 < observer.looked_at < 0.5 and field(other) != "Sunny"
    back = observer.observe(image, typed=[Typed(search, "Sonny")])
    assert back.look == "part" and field(back) == "Sonny"
    assert observer.observe(image, typed=[Typed(search, "Sonny")]).look == "again"
