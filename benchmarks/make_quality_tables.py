#!/usr/bin/env python3
"""Two tables the product has never seen, for bench_quality.py: generated, seeded, deterministic.

    .venv/bin/python benchmarks/make_quality_tables.py [--out var/quality] [--seed 14]

- ``hospital_admissions.csv`` (5,000 rows): age (right-skewed towards the elderly, 0-102), sex, a
  5-digit postcode (integer), admission date (dd/mm/yyyy over 2019-2023), length of stay in days
  (log-normal: most stays 1-5 days, a long tail past 100), total charges (log-normal, blanks), ward,
  diagnosis (sensitive). About 5% of ages, 3% of lengths of stay and 4% of wards are blank, a few
  are written NA or ``?``.
- ``survey.csv`` (944 rows, as the issue's survey microdata): age, education (a ladder of 7 levels in
  words), household income (log-normal, 6% "N/A"), region, interview date (ISO), employment (a ladder),
  and two Likert answers (trust in government: sensitive; satisfaction with life). 3% of educations
  are blank.

The tables are written with numpy's PCG64 from ``--seed``: the same seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
WARDS = ["Cardiology", "Oncology", "Orthopaedics", "Maternity", "Paediatrics", "Geriatrics", "Neurology",
         "General surgery", "Respiratory", "Emergency"]
DIAGNOSES = ["I21 myocardial infarction", "J18 pneumonia", "S72 femur fracture", "O80 delivery",
             "C50 breast cancer", "E11 diabetes", "I63 stroke", "K35 appendicitis", "N39 urinary infection",
             "F32 depression", "J44 COPD", "I50 heart failure"]
EDUCATION = ["No schooling", "Primary school", "Lower secondary", "Upper secondary", "Bachelor's degree",
             "Master's degree", "Doctorate"]
EMPLOYMENT = ["Unemployed", "Part-time", "Full-time", "Retired"]
LIKERT = ["Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"]
REGIONS = ["North", "North East", "North West", "Midlands", "East", "London", "South East", "South West",
           "Wales", "Scotland"]


def blank(rng: np.random.Generator, values: list[str], share: float, markers=("",)) -> list[str]:
    """``share`` of the cells blanked (each written as one of ``markers``)."""
    hit = rng.random(len(values)) < share
    which = rng.integers(0, len(markers), len(values))
    return [markers[w] if h else v for v, h, w in zip(values, hit, which)]


def hospital(rng: np.random.Generator, n: int = 5000) -> tuple[list[str], list[list[str]]]:
    age = np.clip(np.round(100 - rng.gamma(2.2, 14.0, n)), 0, 102).astype(int)  # skewed to the old
    sex = rng.choice(["F", "M"], n, p=[0.52, 0.48])
    postcode = rng.choice(np.arange(10000, 10000 + 60 * 37, 37), n)  # 60 postcodes, uneven use
    start = dt.date(2019, 1, 1)
    days = rng.integers(0, (dt.date(2023, 12, 31) - start).days + 1, n)
    admitted = [(start + dt.timedelta(days=int(d))).strftime("%d/%m/%Y") for d in days]
    stay = np.maximum(1, np.round(rng.lognormal(1.1, 0.9, n))).astype(int)
    charges = np.round(rng.lognormal(8.2, 1.0, n), 2)
    ward = rng.choice(WARDS, n, p=np.array([9, 7, 8, 10, 6, 12, 5, 14, 9, 20]) / 100)
    diagnosis = rng.choice(DIAGNOSES, n)
    columns = ["age", "sex", "postcode", "admission_date", "length_of_stay", "charges", "ward", "diagnosis"]
    cols = [
        blank(rng, [str(a) for a in age], 0.05, ("", "", "", "NA")),
        list(sex),
        [str(p) for p in postcode],
        admitted,
        blank(rng, [str(s) for s in stay], 0.03, ("", "?")),
        blank(rng, [f"{c:.2f}" for c in charges], 0.04),
        blank(rng, list(ward), 0.04),
        list(diagnosis),
    ]
    return columns, [list(r) for r in zip(*cols)]


def survey(rng: np.random.Generator, n: int = 944) -> tuple[list[str], list[list[str]]]:
    age = np.clip(np.round(rng.normal(47, 17, n)), 18, 95).astype(int)
    edu_level = np.clip(np.round(rng.normal(3.2, 1.3, n)), 0, 6).astype(int)
    education = [EDUCATION[e] for e in edu_level]
    income = np.round(rng.lognormal(10.3, 0.7, n) / 100) * 100
    region = rng.choice(REGIONS, n, p=np.array([5, 4, 11, 16, 9, 15, 14, 9, 6, 11]) / 100)
    start = dt.date(2024, 3, 1)
    interviewed = [(start + dt.timedelta(days=int(d))).isoformat() for d in rng.integers(0, 120, n)]
    employment = [EMPLOYMENT[e] for e in rng.choice(4, n, p=[0.07, 0.18, 0.5, 0.25])]
    trust = [LIKERT[t] for t in rng.choice(5, n, p=[0.2, 0.3, 0.2, 0.22, 0.08])]
    life = [LIKERT[t] for t in rng.choice(5, n, p=[0.05, 0.12, 0.23, 0.4, 0.2])]
    columns = ["age", "education", "household_income", "region", "interview_date", "employment",
               "trust_in_government", "life_satisfaction"]
    cols = [
        [str(a) for a in age],
        blank(rng, education, 0.03),
        blank(rng, [str(int(i)) for i in income], 0.06, ("N/A",)),
        list(region),
        interviewed,
        employment,
        trust,
        life,
    ]
    return columns, [list(r) for r in zip(*cols)]


def write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "var" / "quality"))
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, make, offset in (("hospital_admissions.csv", hospital, 0), ("survey.csv", survey, 1)):
        header, rows = make(np.random.default_rng([args.seed, offset]))
        write(out / name, header, rows)
        print(f"{out / name}: {len(rows)} rows, columns {', '.join(header)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
