"""Write results/README.md: an index of the current result files under results/.

Every file under results/ is listed with its folder, a one-line description and, for JSON files of
a known shape, its key numbers:

- `caap eval reader` output: screens, elements, the default text's exact match, record exact, and
  with a detector the share of labelled elements found (matched / labelled);
- `caap eval detector` output: precision, recall, mAP50 and mAP50-95;
- `caap bench miniwob` summary: the overall success rate.

results/archive/ (superseded results) is not listed; one line gives its file count. The output is
deterministic (sorted, no dates), so a rerun on unchanged files changes nothing.

    .venv/bin/python tools/results_index.py            # write results/README.md
    .venv/bin/python tools/results_index.py --check    # exit 1 if results/README.md is out of date
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ".venv/bin/python tools/results_index.py"
ARCHIVE = "archive"
INDEX = "README.md"

# (pattern on the path relative to results/, description); the first match wins.
DESCRIPTIONS: tuple[tuple[str, str], ...] = (
    ("any-application/reader-s41-mw67-shipped-now.json",
     "Whole observer, shipped reader + any-application detector, MiniWoB-67 test seeds (`caap eval reader`)"),
    ("any-application/reader-s41-outside.json",
     "Whole observer, shipped reader + any-application detector, MiniWoB++ tasks outside the 67 (reserved)"),
    ("any-application/reader-stop50-desktop.json",
     "Whole observer at stop 50 (keys, check marks, focus rings), the 11 reserved desktop apps: per state with its "
     "majority baseline, per toolkit (measured once)"),
    ("observer/desktop-val-stop50.json",
     "Whole observer at stop 50, desktop-val (training apps' validation screens): per state, per app and toolkit"),
    ("any-application/reader-s41-desktop.json",
     "Whole observer, shipped reader + any-application detector, the 11 reserved desktop apps"),
    ("any-application/reader-s41-bench.json",
     "Vision benchmark with the shipped reader: 67 tasks × seeds 0-1, scripted planner (`caap bench miniwob`)"),
    ("any-application/reader-s41-bench-spinner.json",
     "Vision benchmark with the shipped reader: use-spinner, seeds 0-9"),
    ("any-application/reader-*-train-*.jsonl",
     "Validation log of the reader fine-tune averaged into the shipped reader (one line per evaluation)"),
    ("any-application/miniwob-test-any-stop*.json",
     "Whole observer, any-application detector with its latest rules (reader of that time), MiniWoB-67 test seeds"),
    ("any-application/outside-any-stop*.json",
     "Whole observer, any-application detector with its latest rules (reader of that time), outside the 67"),
    ("any-application/desktop-any-stop*.json",
     "Whole observer, any-application detector with its latest rules (reader of that time), reserved desktop apps"),
    ("any-application/bench-vision-stop*.json",
     "Vision benchmark, 67 tasks × seeds 0-1, scripted planner, with the detector's latest rules"),
    ("any-application/miniwob-test-any-stage*.json",
     "Any-application detector alone (`caap eval detector`), MiniWoB-67 test seeds"),
    ("any-application/desktop-detector-stage*.json",
     "Any-application detector alone (`caap eval detector`), reserved desktop apps (labels before the last fix)"),
    ("any-application/outside-shipped.json",
     "Whole observer with the MiniWoB-only detector, outside the 67 (measured when it was the default)"),
    ("any-application/desktop-shipped.json",
     "Whole observer with the MiniWoB-only detector, reserved desktop apps (measured when it was the default)"),
    ("any-application/miniwob-outside-67.md",
     "Per task: found and texts read exactly on the MiniWoB++ tasks outside the 67"),
    ("any-application/reserved-desktop-apps.md",
     "Per app: found and texts read exactly on the reserved desktop apps"),
    ("any-application/screens/*.png",
     "1080p screenshot timed by `caap bench observe results/any-application/screens`"),
    ("observer/pipeline.md", "The observer as a pipeline of named steps: its output checksums and speed before and "
                             "after, and the time of every step on MiniWoB and 1080p screens"),
    ("desktop/README.md", "The desktop benchmark's measured runs: oracle and vision per set and seed range, replays, "
                          "per-task tables"),
    ("desktop/FAILURES.md", "Why desktop episodes fail with vision where the oracle's succeed: every traced cause, "
                            "and the fixes"),
    ("desktop/compare-*.md", "Vision against oracle per reserved task on held-out seeds (written by `caap report`)"),
    ("desktop/reserved-oracle-*.json", "Accessibility oracle on the reserved tasks, held-out seeds "
                                       "(`caap bench desktop --observer oracle`)"),
    ("desktop/reserved-vision-*-first.json", "Vision on the reserved tasks, held-out seeds: the first measurement, "
                                             "before any reserved trace was read"),
    ("desktop/reserved-vision-*.json", "Vision on the reserved tasks, held-out seeds (`caap bench desktop`)"),
    ("desktop/reserved-replay-*.json", "The saved tests of the solved reserved episodes replayed without an LLM "
                                       "(`--replay`)"),
    ("desktop/training-*.json", "The training tasks on development seeds 0-2 (`caap bench desktop --tasks training`)"),
    ("observer/key-glyphs.json", "Calculator keys drawn here (one glyph, 7-14 px, flat and shaded faces) read by the "
                                 "reader, PP-OCR and the observer (`tools/key_glyphs.py`)"),
    ("observer/states-and-keys.md", "Validation A/B of read_control_marks and the key reading on desktop-val and "
                                    "MiniWoB val"),
    ("observer/stop*-dump-ab-*.json", "The whole observer before and after a stop's changes on validation screens of "
                                      "training apps, from per-screen dumps (`tools/observer_dump.py compare`): "
                                      "found, texts exact, every text put right or wrong and (since stop 68) each "
                                      "state per toolkit"),
    ("observer/*-ab-*.json", "States read on the same detected boxes of labelled screens by the reader, the reader "
                             "with the pixel rules, and the state head, per state and toolkit (`tools/state_ab.py`)"),
    ("observer/stop*-reserved-*-observer.json", "The previous stop's observer on this stop's reserved desktop screens "
                                                "(`caap eval reader --detector`), for the before and after"),
    ("observer/stop*-reserved-*.json", "Whole observer on the reserved desktop apps (`caap eval reader --detector`), "
                                       "measured once at the end of the stop"),
    ("observer/stop*-val-*.json", "Whole observer on validation screens of training apps (`caap eval reader "
                                  "--detector`), the set named in the file"),
    ("observer/stop*-miniwob-test-stop*.json",
     "The previous stop's observer on the MiniWoB-67 test screens (seeds 0-999, `caap eval reader --detector`, "
     "the MiniWoB detector), for the before and after"),
    ("observer/stop*-miniwob-test*.json",
     "Whole observer on the MiniWoB-67 test screens (seeds 0-999, `caap eval reader --detector`, the MiniWoB "
     "detector), measured once at the end of the stop"),
    ("observer/stop*-bench-67-*.json", "MiniWoB benchmark, 67 tasks, scripted planner (`caap bench miniwob`); "
                                       "the seeds and the observer are the run's own"),
    ("observer/stop*-bench-desktop-*.json", "Desktop benchmark, training tasks × seeds 0-2, scripted planner "
                                            "(`caap bench desktop`)"),
    ("observer/stop*-found-misses-*.json", "The labelled elements no detected box matches, by type, app and nearest "
                                           "box (`tools/found_misses.py`)"),
    ("any-application/detector-*-val8.json", "Any-application detector alone (`caap eval detector`) on validation "
                                             "screens: training apps' held-back seeds or MiniWoB seeds 2800-2999"),
    ("miniwob-67/README.md", "Vision against oracle per task, 67 tasks × seeds 0-19 (written by `caap report`)"),
    ("miniwob-67/FAILURES.md", "Why vision episodes fail where the oracle's succeed, cause by cause"),
    ("miniwob-67/compare.html", "Vision against oracle as an HTML report (`caap report`)"),
)

FILE_TYPES = {".json": "JSON", ".jsonl": "JSON Lines", ".md": "Markdown", ".html": "HTML", ".png": "PNG image",
              ".csv": "CSV", ".log": "log"}


def describe(relative: str) -> str:
    """The table's description for a path relative to results/, or the file type."""
    for pattern, text in DESCRIPTIONS:
        if fnmatchcase(relative, pattern):
            return text
    suffix = Path(relative).suffix.lower()
    return f"{FILE_TYPES.get(suffix, suffix.lstrip('.').upper() or 'untyped')} file"


def fmt(value: Any) -> str:
    """A number as the result files write it; anything else as text."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def reader_numbers(data: dict[str, Any]) -> list[str]:
    """Key numbers of a `caap eval reader` result."""
    parts = [f"screens {fmt(data['screens'])}", f"elements read {fmt(data['elements'])}"]
    default = data.get("text", {}).get("default", {})
    if "exact_match" in default:
        parts.append(f"text exact {fmt(default['exact_match'])}")
    if "record_exact" in data:
        parts.append(f"record exact {fmt(data['record_exact'])}")
    detection = data.get("detection") or {}
    if detection.get("labelled"):
        share = detection["matched"] / detection["labelled"]
        parts.append(f"found {share:.4f} ({fmt(detection['matched'])}/{fmt(detection['labelled'])})")
    return parts


def detector_numbers(data: dict[str, Any]) -> list[str]:
    """Key numbers of a `caap eval detector` result: its precision, recall and mAP fields."""
    overall = data.get("overall") or {}
    parts = [f"images {fmt(data['images'])}"] if "images" in data else []
    parts += [f"elements {fmt(data['elements'])}"] if "elements" in data else []
    for key, name in (("precision", "P"), ("recall", "R")):
        value = data.get(key, overall.get(key))
        if value is not None:
            parts.append(f"{name} {fmt(value)}")
    for key, name in (("map50", "mAP50"), ("map50_95", "mAP50-95")):
        if data.get(key) is not None:
            parts.append(f"{name} {fmt(data[key])}")
    return parts


def bench_numbers(data: dict[str, Any]) -> list[str]:
    """Key numbers of a `caap bench` summary."""
    overall = data["overall"]
    tasks = len(data.get("tasks", {}))
    episodes = f"{fmt(overall.get('successes'))}/{fmt(overall.get('episodes'))} episodes"
    config = data.get("config") or {}
    # Which seeds and eyes each number comes from, from the run itself (development seeds 4000-4999
    # and test seeds 0-999 are kept apart: ../shared/DESIGN.md §6).
    run = [f"seeds {config['seeds']}"] if config.get("seeds") else []
    run += [f"observer {config['observer']}"] if config.get("observer") else []
    return [f"success {fmt(overall['success_rate'])} ({episodes}, {tasks} task{'' if tasks == 1 else 's'})", *run]


def json_numbers(path: Path) -> list[str]:
    """Key numbers of a JSON result of a known shape; none for any other JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return ["not readable as JSON"]
    if not isinstance(data, dict):
        return []
    if "checkpoint" in data and "screens" in data and "text" in data:
        return reader_numbers(data)
    if "weights" in data and ("overall" in data or "map50" in data):
        return detector_numbers(data)
    if isinstance(data.get("overall"), dict) and "success_rate" in data["overall"]:
        return bench_numbers(data)
    return []


def jsonl_numbers(path: Path) -> list[str]:
    """Line count of a JSON Lines file and, for training logs, the best validation text exact."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    parts = [f"{len(lines)} lines"]
    scores = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("text_exact"), int | float):
            scores.append(record["text_exact"])
    if scores:
        parts.append(f"best text exact {fmt(max(scores))}")
    return parts


def png_numbers(path: Path) -> list[str]:
    """Width × height of a PNG, read from its header."""
    with path.open("rb") as handle:
        head = handle.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return []
    width, height = struct.unpack(">II", head[16:24])
    return [f"{width}×{height} px"]


def key_numbers(path: Path) -> str:
    """The key numbers of one file, joined for a table cell."""
    readers = {".json": json_numbers, ".jsonl": jsonl_numbers, ".png": png_numbers}
    reader = readers.get(path.suffix.lower())
    return " · ".join(reader(path)) if reader else ""


def current_files(results: Path) -> list[Path]:
    """Every file under results/ outside the archive, except the index itself, sorted."""
    return sorted(
        path for path in results.rglob("*")
        if path.is_file()
        and path.relative_to(results).parts[0] != ARCHIVE
        and path.relative_to(results).as_posix() != INDEX
    )


def render(results: Path) -> str:
    """The index page's Markdown."""
    rows = []
    for path in current_files(results):
        relative = path.relative_to(results).as_posix()
        folder = path.parent.relative_to(results).as_posix()
        link = f"[{path.name}]({relative})"
        rows.append(f"| `{folder}/` | {link} | {describe(relative)} | {key_numbers(path)} |")
    archive = results / ARCHIVE
    archived = sum(1 for path in archive.rglob("*") if path.is_file()) if archive.is_dir() else 0
    lines = [
        "# results/",
        "",
        f"<!-- Generated by `{COMMAND}`; do not edit by hand. -->",
        "",
        f"Generated by `{COMMAND}` from the files under `results/`:",
        "edit the script's descriptions, not this page. Each current result file with its folder, what",
        "it is and, for JSON results of a known shape, its key numbers (reader: default text exact",
        "match, record exact, share of labelled elements found; detector: precision, recall, mAP;",
        "benchmark: success rate).",
        "",
        "| folder | file | description | key numbers |",
        "|---|---|---|---|",
        *rows,
        "",
        f"[`{ARCHIVE}/`]({ARCHIVE}/): {archived} superseded files (older per-stop and per-stage results, and the",
        "older sections of the pages above), not listed here.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="the results folder")
    parser.add_argument("--check", action="store_true", help="only check that the index is up to date")
    args = parser.parse_args()
    results: Path = args.results
    page = render(results)
    target = results / INDEX
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != page:
            print(f"{target} is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    target.write_text(page, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
