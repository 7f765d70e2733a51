"""Adult (8 QIs, ARX hierarchies): Flash's discernibility optimum equals the exhaustive search."""

from __future__ import annotations

import pytest

from anonymizer_app.engine import Table, anonymize, read_hierarchy, read_table
from tests.reference_data import ADULT

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def adult():
    frame, _ = read_table(ADULT / "adult.csv")
    roles = {c: "quasi-identifying" for c in QIS}
    roles["occupation"] = "sensitive"
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in QIS}
    return Table(frame, roles), hs


@pytest.mark.parametrize("k", [2, 5, 10, 100])
def test_flash_equals_exhaustive(adult, k):
    table, hs = adult
    flash = anonymize(table, hs, "flash", k=k, options={"metric": "discernibility"})
    full = anonymize(table, hs, "exhaustive", k=k, options={"metric": "discernibility"})
    assert flash.verified and full.verified
    assert flash.metrics["discernibility"] == full.metrics["discernibility"] == flash.search["optimum_value"]
    assert flash.search["nodes_checked"] < full.search["nodes_checked"] == 4320
