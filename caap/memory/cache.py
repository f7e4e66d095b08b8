"""The action cache (after Steward): (screen identity, intended step) → the actions taken there,
with each target element described by type, text and box instead of an id.

Key = hash of the task text, the screen's identity and the actions taken so far in the episode.
The screen's identity is the multiset of (type, folded text, checked, subtype) of its elements:
order and exact pixel positions are left out, because a detector's boxes move by a pixel between
two captures of the same screen; where the elements sit is recovered at use time, when each cached
element is found again on the current screen (``caap.observe.grounding.locate``). A hit runs the
cached actions without calling the LLM.

What gets cached: the actions of an episode are held back until it ends and stored only if it
succeeded, so a wrong action is never replayed. One key keeps up to ``max_variants`` variants (the
same content laid out differently); a hit needs every element of a variant found again, otherwise
it is a miss. An episode that used a cached variant and then failed drops that variant.
The file is JSON, written atomically, bounded to ``max_entries`` (least recently used go first).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caap.act.actions import ActionError, PlannedAction, ScreenState, plan
from caap.elements import Element
from caap.memory.files import locked, write_atomic
from caap.memory.trajectory import signatures
from caap.observe.grounding import fold, locate
from caap.records import ActionRecord

CACHE_VERSION = 2


class CacheError(RuntimeError):
    """The cache file cannot be read or written; the message names it."""


def screen_identity(elements: Sequence[Element]) -> list[tuple[str, str, Any, Any]]:
    return sorted((e.type.value, fold(e.text), e.checked, e.subtype) for e in elements if e.visible)


def cache_key(task: str, elements: Sequence[Element], history: Sequence[ActionRecord]) -> str:
    """``history``: the actions done so far."""
    blob = json.dumps([fold(task), screen_identity(elements), [list(s) for s in signatures(history)]],
                      ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def _stored(action: PlannedAction) -> dict[str, Any]:
    args = {k: v for k, v in action.args.items() if k != "element_id"}
    return {"name": action.name, "args": args, "element": action.element.to_json() if action.element else None}


class ActionCache:
    def __init__(self, path: str | Path, *, max_entries: int = 2000, max_variants: int = 8) -> None:
        self.path = Path(path)
        self.max_entries, self.max_variants = max_entries, max_variants
        self.entries: dict[str, dict[str, Any]] = {}
        self.pending: list[tuple[str, dict[str, Any]]] = []
        self.used: list[tuple[str, list[dict[str, Any]]]] = []  # (key, variant) hit in this episode
        self.lookups = self.hits = 0
        self._changed: set[str] = set()  # keys this process stored or dropped, merged into the file on save
        self.entries = self._read()

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("version") != CACHE_VERSION \
                    or not isinstance(data.get("entries"), dict):
                raise ValueError(f"not a version-{CACHE_VERSION} caap action cache")
            return data["entries"]
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CacheError(f"{self.path}: unreadable action cache ({exc}); delete it to start afresh") from None

    # --- use ------------------------------------------------------------------------------------
    @staticmethod
    def _bind(actions: list[dict[str, Any]], elements: Sequence[Element], width: int,
              height: int) -> list[PlannedAction] | None:
        screen = ScreenState(list(elements), width, height)
        planned: list[PlannedAction] = []
        try:
            for item in actions:
                args = dict(item.get("args") or {})
                if item.get("element"):
                    found = locate(Element.model_validate(item["element"]), elements, screen_size=(width, height))
                    if found is None or found.element.id is None:
                        return None
                    args["element_id"] = found.element.id
                planned.append(plan(item["name"], args, screen))
        except (ActionError, ValueError, KeyError, TypeError):
            return None
        return planned

    def lookup(self, key: str, elements: Sequence[Element], width: int, height: int) -> list[PlannedAction] | None:
        """The cached actions bound to the current screen, or None (a miss). One key can hold
        several variants (the same screen content laid out differently: a button that moves
        between instances of a task); the most recently used one whose elements are all found
        again wins."""
        self.lookups += 1
        entry = self.entries.get(key)
        if entry is None:
            return None
        for variant in sorted(entry["variants"], key=lambda v: v.get("last_used", 0), reverse=True):
            planned = self._bind(variant["actions"], elements, width, height)
            if planned is not None:
                variant["last_used"] = time.time()
                variant["hits"] = int(variant.get("hits", 0)) + 1
                self.hits += 1
                self.used.append((key, variant["actions"]))
                self._changed.add(key)
                return planned
        return None

    def note(self, key: str, task: str, actions: Sequence[PlannedAction], family: str | None = None) -> None:
        """Actions the LLM chose on this screen; stored by ``end_episode(success=True)``."""
        if actions:
            self.pending.append((key, {"task": task, "family": family, "actions": [_stored(a) for a in actions]}))

    def end_episode(self, success: bool) -> None:
        """Store the held-back actions of a successful episode (as a new variant of their key, the
        least recently used beyond ``max_variants`` dropped); after a failure, forget them and drop
        the cached variants the episode used (they led somewhere wrong). Saves the file."""
        now = time.time()
        if success:
            for key, new in self.pending:
                entry = self.entries.setdefault(key, {"task": new["task"], "family": new["family"], "variants": []})
                variants = [v for v in entry["variants"] if v["actions"] != new["actions"]]
                variants.append({"actions": new["actions"], "stored": now, "last_used": now, "hits": 0})
                variants.sort(key=lambda v: v.get("last_used", 0), reverse=True)
                entry["variants"] = variants[: self.max_variants]
                self._changed.add(key)
        else:
            for key, actions in self.used:
                used = self.entries.get(key)
                if used is not None:
                    used["variants"] = [v for v in used["variants"] if v["actions"] != actions]
                    if not used["variants"]:
                        del self.entries[key]
                self._changed.add(key)
        self.pending, self.used = [], []
        self.save()

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.lookups if self.lookups else None

    def save(self) -> None:
        """Merge this process's changes into the file (other processes may have added entries since
        it was read) and write it; then this process sees theirs too."""
        try:
            with locked(self.path):
                merged = self._read()
                for key in self._changed:
                    if key in self.entries:
                        merged[key] = self.entries[key]
                    else:
                        merged.pop(key, None)
                if len(merged) > self.max_entries:
                    keep = sorted(merged.items(), reverse=True,
                                  key=lambda kv: max((v.get("last_used", 0) for v in kv[1]["variants"]), default=0))
                    merged = dict(keep[: self.max_entries])
                write_atomic(self.path, json.dumps({"version": CACHE_VERSION, "entries": merged},
                                                   ensure_ascii=False))
        except OSError as exc:
            raise CacheError(f"{self.path}: cannot write the action cache ({exc})") from None
        self.entries, self._changed = merged, set()
