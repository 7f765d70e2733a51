"""Each privacy model's own card figure, summary line and research-subset marker parsing, on small
hand-made tables whose figures are worked out by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.model.hierarchy import parse_hierarchy
from anonymizer_app.engine.privacy import (
    PRIVACY_MODELS,
    BetaLikeness,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    model_groups,
    parse_marker,
)
from anonymizer_app.engine.privacy.distributions import (
    mark_research_subset,
    membership_domain,
    sensitive_domain,
)

# three classes of 2, 3 and 4 records; the sensitive values 1, 2, 3 (numeric, so ordered distance applies)
#   class 0: 1 2        class 1: 1 1 2        class 2: 1 2 3 3
# table distribution over the 9 records: p = (4/9, 3/9, 2/9)
TABLE = pd.DataFrame({"s": ["1", "2", "1", "1", "2", "1", "2", "3", "3"]})
CLASS_OF_ROW = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2])
SIZES = np.array([2, 3, 4])


def _domain(hierarchy=None):
    dom = sensitive_domain(TABLE, "s", hierarchy)
    return dom, dom.from_rows(CLASS_OF_ROW)


def card(model, hierarchy=None):
    if not model.needs_sensitive:
        return model.card(SIZES)
    dom, counts = _domain(hierarchy)
    return model.card(SIZES, counts, dom)


def test_k_anonymity_card_is_the_smallest_class():
    assert card(KAnonymity(2)) == {"value": 2, "value_label": "smallest EC"}
    assert KAnonymity(2).card(np.zeros(0, np.int64)) == {"value": 0, "value_label": "smallest EC"}


def test_distinct_l_diversity_card_is_the_fewest_distinct_values():
    # distinct values per class: 2, 2, 3
    assert card(DistinctLDiversity(2, "s")) == {"value": 2, "value_label": "fewest distinct values in an EC"}


def test_entropy_l_diversity_card_is_exp_of_the_lowest_entropy():
    # entropies: ln 2; -(2/3 ln 2/3 + 1/3 ln 1/3) = ln 3 - 2/3 ln 2 (the lowest); 1.5 ln 2
    got = card(EntropyLDiversity(1.5, "s"))
    assert got["value_label"] == "exp(lowest EC entropy)"
    assert got["value"] == pytest.approx(3 / 2 ** (2 / 3)) and isinstance(got["value"], float)
    assert got["value"] == pytest.approx(math.exp(math.log(3) - 2 / 3 * math.log(2)))


def test_recursive_cl_diversity_card_is_the_largest_ratio_or_none():
    # sorted counts (r1, r2, r3): (1,1,0) -> 1/1; (2,1,0) -> 2/1; (2,1,1) -> 2/(1+1)
    assert card(RecursiveCLDiversity(3, 2, "s")) == {"value": 2.0, "value_label": "largest r1 / (r_l + ... + r_m)"}
    # l = 3: class 0 and 1 have no third value, their ratio is unbounded
    assert card(RecursiveCLDiversity(3, 3, "s")) == {"value": None, "value_label": "largest r1 / (r_l + ... + r_m)"}


def test_t_closeness_card_is_the_largest_emd_for_each_distance():
    # equal: ½Σ|q-p| = 2/9, 2/9, 5/18
    assert card(TCloseness(0.5, "equal", "s")) == {"value": pytest.approx(5 / 18), "value_label": "largest EMD"}
    # ordered (m = 3): Σ|cumsum(q-p)|/2 = (1/18+4/18)/2, (2/9+2/9)/2, (7/36+10/36)/2 -> 17/72 the largest
    assert card(TCloseness(0.5, "ordered", "s"))["value"] == pytest.approx(17 / 72)
    # hierarchical, 1 and 3 under a, 2 under b (H = 2): class 0 with d = (1/18, 3/18, -4/18):
    # node a: min(1/18, 4/18) * 1/2 = 1/36; root: min(3/18, 3/18) * 1 = 3/18 -> 7/36 (class 1: 1/9, class 2: 13/72)
    h = parse_hierarchy("1;a;*\n3;a;*\n2;b;*\n", "s")
    assert card(TCloseness(0.5, "hierarchical", "s"), h)["value"] == pytest.approx(7 / 36)


def test_beta_likeness_card_is_the_largest_relative_gain():
    # (q - p)/p: class 0 max 1/2 (value 2), class 1 max 1/2 (value 1), class 2: (1/2 - 2/9)/(2/9) = 5/4
    for variant in ("basic", "enhanced"):
        assert card(BetaLikeness(2, variant, "s")) == {"value": pytest.approx(1.25),
                                                        "value_label": "largest relative gain"}


def test_delta_presence_card_is_the_presence_range():
    pop = pd.DataFrame({"age": ["20", "20", "30", "30", "30", "40"]})
    marked = mark_research_subset(pop, np.array([1, 0, 1, 1, 0, 0], dtype=bool), "m")
    dom = membership_domain(marked, "m")
    counts = dom.from_rows(np.array([0, 0, 1, 1, 1, 2]))
    got = DeltaPresence(0.0, 1.0, "m").card(np.array([2, 3, 1]), counts, dom)
    assert got["value_label"] == "presence range"
    assert got["value"] == [0.0, pytest.approx(2 / 3)]


@pytest.mark.parametrize("model", [DistinctLDiversity(2, "s"), EntropyLDiversity(2, "s"), RecursiveCLDiversity(3, 2, "s"),
                                   TCloseness(0.2, "equal", "s"), BetaLikeness(1, "basic", "s")])
def test_no_class_no_figure(model):
    dom, _ = _domain()
    assert model.card(np.zeros(0, np.int64), np.zeros((0, dom.m), np.int64), dom) == {"value": None, "value_label": ""}


@pytest.mark.parametrize("model,line", [
    (KAnonymity(5), "5-anonymity"),
    (DistinctLDiversity(3, "occupation"), "distinct 3-diversity on occupation"),
    (EntropyLDiversity(2.5), "entropy 2.5-diversity"),
    (RecursiveCLDiversity(3, 2, "s"), "recursive (3,2)-diversity on s"),
    (TCloseness(0.2, "ordered", "s"), "0.2-closeness (ordered distance) on s"),
    (BetaLikeness(1, "basic", "s"), "basic 1-likeness on s"),
    (DeltaPresence(0.1, 0.6, "m"), "(0.1,0.6)-presence on m"),
])
def test_summary_line_and_describe_alias(model, line):
    assert model.summary() == line == model.describe()


def test_to_dict_is_what_jobs_store():
    assert KAnonymity(2).to_dict() == {"model": "k-anonymity", "k": 2}
    assert RecursiveCLDiversity(3, 2, "s").to_dict() == {"model": "recursive-cl-diversity", "c": 3.0, "l": 2,
                                                         "column": "s"}
    assert TCloseness(0.2).to_dict() == {"model": "t-closeness", "t": 0.2, "distance": "equal", "column": None}
    assert DeltaPresence(0, 1, "m").to_dict() == {"model": "delta-presence", "delta_min": 0.0, "delta_max": 1.0,
                                                  "column": "m"}


def test_every_registered_model_carries_its_own_metadata():
    for name, cls in PRIVACY_MODELS.items():
        assert cls.name == name and cls.label and cls.parameters
        assert callable(cls.card) and callable(cls.summary)
    groups = {g.key: g for g in model_groups()}
    # k-anonymity has the run's own k
    assert list(groups) == ["l", "t", "beta", "delta", "alphak", "ddisclosure", "avgrisk", "kmap",
                            "kmap_table", "uniqueness", "dp"]
    assert list(groups["l"].variants) == ["distinct", "entropy", "recursive"]
    assert [p.flag for p in groups["l"].parameters] == ["--l", "--c"]
    assert groups["l"].parameters[0].kind is float  # entropy's l is a number, distinct's an integer
    assert [p.flag for p in groups["t"].parameters] == ["--t", "--t-distance"]
    assert [p.flag for p in groups["beta"].parameters] == ["--beta", "--beta-variant"]
    assert [p.flag for p in groups["delta"].parameters] == ["--delta-min", "--delta-max"]
    assert groups["delta"].column_source == "research" and groups["l"].takers("c") == ["recursive"]
    assert [p.flag for p in groups["alphak"].parameters] == ["--ak-alpha", "--ak-k"]
    assert [p.flag for p in groups["ddisclosure"].parameters] == ["--delta-disclosure"]
    assert [p.flag for p in groups["avgrisk"].parameters] == ["--average-risk"]
    assert [p.flag for p in groups["kmap"].parameters] == ["--kmap", "--kmap-sampling-fraction", "--kmap-estimator",
                                                           "--kmap-significance"]
    assert [p.flag for p in groups["kmap_table"].parameters] == ["--kmap-population"]
    assert groups["kmap_table"].column_source == "research"
    assert [p.flag for p in groups["uniqueness"].parameters] == ["--population-uniqueness",
                                                                 "--uniqueness-sampling-fraction"]
    assert groups["avgrisk"].column_source is None and groups["alphak"].column_source == "sensitive"


# ---- parse_marker -------------------------------------------------------------------------------
IN = ["1", "true", "TRUE", "True", " yes ", "Y", "t", "x", "X", "in", "IN", "member", "Member", "research", 1, True,
      1.0]
OUT = ["0", "false", "False", "no", "NO", "n", "f", "", "   ", "out", "Out", "non-member", "Non member", "non_member",
       "nonmember", "population", 0, False, 0.0, None, np.nan]


def test_parse_marker_accepts_every_documented_spelling():
    values = pd.Series(IN + OUT, dtype=object)
    assert parse_marker(values, "m").tolist() == [True] * len(IN) + [False] * len(OUT)
    assert parse_marker(pd.Series([1, 0, 1]), "m").dtype == bool  # an integer column
    assert parse_marker(pd.Series([True, False]), "m").tolist() == [True, False]
    assert parse_marker(pd.Series([1.0, np.nan, 0.0]), "m").tolist() == [True, False, False]
    assert parse_marker(pd.Series([], dtype=object), "m").tolist() == []


def test_parse_marker_names_the_column_the_first_unknown_value_and_its_row():
    values = pd.Series(["1", "0", "yes", "maybe", "2", "maybe"], index=[10, 11, 12, 13, 14, 15])
    with pytest.raises(InputError) as err:
        parse_marker(values, "in study")
    message = str(err.value)
    assert "research-subset column 'in study', row 4: 'maybe' is not a marker value" in message
    assert "1/true/t/yes/y/x/in/member/research" in message and "0/false/f/no/n/empty/out/non-member" in message
    with pytest.raises(InputError, match=r"row 1: '2'"):
        parse_marker(pd.Series(["2", "1"]), "m")


def test_the_engine_reads_markers_with_parse_marker():
    frame = pd.DataFrame({"m": ["yes", "no", "IN", "out"]})
    assert membership_domain(frame, "m").codes.tolist() == [1, 0, 1, 0]
    with pytest.raises(InputError, match=r"'m', row 2: 'perhaps'"):
        membership_domain(pd.DataFrame({"m": ["1", "perhaps"]}), "m")
