"""A generated table for the Dask backend's tests: identifying, numeric, categorical and sensitive columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonymizer_app.engine import parse_hierarchy

ZONE = "a1;a;*\na2;a;*\na3;a;*\nb1;b;*\nb2;b;*\nc1;c;*\n"
EDUCATION = "Bachelors;Higher;*\nMasters;Higher;*\nDoctorate;Higher;*\nHS-grad;School;*\n11th;School;*\n9th;School;*\n"
ROLES = {"id": "identifying", "age": "qi", "sex": "qi", "zone": "qi", "education": "qi", "disease": "sensitive"}


def people(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "age": rng.integers(17, 91, n).astype(str),
        "sex": rng.choice(["F", "M"], n),
        "zone": rng.choice(["a1", "a2", "a3", "b1", "b2", "c1"], n, p=[0.3, 0.2, 0.1, 0.2, 0.15, 0.05]),
        "education": rng.choice(["Bachelors", "Masters", "Doctorate", "HS-grad", "11th", "9th"], n),
        "disease": rng.choice(["flu", "cold", "cancer", "asthma"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "income": rng.integers(10, 99, n).astype(str),
    })


def hierarchies() -> dict:
    """zone and education given; age (numeric) and sex take their default hierarchies."""
    return {"zone": parse_hierarchy(ZONE, "zone"), "education": parse_hierarchy(EDUCATION, "education")}
