"""A directory of demonstrations and the top-k most similar to a task (Okapi BM25 over task text).

BM25 needs no model and no download; the terms that make tasks alike ("select", "submit",
"checkbox") weigh in, and the values that differ between instances of one family ("EiTE") simply
find no match. A demonstration whose ``family`` equals the task's family gets a fixed bonus so an
exact family match ranks first when the caller knows the family.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from caap.decide.demos import Demonstration, load_demos
from caap.memory.families import words

K1, B = 1.5, 0.75
FAMILY_BONUS = 100.0


class DemoStore:
    """Demonstrations loaded once from files or directories (recursively: ``**/*.json``)."""

    def __init__(self, demos: Sequence[Demonstration]) -> None:
        self.demos = list(demos)
        self._docs = [Counter(words(d.task)) for d in self.demos]
        self._lengths = [sum(c.values()) for c in self._docs]
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    @classmethod
    def load(cls, paths: Sequence[str | Path]) -> DemoStore:
        """Files, or directories searched recursively; a broken file is a DemoFileError naming it."""
        files: list[Path] = []
        for p in map(Path, paths):
            files.extend(sorted(p.rglob("*.json")) if p.is_dir() else [p])
        return cls(load_demos(files))

    def __len__(self) -> int:
        return len(self.demos)

    def scores(self, task: str, family: str | None = None) -> list[float]:
        query = words(task)
        out = []
        for doc, length, demo in zip(self._docs, self._lengths, self.demos, strict=True):
            s = 0.0
            for term in set(query):
                f = doc.get(term, 0)
                if f:
                    s += self._idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / (self._avg or 1)))
            if family and demo.family == family:
                s += FAMILY_BONUS
            out.append(s)
        return out

    def top_k(self, task: str, k: int, *, family: str | None = None,
              exclude_task: bool = False) -> list[Demonstration]:
        """The ``k`` best matches with a positive score, best first (ties: the shorter demonstration,
        then file order). ``exclude_task`` drops demonstrations of exactly this task text (so a
        benchmark never shows the model the answer to the episode it is running)."""
        if k <= 0 or not self.demos:
            return []
        scores = self.scores(task, family)
        keep = [i for i, s in enumerate(scores)
                if s > 0 and not (exclude_task and self.demos[i].task.strip() == task.strip())]
        keep.sort(key=lambda i: (-scores[i], len(self.demos[i].steps), i))
        return [self.demos[i] for i in keep[:k]]
