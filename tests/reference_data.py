"""The tests' reference data: the project's own demo data, anonymizer_app/demo_data/ (Adult with its nine
hierarchies, people with db_100.csv and its three hierarchies; the same files as ../shared/datasets/adult and
people). They ship in the checkout, so no test skips for a folder beside it; a missing file fails the test
that reads it (FileNotFoundError naming the path), it never skips."""

from __future__ import annotations

from pathlib import Path

DATASETS = Path(__file__).resolve().parent.parent / "anonymizer_app" / "demo_data"
ADULT = DATASETS / "adult"
PEOPLE = DATASETS / "people"
