"""The paper's prompt ablations (CAAP, Table 5): what each switches off, and the column of the
paper's results it is compared with. The benchmark, its CLI and the report all read this table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ablation:
    demonstrations: bool
    rationales: bool
    cot: bool
    paper_column: str  # in caap/bench/data/caap-paper-results.tsv


ABLATIONS: dict[str, Ablation] = {
    "none": Ablation(True, True, True, "full"),
    "no-demos": Ablation(False, True, True, "cot_without_demo"),
    "no-rationales": Ablation(True, False, True, "cot_with_action_only_demo"),
    "no-cot": Ablation(True, True, False, "demo_without_cot"),
    "no-cot-no-demos": Ablation(False, True, False, "no_cot_no_demo"),
}
