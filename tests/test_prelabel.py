"""`caap dataset prelabel`: the observer's elements on unlabelled screenshots as a caap dataset and
Label Studio predictions. Library behaviour with a stand-in observer; then the shipped models on
real screenshots; then the loop through a real Label Studio (slow)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from caap.cli import app
from caap.data.export import SplitRule, export_yolo
from caap.data.format import Dataset, DatasetError
from caap.data.labelstudio import labeling_config
from caap.data.prelabel import LOG_NAME, TASKS_NAME, ModelFiles, check_output, find_images, prelabel
from caap.elements import Element
from caap.observe.observation import Observation
from caap.taxonomy import DETECTOR_CLASSES, TEXT, TYPE_ATTRIBUTES, ElementType

REPO = Path(__file__).resolve().parents[1]
SCREENS = REPO / "tests" / "fixtures" / "screens"
REAL_SCREENS = ("click-test-2-stacked-buttons.png", "email-search-over-heading.png",
                "click-tab-2-short-link-beside-link.png")
NESTED_SCREEN = "use-spinner-caret-after-digit.png"
SHIPPED_DETECTOR = REPO / "models" / "detector" / "caap-yolov8n-any.pt"  # the observer's default
SHIPPED_READER = REPO / "models" / "reader"
runner = CliRunner()

# A type the reader may produce that no label may have (derived, so a growing taxonomy needs no edit).
NO_LABEL_TYPE = next(t for t in ElementType if t not in DETECTOR_CLASSES)
TEXT_TYPE = next(t for t in DETECTOR_CLASSES if TEXT in TYPE_ATTRIBUTES[t])
BOXED_TYPE = next(t for t in DETECTOR_CLASSES if not TYPE_ATTRIBUTES[t])


def label_texts(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / "labels").rglob("*.json"))}


# --- a stand-in observer -------------------------------------------------------------------------

class FakeObserver:
    """Elements made from the image size: a text line, a box, one the reader could not type, an
    empty and a blank text, and a box partly outside the image. ``fail_after``: raise on that call."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self.fail_after = fail_after

    def observe(self, image: Image.Image) -> Observation:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise KeyboardInterrupt  # as a person pressing Ctrl-C half-way
        w, h = image.size
        return Observation([
            Element(type=TEXT_TYPE, bbox=[1, 1, w // 2, 10], text=f"{w}x{h}", score=0.9, text_confidence=0.8),
            Element(type=BOXED_TYPE, bbox=[w - 10, 0, w + 5, h], score=0.5),  # clipped to the image
            Element(type=NO_LABEL_TYPE, bbox=[2, 12, 20, 20], text="?!", score=0.4),
            Element(type=TEXT_TYPE, bbox=[2, 22, 20, 30], text="", score=0.3),
            Element(type=TEXT_TYPE, bbox=[2, 32, 20, 40], text="  ", score=0.2),
            Element(type=TEXT_TYPE, bbox=[3, 42, 21, 50], text="snap", score=None),  # a rule's word: no score
        ])


MODELS = ModelFiles(detector=Path("/m/det.pt"), reader=Path("/m/reader"), ocr=True,
                    detector_sha256="d" * 64, reader_sha256="r" * 64)


def _png(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)
    return path


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    root = tmp_path / "shots"
    _png(root / "b.png", (64, 48), (255, 0, 0))
    Image.new("RGB", (80, 60), (0, 255, 0)).save(root / "a.jpg", quality=95)
    _png(root / "a.png", (70, 50), (0, 0, 255))  # same stem as a.jpg
    _png(root / "app" / "c.png", (90, 70), (9, 9, 9))
    Image.new("RGB", (60, 55), (1, 2, 3)).save(root / "app" / "d.webp")
    (root / "notes.txt").write_text("not an image", encoding="utf-8")
    _png(root / ".hidden" / "x.png", (10, 10), (0, 0, 0))
    (root / "._a.png").write_bytes(b"AppleDouble")  # hidden: left out, not reported
    return root


def test_find_images(shots: Path, tmp_path: Path) -> None:
    names = [p.relative_to(shots).as_posix() for p in find_images(shots)]
    assert names == ["a.jpg", "a.png", "app/c.png", "app/d.webp", "b.png"]
    _png(shots / "out" / "images" / "z.png", (10, 10), (0, 0, 0))  # the output inside DIR
    assert len(find_images(shots, exclude=shots / "out")) == 5
    with pytest.raises(DatasetError, match=r"missing: no such folder"):
        find_images(tmp_path / "missing")
    with pytest.raises(DatasetError, match=r"b\.png: not a folder"):
        find_images(shots / "b.png")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"empty: the folder is empty"):
        find_images(tmp_path / "empty")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"docs: holds no screenshots \(.png, .jpg, .jpeg, .webp\) among its 1"):
        find_images(tmp_path / "docs")


def test_prelabel_writes_a_dataset_and_predictions(shots: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (shots / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    seen: list[tuple[str, str]] = []
    result = prelabel(shots, out, FakeObserver(), MODELS,
                      on_image=lambda p, status, msg: seen.append((p.name, status)))
    assert (result.found, result.written, result.already, result.tasks) == (6, 5, 0, 5)
    assert [(p.name, "not a readable image" in why) for p, why in result.unreadable] == [("broken.png", True)]
    assert seen == [("a.jpg", "written"), ("a.png", "written"), ("c.png", "written"), ("d.webp", "written"),
                    ("b.png", "written"), ("broken.png", "unreadable")]
    # An unknown type is dropped; empty and blank texts are no text; boxes are clipped to the image.
    assert (result.elements, result.dropped) == (5 * 5, 5)

    ds = Dataset(out)
    items = {p.relative_to(out).as_posix(): a for p, a in ds}
    assert sorted(items) == ["labels/shots/a-2.json", "labels/shots/a.json", "labels/shots/app/c.json",
                             "labels/shots/app/d.json", "labels/shots/b.json"]
    ann = items["labels/shots/a-2.json"]  # a.png, after a.jpg took "a"
    assert ann.image == "images/shots/a-2.png" and (ann.width, ann.height) == (70, 50)
    assert [(e.type, e.text) for e in ann.elements] == [(TEXT_TYPE, "70x50"), (BOXED_TYPE, None),
                                                        (TEXT_TYPE, None), (TEXT_TYPE, None), (TEXT_TYPE, "snap")]
    assert ann.elements[1].bbox == (60, 0, 70, 50)
    assert all(e.score is None and e.text_confidence is None and e.id is None for e in ann.elements)
    assert ann.source.kind == "prelabel" and ann.source.note is not None
    assert MODELS.version in ann.source.note and "a.png" in ann.source.note
    assert sorted(a.source.seed for a in items.values()) == [0, 1, 2, 3, 4]
    with Image.open(out / items["labels/shots/a.json"].image) as img:
        assert img.format == "PNG" and img.size == (80, 60)
    meta = ds.meta()
    assert meta["generator"]["kind"] == "prelabel" and meta["generator"]["model_version"] == MODELS.version

    tasks = json.loads((out / TASKS_NAME).read_text(encoding="utf-8"))
    assert len(tasks) == 5 and all("annotations" not in t for t in tasks)
    task = next(t for t in tasks if t["data"]["caap_label"] == "labels/shots/a-2.json")
    [prediction] = task["predictions"]
    assert prediction["model_version"] == "det.pt@dddddddd+reader@rrrrrrrr+pp-ocr"
    assert prediction["score"] == pytest.approx((0.9 + 0.5 + 0.3 + 0.2) / 4)
    scores = {r["id"]: r.get("score") for r in prediction["result"]}
    assert scores == {"e1": 0.9, "e2": 0.5, "e3": 0.3, "e4": 0.2, "e5": None}
    texts = [r["value"]["text"] for r in prediction["result"] if r["from_name"] == "text"]
    assert texts == [["70x50"], ["snap"]]

    # The toolchain takes it: the seeds split it.
    summary = export_yolo(out, tmp_path / "yolo", split=SplitRule.parse("val:every10"))
    assert summary["images"] == {"train": 4, "val": 1}


def test_output_that_holds_something_else_is_refused(shots: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("keep", encoding="utf-8")
    for mode in ("new", "append", "overwrite"):
        with pytest.raises(DatasetError, match=r"other: already exists, is not empty and is not a caap dataset"):
            prelabel(shots, other, FakeObserver(), MODELS, mode=mode)  # type: ignore[arg-type]
    assert [p.name for p in other.iterdir()] == ["mine.txt"]
    with pytest.raises(DatasetError, match=r"holds the screenshots' folder"):
        check_output(shots.parent, "overwrite", shots)
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"file: exists and is not a directory"):
        check_output(tmp_path / "file", "new")


def test_existing_dataset_needs_append_or_overwrite(shots: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    prelabel(shots, out, FakeObserver(), MODELS)
    # A person corrects a label; nothing may undo that.
    corrected = out / "labels/shots/b.json"
    data = json.loads(corrected.read_text(encoding="utf-8"))
    data["elements"] = data["elements"][:1]
    data["elements"][0].update(text="fixed", bbox=[0, 0, 30, 12])
    corrected.write_text(json.dumps(data), encoding="utf-8")
    before = label_texts(out)

    with pytest.raises(DatasetError, match=r"already holds a caap dataset \(5 labelled images\); use --append"):
        prelabel(shots, out, FakeObserver(), MODELS)
    assert label_texts(out) == before

    # --append: the screenshots already there are skipped, new ones continue the seeds.
    _png(shots / "new.png", (66, 44), (7, 7, 7))
    observer = FakeObserver()
    result = prelabel(shots, out, observer, MODELS, mode="append")
    assert (result.written, result.already, observer.calls) == (1, 5, 1)
    after = label_texts(out)
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) == {"labels/shots/new.json"}
    assert Dataset(out).load(out / "labels/shots/new.json").source.seed == 5
    tasks = json.loads((out / TASKS_NAME).read_text(encoding="utf-8"))
    assert len(tasks) == 6
    fixed = next(t for t in tasks if t["data"]["caap_label"] == "labels/shots/b.json")["predictions"][0]
    # A region whose box a person moved is no longer the model's: it keeps no score.
    assert [r.get("score") for r in fixed["result"]] == [None, None] and "score" not in fixed

    # Another folder with the same name: new names, nothing replaced.
    elsewhere = tmp_path / "x" / "shots"
    _png(elsewhere / "b.png", (64, 48), (1, 1, 1))
    result = prelabel(elsewhere, out, FakeObserver(), MODELS, mode="append")
    assert result.written == 1 and (out / "labels/shots/b-2.json").is_file()
    assert (out / "labels/shots/b.json").read_text(encoding="utf-8") == before["labels/shots/b.json"]
    assert result.tasks == 1  # this run's screenshots only: the others are in Label Studio already

    # --overwrite: the dataset is made again.
    result = prelabel(shots, out, FakeObserver(), MODELS, mode="overwrite")
    assert (result.written, result.already) == (6, 0)
    assert not (out / "labels/shots/b-2.json").exists()
    assert json.loads((out / "labels/shots/b.json").read_text(encoding="utf-8"))["elements"][0]["text"] != "fixed"


def test_interrupted_run_resumes_with_append(shots: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        prelabel(shots, out, FakeObserver(fail_after=2), MODELS)
    assert len(Dataset(out)) == 2 and not (out / TASKS_NAME).exists()
    first = label_texts(out)
    # A run that stopped after its log line but before the label: the label is made again, in place.
    log = (out / LOG_NAME).read_text(encoding="utf-8").splitlines()
    (out / json.loads(log[1])["label"]).unlink()
    observer = FakeObserver()
    result = prelabel(shots, out, observer, MODELS, mode="append")
    assert (result.written, result.already, observer.calls) == (4, 1, 4)
    after = label_texts(out)
    assert len(after) == 5 and {k: after[k] for k in first} == first
    assert sorted(a.source.seed for _, a in Dataset(out)) == [0, 1, 2, 3, 4]
    assert result.tasks == 5


def test_cli_errors(shots: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["dataset", "prelabel", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "nothing: no such folder" in r.output
    r = runner.invoke(app, ["dataset", "prelabel", str(shots), "--out", str(tmp_path / "o"), "--append", "--overwrite"])
    assert r.exit_code == 2 and "exclude each other" in r.output
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not weights" * 200)
    r = runner.invoke(app, ["dataset", "prelabel", str(shots), "--out", str(tmp_path / "o"), "--detector", str(bad)])
    assert r.exit_code == 2, r.output
    assert f"{bad}: not loadable YOLO weights" in " ".join(r.output.split()) and "nothing was written" in r.output
    assert not (tmp_path / "o").exists()


# --- the shipped models on real screenshots ------------------------------------------------------

@pytest.fixture(scope="module")
def prelabelled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`caap dataset prelabel` with the shipped models on real screenshots and one corrupt file."""
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    if not SHIPPED_DETECTOR.is_file() or not (SHIPPED_READER / "model.safetensors").is_file():
        pytest.skip(f"the shipped models are not in this checkout ({SHIPPED_DETECTOR}, {SHIPPED_READER})")
    root = tmp_path_factory.mktemp("prelabel")
    shots = root / "my-screens"
    (shots / "dialogs").mkdir(parents=True)
    for name in REAL_SCREENS:
        shutil.copy(SCREENS / name, shots / name)
    shutil.copy(SCREENS / NESTED_SCREEN, shots / "dialogs" / NESTED_SCREEN)
    (shots / "corrupt.png").write_bytes((SCREENS / REAL_SCREENS[0]).read_bytes()[:200])  # cut off mid-file
    out = root / "dataset"
    with pytest.MonkeyPatch.context() as mp:
        # Module scope comes before the autouse isolation: no developer config may change the models.
        mp.chdir(root)
        mp.setenv("HOME", str(root / "home"))
        for var in [v for v in os.environ if v.startswith("CAAP_")]:
            mp.delenv(var)
        r = runner.invoke(app, ["dataset", "prelabel", str(shots), "--out", str(out),
                                "--image-root-url", "http://127.0.0.1:8081/"])
    return {"shots": shots, "out": out, "result": r}


def test_prelabel_with_the_shipped_models(prelabelled: dict[str, Any], shipped_observer: Any) -> None:
    r, out, shots = prelabelled["result"], prelabelled["out"], prelabelled["shots"]
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert f"skipped {shots / 'corrupt.png'}: not a readable image" in text
    assert "4 screenshots pre-labelled" in text and "1 unreadable skipped" in text

    observer = shipped_observer  # what caap dataset prelabel loads: the default [observe] settings
    models = ModelFiles.of_observer(observer)
    ds = Dataset(out)
    items = {p.relative_to(out).as_posix(): a for p, a in ds}
    expected = {f"labels/my-screens/{Path(n).stem}.json" for n in REAL_SCREENS}
    assert set(items) == expected | {f"labels/my-screens/dialogs/{Path(NESTED_SCREEN).stem}.json"}
    tasks = json.loads((out / TASKS_NAME).read_text(encoding="utf-8"))
    assert len(tasks) == 4
    for rel, ann in items.items():
        source = shots / ann.source.note.rsplit(" of ", 1)[1]  # type: ignore[union-attr]
        with Image.open(source) as img:
            observed = observer.observe(img.convert("RGB")).elements
            assert (ann.width, ann.height) == img.size
        # The labels are the observer's elements, less those no label may have, empty texts as none.
        want = [(e.type, tuple(e.bbox), e.text if e.text and e.text.strip() else None)
                for e in observed if e.type in DETECTOR_CLASSES]
        assert [(e.type, tuple(e.bbox), e.text) for e in ann.elements] == want
        assert ann.elements and all(e.type in DETECTOR_CLASSES for e in ann.elements)
        assert ann.source.kind == "prelabel" and models.version in (ann.source.note or "")

        task = next(t for t in tasks if t["data"]["caap_label"] == rel)
        assert task["data"]["image"] == f"http://127.0.0.1:8081/{ann.image}"
        [prediction] = task["predictions"]
        assert prediction["model_version"] == models.version
        assert models.version.startswith("caap-yolov8n-any.pt@") and "+reader@" in models.version
        rects = [x for x in prediction["result"] if x["type"] == "rectanglelabels"]
        assert len(rects) == len(ann.elements)
        for rect, element in zip(rects, ann.elements, strict=True):
            v = rect["value"]
            assert v["x"] >= 0 and v["y"] >= 0 and v["width"] > 0 and v["height"] > 0
            assert v["x"] + v["width"] <= 100 + 1e-9 and v["y"] + v["height"] <= 100 + 1e-9
            assert v["x"] == pytest.approx(element.bbox[0] * 100 / ann.width)
            assert v["rectanglelabels"] == [element.type.value]
        assert any(0 < x.get("score", 0) <= 1 for x in rects)
        shown = [x["value"]["text"][0] for x in prediction["result"] if x["from_name"] == "text"]
        assert shown == [e.text for e in ann.elements if e.text is not None]
        assert shown  # every one of these screens has text
    assert sum(len(a.elements) for a in items.values()) > 10

    # The rest of the toolchain works on it.
    tmp = out.parent
    for args in (["dataset", "report", str(out)], ["dataset", "export-yolo", str(out), str(tmp / "yolo")],
                 ["dataset", "export-labelstudio", str(out), "--out", str(tmp / "again.json")]):
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output


# --- a real Label Studio -------------------------------------------------------------------------

@pytest.mark.slow
def test_label_studio_round_trip_of_prelabels(prelabelled: dict[str, Any], tmp_path: Path,
                                             label_studio: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Import the prelabel tasks into a real Label Studio, correct one screenshot as a person would
    (accept the prediction, fix one text, delete one region), export, import-labelstudio into the
    prelabelled dataset: the correction lands and nothing else changes."""
    from label_studio_sdk import LabelStudio

    assert prelabelled["result"].exit_code == 0, prelabelled["result"].output
    started = time.monotonic()
    ds_root = tmp_path / "dataset"
    shutil.copytree(prelabelled["out"], ds_root)
    tasks_path = tmp_path / "tasks.json"  # local-files URLs this time, as a person would use them
    r = runner.invoke(app, ["dataset", "prelabel", str(prelabelled["shots"]), "--out", str(ds_root), "--append",
                            "--tasks", str(tasks_path)])
    assert r.exit_code == 0 and "4 already in the dataset" in " ".join(r.output.split()), r.output
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    before = label_texts(ds_root)
    target = f"labels/my-screens/{Path(REAL_SCREENS[0]).stem}.json"
    original = Dataset(ds_root).load(ds_root / target)

    with label_studio.running(ds_root, tmp_path / "ls-data") as server:
        client = LabelStudio(base_url=server.url, api_key=server.token)
        project = client.projects.create(title="caap prelabel", label_config=labeling_config())
        client.import_storage.local.create(project=project.id, path=str(ds_root / "images"), title="caap images")
        imported = client.projects.import_tasks(project.id, request=tasks, return_task_ids=True)
        assert imported.task_count == 4 and imported.prediction_count == 4

        by_label = {t.data["caap_label"]: t for t in client.tasks.list(project=project.id, fields="all")}
        assert set(by_label) == set(before)
        full = client.tasks.get(id=str(by_label[target].id))
        [prediction] = full.predictions
        assert prediction.model_version == tasks[0]["predictions"][0]["model_version"]
        assert 0 < prediction.score <= 1
        result = copy.deepcopy(prediction.result)
        region_ids = list(dict.fromkeys(x["id"] for x in result))
        assert len(region_ids) == len(original.elements)
        # The person: fixes the first text, deletes the last region, submits.
        text_index = next(i for i, e in enumerate(original.elements) if e.text)
        gone_index = len(original.elements) - 1
        assert gone_index != text_index
        for x in result:
            if x["id"] == region_ids[text_index] and x["from_name"] == "text":
                x["value"]["text"] = ["Corrected by hand"]
        result = [x for x in result if x["id"] != region_ids[gone_index]]
        client.annotations.create(id=full.id, result=result, parent_prediction=prediction.id, lead_time=6.0)

        data = b"".join(client.projects.exports.download_sync(project.id, export_type="JSON", download_all_tasks=True))
        export_path = tmp_path / "export.json"
        export_path.write_bytes(data)
    assert server.proc.poll() is not None

    r = runner.invoke(app, ["dataset", "import-labelstudio", str(export_path), str(ds_root)])
    assert r.exit_code == 0 and "1 annotations imported" in r.output, r.output
    after = label_texts(ds_root)
    assert {k for k in after if after[k] != before[k]} == {target}
    corrected = Dataset(ds_root).load(ds_root / target)
    want = list(original.elements)
    want[text_index] = want[text_index].model_copy(update={"text": "Corrected by hand"})
    del want[gone_index]
    assert corrected.elements == want
    assert corrected.model_copy(update={"elements": []}) == original.model_copy(update={"elements": []})
    with capsys.disabled():
        print(f"\n[label studio prelabel] install {label_studio.install_s:.1f}s, server start "
              f"{label_studio.start_s:.1f}s, test {time.monotonic() - started:.1f}s")
