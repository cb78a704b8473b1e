"""Combining the raw tables of earlier runs of the realistic study into one study."""

from __future__ import annotations

import csv
import gzip
import math
import re
from pathlib import Path

from ...errors import InvalidInputError
from .data import DatasetError
from .methods import RAW_TABLES, TABLES
from .policies import STRATEGIES
from .study import RealisticStudy

__all__ = ["merge_runs"]


def _read_raw(path: Path, columns) -> list:
    """The rows of one raw table written by :meth:`RealisticStudy.write` (plain or gzip)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != tuple(columns):
                raise DatasetError(f"{path}: columns {reader.fieldnames} are not {', '.join(columns)}")
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    rows.append({c: (row[c] if c in ("strategy", columns[3])
                                     else int(row[c]) if c in ("dataset", "replicate") else float(row[c]))
                                 for c in columns})
                except (TypeError, ValueError):
                    raise DatasetError(f"{path}, line {line}: malformed row {row}") from None
    except (OSError, EOFError, gzip.BadGzipFile, csv.Error) as exc:
        raise DatasetError(f"{path}: cannot be read ({exc})") from None
    return rows


def _policy_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


_REFITS = re.compile(r"^\* Learning fits whose fast path failed \(refit with `method=\"auto\"`\): (\d+);")


def _run_provenance(folder: Path) -> tuple:
    """(command, set-up line, learning refits or None) from the summary.md a run wrote.

    The refit total is read from the summary because ``policies.csv`` counted only the first
    chunk of runs of each (dataset, strategy) before commit 26a43be.
    """
    path = folder / "summary.md"
    command = setup = ""
    refits = None
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("Command: `") and line.endswith("`"):
                command = line[len("Command: `"):-1]
            elif line.startswith("* Seed ") or line.startswith("* Merged from "):
                setup = line[2:].split("; paired t-tests")[0]
            elif match := _REFITS.match(line):
                refits = int(match.group(1))
    return command, setup, refits


def merge_runs(folders) -> RealisticStudy:
    """Combine the raw tables of earlier runs into one study, as if it had been run at once.

    A paper-size run can be split by ``--strategies`` or ``--datasets`` over sessions or
    machines: every (dataset, strategy, replicate) has its own random stream, so the parts'
    rows are exactly the rows of a single run with the same seed. Each folder is the ``--out``
    of a run (raw tables plain or gzip-compressed). A row present in two parts must be equal in
    both; every (dataset, strategy) of a table must have the same replicates ``0..R-1``; the
    parts' seeds (read from their ``summary.md``) must agree. Raises :class:`DatasetError`
    naming the file and row otherwise.
    """
    folders = list(dict.fromkeys(Path(f) for f in folders))  # a folder named twice is one run
    if not folders:
        raise InvalidInputError("merge: no run folders given")
    tables: dict[str, dict[tuple, dict]] = {attr: {} for attr, _ in RAW_TABLES.values()}
    policies: dict[tuple, dict] = {}
    parts, seeds = [], set()
    refits = 0
    for folder in folders:
        if not folder.is_dir():
            raise DatasetError(f"{folder}: run folder does not exist")
        found = False
        for name, (attr, cols) in RAW_TABLES.items():
            path = next((p for p in (folder / name, folder / (name + ".gz")) if p.is_file()), None)
            if path is None:
                continue
            found = True
            for row in _read_raw(path, cols):
                key = tuple(row[c] for c in cols[:4])
                old = tables[attr].setdefault(key, row)
                same = all(old[c] == row[c] or (math.isnan(old[c]) and math.isnan(row[c])) for c in cols[4:])
                if not same:
                    raise DatasetError(f"{path}: the row {dict(zip(cols[:4], key))} differs from the "
                                       "same row of an earlier folder (different seeds or code?)")
        if not found:
            raise DatasetError(f"{folder}: no {', '.join(RAW_TABLES)} (plain or .gz) to merge")
        pol = folder / "policies.csv"
        part_policies = []
        if pol.is_file():
            with open(pol, newline="", encoding="utf-8") as fh:
                part_policies = [{k: _policy_value(v) for k, v in row.items() if v != ""}
                                 for row in csv.DictReader(fh)]
        for row in part_policies:
            policies.setdefault((row["table"], row["dataset"], row["strategy"]), row)
        command, setup, part_refits = _run_provenance(folder)
        if part_refits is None:
            part_refits = sum(p.get("fit_fallbacks", 0) for p in part_policies if p["table"] == "learning")
        refits += part_refits
        seed = re.search(r"--seed (\d+)", command)
        if seed:
            seeds.add(int(seed.group(1)))
        parts.append((str(folder), command, setup))
    if len(seeds) > 1:
        raise DatasetError(f"merge: the runs used different seeds {sorted(seeds)}")
    counts: dict[str, int] = {}
    for name, (attr, cols) in RAW_TABLES.items():
        groups: dict[tuple, set[int]] = {}
        for d, s, rep, _ in tables[attr]:
            groups.setdefault((d, s), set()).add(rep)
        shapes: dict[int, tuple] = {}
        for (d, s), reps in groups.items():
            if reps != set(range(len(reps))):
                raise DatasetError(f"{name}: dataset {d}, {s} has replicates {sorted(reps)}, not 0..R-1")
            shapes.setdefault(len(reps), (d, s))
        if len(shapes) > 1:
            (r1, g1), (r2, g2) = list(shapes.items())[:2]
            raise DatasetError(f"{name}: dataset {g1[0]}, {g1[1]} has {r1} replicates but dataset "
                               f"{g2[0]}, {g2[1]} has {r2}; merge runs made with the same replicate counts")
        counts[attr] = next(iter(shapes), 0)
    rows = {attr: list(t.values()) for attr, t in tables.items()}
    every = [r for t in rows.values() for r in t]
    known = {s: i for i, s in enumerate(STRATEGIES)}
    strategies = sorted({r["strategy"] for r in every}, key=lambda s: (known.get(s, len(known)), s))
    st = RealisticStudy(datasets=sorted({r["dataset"] for r in every}), strategies=tuple(strategies),
                        tables=tuple(t for t, a in zip(TABLES, ("ope", "intervals", "learning")) if rows[a]),
                        replicates=counts["ope"] or counts["intervals"],
                        learning_replicates=counts["learning"], seed=seeds.pop() if seeds else None,
                        ope=rows["ope"], intervals=rows["intervals"], learning=rows["learning"],
                        policies=list(policies.values()), parts=parts)
    st.fit_fallbacks = refits
    st.sort()
    return st

