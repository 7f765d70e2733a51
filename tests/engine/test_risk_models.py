"""Privacy models that bound risk beside k: average re-identification risk, (α,k)-anonymity,
δ-disclosure privacy, k-map with an estimated population and a population uniqueness threshold. Values by hand on small class layouts; Flash's optimum equals the exhaustive
search's; every node the solution lattice tags anonymous passes an independent check written here (and
only those); the gate refuses a publication that breaks them; CLI flags and the run form run them."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import people_dataset, run_jobs_synchronously
from django.core.management import call_command

from anonymizer_app.engine import InputError, Table, UnsatisfiableError, anonymize, parse_hierarchy
from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.privacy import (
    AlphaKAnonymity,
    AverageRisk,
    DeltaDisclosure,
    KAnonymity,
    KMap,
    PopulationUniqueness,
    check_feasible,
    make_model,
)
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search import solution_lattice
from anonymizer_app.models import Job
from anonymizer_app.services import results


class _Domain:
    def __init__(self, p):
        self.table_distribution = np.asarray(p, dtype=float)


# ---- values by hand -------------------------------------------------------------------------------
def test_average_risk_leaves_out_the_smallest_classes_as_few_as_needed():
    m = AverageRisk(0.3)
    sizes = np.array([6, 1, 2, 1])  # 4 classes / 10 records = 0.4
    # without one 1: 3/9 = 0.333 > 0.3; without both 1s: 2/8 = 0.25
    assert m.classes_failing(sizes).tolist() == [False, True, False, True]
    assert AverageRisk(0.4).classes_failing(sizes).tolist() == [False] * 4
    assert m.card(sizes) == {"value": 0.4, "value_label": "average prosecutor risk"}
    # classes already left out by another model come with size 0: 3 classes / 9 records = 0.333 > 0.3
    assert m.classes_failing(np.array([6, 0, 2, 1])).tolist() == [False, False, False, True]
    assert AverageRisk(0.1).classes_failing(np.array([2, 2])).tolist() == [True, True]  # 0.5, then 1/2
    assert m.summary() == "average risk ≤ 0.3"


def test_alpha_k_anonymity_by_hand():
    m = AlphaKAnonymity(0.5, 3, "dis")
    counts = np.array([[2, 2], [1, 1], [3, 1], [2, 1]])  # shares .5, .5, .75, .667; sizes 4, 2, 4, 3
    assert m.classes_failing(counts.sum(axis=1), counts, _Domain([0.5, 0.5])).tolist() == [False, True, True, True]
    assert m.card(counts.sum(axis=1), counts, _Domain([0.5, 0.5]))["value"] == 0.75
    assert m.summary() == "(0.5,3)-anonymity on dis"


def test_delta_disclosure_by_hand():
    p = [0.5, 0.25, 0.25]
    counts = np.array([[1, 1, 0], [2, 1, 1], [1, 0, 0], [4, 0, 0]])
    # |ln(q/p)|: class 0 (.5,.5,-): ln 2 = 0.693; class 1 (.5,.25,.25): 0; class 2 and 3 (1,-,-): ln 2
    m = DeltaDisclosure(0.7, "dis")
    values = m.values(counts, _Domain(p))
    assert values == pytest.approx([math.log(2), 0.0, math.log(2), math.log(2)])
    assert m.classes_failing(counts.sum(axis=1), counts, _Domain(p)).tolist() == [False] * 4
    # strict: |ln(q/p)| < δ, so δ = ln 2 fails the classes at ln 2
    on_the_bound = DeltaDisclosure(math.log(2), "dis")
    assert on_the_bound.classes_failing(counts.sum(axis=1), counts, _Domain(p)).tolist() == [True, False, True, True]
    assert m.summary() == "0.7-disclosure privacy on dis"


def test_k_map_with_an_estimated_population_by_hand():
    """The derived k (test_kmap_estimators_arx.py has ARX's figures): λ = 8 · 0.05 = 0.4, P(X <= 2) = 0.9921 is the
    first Poisson cumulative probability >= 0.99, so k' = 2 + 2 = 4 with type-I error 1 - 0.9921."""
    m = KMap(8, 0.05)
    assert m.derived_k == 4 and m.type1_error == pytest.approx(1 - math.exp(-0.4) * (1 + 0.4 + 0.08), rel=1e-12)
    sizes = np.array([1, 3, 4, 9])
    assert m.classes_failing(sizes).tolist() == [True, True, False, False]
    assert m.card(sizes) == {"value": 1, "value_label": "smallest EC (derived k = 4, type-I error 0.00793)"}
    assert KMap(3, 1.0).classes_failing(sizes).tolist() == [True, False, False, False]  # π = 1: k-anonymity
    assert m.summary() == "8-map at π=0.05 (Poisson, α=0.01): derived k = 4, type-I error 0.00793"
    with pytest.raises(InputError, match=r"k-map: k=500 at sampling fraction 0.25 asks for classes of at least 154 records"):
        check_feasible([KMap(500, 0.25)], 10, {}, 0.0)
    assert KMap.monotonic and KMap.monotonic_without_suppression


def test_population_uniqueness_follows_dankars_rule():
    from anonymizer_app.engine.measure.risk import population_uniqueness

    sizes = np.array([1, 1, 1, 2, 3, 5, 10, 50])  # 73 records, 3 sample uniques, π = 0.01: N = 7300
    chosen = population_uniqueness({1: 3, 2: 1, 3: 1, 5: 1, 10: 1, 50: 1}, 7300, 0.01)["dankar"]
    assert chosen["model"] == "pitman"  # π <= 0.1
    m = PopulationUniqueness(0.01, 0.01)
    assert m.estimate(sizes)["share"] == pytest.approx(chosen["share"])
    assert m.classes_failing(sizes).tolist() == [chosen["share"] > 0.01] * 8
    tight = PopulationUniqueness(chosen["share"] / 2, 0.01)
    assert tight.classes_failing(sizes).tolist() == [True] * 8  # a release-wide property: every class fails
    assert tight.classes_failing(np.array([0, 0, 0, 2, 3, 5, 10, 50])).tolist() == [False] * 8  # no uniques left
    assert m.card(np.array([4, 6])) == {"value": 0.0, "value_label": "estimated population uniqueness"}
    assert PopulationUniqueness.monotonic is False and PopulationUniqueness.monotonic_without_suppression is False


def test_parameters_and_feasibility_are_checked():
    with pytest.raises(InputError, match="average_risk must be above 0, got 0.0"):
        AverageRisk(0)
    with pytest.raises(InputError, match="alpha must be at most 1, got 1.5"):
        make_model("alpha-k-anonymity", alpha=1.5, column="dis")
    with pytest.raises(InputError, match="delta must be above 0, got 0.0"):
        DeltaDisclosure(0.0)
    with pytest.raises(InputError, match="average risk 0.01 is below 1/10"):
        check_feasible([AverageRisk(0.01)], 10, {}, 0.0)
    values = pd.Series(["a"] * 7 + ["b"] * 3)
    with pytest.raises(InputError, match="α=0.6 but the most frequent value of 'dis' is 0.7 of the table"):
        check_feasible([AlphaKAnonymity(0.6, 2, "dis")], 10, {"dis": values}, 0.0)
    check_feasible([AlphaKAnonymity(0.6, 2, "dis")], 10, {"dis": values}, 0.1)  # suppression may help
    assert AverageRisk.monotonic is False and AverageRisk.monotonic_without_suppression is True
    assert AlphaKAnonymity.monotonic is False and AlphaKAnonymity.monotonic_without_suppression is True
    assert DeltaDisclosure.monotonic is False and DeltaDisclosure.monotonic_without_suppression is False


# ---- search, lattice and gate on small random tables -------------------------------------------------
def _problem(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 45))
    files, frame = {}, {}
    for name in ("a", "b"):
        leaves = [f"{name}{i}" for i in range(int(rng.integers(2, 6)))]
        files[name] = "".join(f"{v};{name}g{i % 2};*\n" for i, v in enumerate(leaves))
        frame[name] = rng.choice(leaves, n)
    frame["s"] = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    table = Table(pd.DataFrame(frame), {"a": "qi", "b": "qi", "s": "sensitive"})
    return table, {c: parse_hierarchy(files[c], c) for c in ("a", "b")}


MODELS = [[AverageRisk(0.2)], [AverageRisk(0.35)], [AlphaKAnonymity(0.6, 3, "s")], [DeltaDisclosure(1.0, "s")],
          [AlphaKAnonymity(0.7, 2, "s"), AverageRisk(0.3)], [KMap(8, 0.05)], [PopulationUniqueness(0.002, 0.05)],
          [KMap(5, 0.5), PopulationUniqueness(0.01, 0.05)]]


def _failing_records(groups: list[pd.DataFrame], source: pd.DataFrame, models: list) -> int:
    """Independent: records to suppress so that every model holds (k=2 always): per-class models
    first, then the smallest remaining classes until the average risk holds."""
    p = source["s"].value_counts(normalize=True)
    bad = [len(g) < 2 for g in groups]
    for m in models:
        for i, g in enumerate(groups):
            q = g["s"].value_counts(normalize=True)
            if isinstance(m, AlphaKAnonymity):
                bad[i] |= len(g) < m.k or q.max() > m.alpha + 1e-9
            elif isinstance(m, DeltaDisclosure):
                bad[i] |= max(abs(math.log(q[v] / p[v])) for v in q.index) >= m.delta - 1e-9
            elif isinstance(m, KMap):
                bad[i] |= len(g) < m.derived_k
    kept = sorted(len(g) for g, b in zip(groups, bad) if not b)
    dropped = sum(len(g) for g, b in zip(groups, bad) if b)
    for m in models:
        if isinstance(m, AverageRisk):
            while kept and len(kept) / sum(kept) > m.average_risk + 1e-9:
                dropped += kept.pop(0)
        elif isinstance(m, PopulationUniqueness) and kept:
            from anonymizer_app.engine.measure.risk import population_uniqueness

            n = sum(kept)
            population = max(n, round(n / m.sampling_fraction))
            hist = pd.Series(kept).value_counts().to_dict()
            chosen = population_uniqueness({int(a): int(b) for a, b in hist.items()}, population, n / population)
            if not chosen["dankar"]["converged"] or chosen["dankar"]["share"] > m.uniqueness + 1e-9:
                dropped += sum(kept)
                kept = []
    return dropped


def _groups(table, hs, levels) -> list[pd.DataFrame]:
    out = table.frame.copy()
    for col, lv in zip(table.qi, levels):
        h = hs[col]
        out[col] = np.asarray(h.labels[lv], dtype=object)[h.maps[lv][h.encode(out[col], col)]]
    return [g for _, g in out.groupby(table.qi, sort=False)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("which", range(len(MODELS)))
@pytest.mark.parametrize("limit", [0.0, 0.2])
def test_flash_equals_exhaustive_and_the_lattice_tags_follow_the_models(seed, which, limit):
    table, hs = _problem(seed)
    models = MODELS[which]
    outcomes = []
    for algorithm in ("flash", "exhaustive"):
        try:
            r = anonymize(table, hs, algorithm, k=2, suppression_limit=limit, models=models)
            outcomes.append((r.search["optimum_value"], int(r.suppressed.sum())))
        except UnsatisfiableError:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
    spec = RunSpec.build(table, hs, "flash", models=[KAnonymity(2), *models], suppression_limit=limit)
    try:
        data = solution_lattice.evaluate(spec)
    except UnsatisfiableError:
        assert outcomes[0] is None
        return
    budget = int(np.floor(limit * table.n + 1e-9))
    for levels, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]):
        lv = [int(x) for x in levels.split(",")]
        assert (tag in "Aa") == (_failing_records(_groups(table, hs, lv), table.frame, models) <= budget), levels
    # Flash's suppressed records are the independent count at its node
    if outcomes[0] is not None:
        best = pipeline.run(spec)
        lv = [best.result.transformation[c] for c in table.qi]
        assert outcomes[0][1] == _failing_records(_groups(table, hs, lv), table.frame, models)


@pytest.mark.parametrize("model,summary", [
    (AverageRisk(0.2), "average risk ≤ 0.2"), (AlphaKAnonymity(0.6, 3, "s"), "(0.6,3)-anonymity on s"),
    (DeltaDisclosure(0.8, "s"), "0.8-disclosure privacy on s"), (KMap(8, 0.05), "8-map at π=0.05 (Poisson, α=0.01): derived k = 4, type-I error 0.00793"),
    (PopulationUniqueness(0.002, 0.05), "population uniqueness ≤ 0.002 at π=0.05"),
])
def test_a_node_that_breaks_the_model_is_refused_as_a_publication(model, summary):
    for seed in range(60):
        table, hs = _problem(seed)
        spec = RunSpec.build(table, hs, "flash", models=[KAnonymity(1), model])
        data = solution_lattice.evaluate(spec)
        failing = [lv for lv, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]) if tag in "Nn"]
        if failing:
            break
    assert failing
    with pytest.raises(UnsatisfiableError, match=summary.replace("(", r"\(").replace(")", r"\)")):
        pipeline.publish_levels(spec, failing[0])


def test_algorithms_that_cannot_honour_them_refuse_naming_those_that_can():
    table, _ = _problem(1)
    with pytest.raises(InputError) as err:
        anonymize(table, None, "koptimize", k=2, models=[AverageRisk(0.3)])
    assert "k-Optimize cannot honour average re-identification risk; algorithms that can: Datafly," in str(err.value)
    assert "Flash" in str(err.value) and "Anatomy" not in str(err.value)
    with pytest.raises(InputError, match="cannot honour δ-disclosure privacy; algorithms that can: Datafly,"):
        anonymize(table, None, "mha", k=2, models=[DeltaDisclosure(1.5, "s")])


# ---- the command line and the run form -----------------------------------------------------------
def test_the_cli_flags_run_the_models(tmp_path):
    table, _ = _problem(4)
    src = tmp_path / "in.csv"
    table.frame.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    call_command("anonymize", str(src), "--qi", "a", "--qi", "b", "--sensitive", "s", "--algorithm", "mondrian",
                 "--k", "2", "--average-risk", "0.25", "--ak-alpha", "0.8", "--ak-k", "3", "--delta-disclosure", "2",
                 "--out", str(out), stdout=io.StringIO(), stderr=io.StringIO())
    published = pd.read_csv(out, dtype=str)
    sizes = published.groupby(["a", "b"]).size()
    assert len(sizes) / sizes.sum() <= 0.25 and sizes.min() >= 3
    shares = published.groupby(["a", "b"])["s"].value_counts(normalize=True)
    assert shares.max() <= 0.8 + 1e-9
    call_command("anonymize", str(src), "--qi", "a", "--qi", "b", "--algorithm", "flash", "--k", "2",
                 "--kmap", "9", "--kmap-sampling-fraction", "0.5", "--population-uniqueness", "0.001",
                 "--uniqueness-sampling-fraction", "0.01", "--out", str(out), stdout=io.StringIO(),
                 stderr=io.StringIO())
    sizes = pd.read_csv(out, dtype=str).groupby(["a", "b"]).size()
    assert sizes.min() >= 9  # k-map's derived k at π = 0.5: 9


@pytest.mark.django_db
def test_the_run_form_runs_them(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    data = {"algorithm": "flash", "k": 2, "suppression_percent": 10, "sensitive": "disease",
            "model:avgrisk:enabled": "on", "model:avgrisk:average_risk": "0.25",
            "model:alphak:enabled": "on", "model:alphak:alpha": "0.9", "model:alphak:k": "2",
            "model:alphak:column": "disease"}
    r = client_alice.post(f"/datasets/{ds.pk}/run/", data)
    assert r.status_code == 302, [line for line in r.content.decode().splitlines() if "error" in line]
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    checks = {c["model"]: c for c in job.result.report["model_checks"]}
    output, suppressed = results.load_output(job.result)
    qis = [c for c in ("age", "city_birth", "zip_code") if c in output.columns]
    sizes = output[~suppressed].groupby(qis).size()
    assert checks["average-risk"]["holds"] is True
    assert checks["average-risk"]["value"] == pytest.approx(len(sizes) / sizes.sum())
    assert len(sizes) / sizes.sum() <= 0.25
    assert checks["alpha-k-anonymity"]["holds"] is True
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "average risk ≤ 0.25" in html and "(0.9,2)-anonymity on disease" in html
    assert "average prosecutor risk" in html
    # k-map and population uniqueness from the form
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 10, "sensitive": "disease",
        "model:kmap:enabled": "on", "model:kmap:kmap_k": "6", "model:kmap:sampling_fraction": "0.5",
        "model:uniqueness:enabled": "on", "model:uniqueness:uniqueness": "0.01",
        "model:uniqueness:sampling_fraction": "0.01"})
    assert r.status_code == 302
    job2 = Job.objects.exclude(pk=job.pk).get()
    assert job2.status == Job.SUCCEEDED, job2.message
    checks = {c["model"]: c for c in job2.result.report["model_checks"]}
    output, suppressed = results.load_output(job2.result)
    sizes = output[~suppressed].groupby(qis).size()
    assert checks["k-map"]["holds"] is True and checks["k-map"]["value"] == sizes.min() >= 6  # derived k 6
    assert checks["population-uniqueness"]["holds"] is True
    Job.objects.filter(pk=job2.pk).delete()
    # a bad value is a form error, nothing stored
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {**data, "model:avgrisk:average_risk": "2"})
    assert r.status_code in (200, 400) and Job.objects.count() == 1
    assert "average_risk must be at most 1, got 2.0" in r.content.decode()


ALL_SETS = [[AverageRisk(0.2)], [AlphaKAnonymity(0.7, 3, "s")], [DeltaDisclosure(1.2, "s")], [KMap(6, 0.05)],
            [PopulationUniqueness(0.01, 0.1)], [AverageRisk(0.15), AlphaKAnonymity(0.8, 2, "s")]]


@pytest.mark.parametrize("algorithm", sorted(a for a in ALGORITHMS if a != "full-domain"))
@pytest.mark.parametrize("which", range(len(ALL_SETS)))
def test_every_algorithm_honours_or_refuses_them(algorithm, which):
    """Every algorithm either refuses the models (naming those that can) or publishes through the gate
    (anonymize() raises when the published classes break a model); a search may find no solution."""
    table, hs = _problem(11)
    models = ALL_SETS[which]
    if not all(m.name in ALGORITHMS[algorithm].models for m in models):
        with pytest.raises(InputError, match="algorithms that can"):
            anonymize(table, hs, algorithm, k=2, suppression_limit=0.1, models=models)
        return
    try:
        result = anonymize(table, hs, algorithm, k=2, suppression_limit=0.1, models=models)
    except UnsatisfiableError:
        return
    assert result.verified
    kept = np.asarray(result.class_sizes)
    for m in models:
        if isinstance(m, AverageRisk):
            assert len(kept) / kept.sum() <= m.average_risk + 1e-9
        if isinstance(m, KMap):
            assert kept.min() >= m.derived_k


def test_the_gate_refuses_a_tampered_release_that_breaks_average_risk():
    from anonymizer_app.engine import VerificationError
    from anonymizer_app.engine.run import gate
    from anonymizer_app.engine.run.stages import compute

    table, hs = _problem(6)  # 28 records in 17 classes on the raw QIs: average risk 0.607
    spec = RunSpec.build(table, hs, "flash", k=1, models=[AverageRisk(0.3)])
    result = compute(spec)
    gate.publish(result, spec, table, result.hierarchies)  # as found: it holds
    kept = ~np.asarray(result.suppressed)
    for col in ("a", "b"):  # the raw values back: still generalizations (level 0), but 0.6 > 0.3
        result.output.loc[kept, col] = table.frame.loc[kept, col].to_numpy()
    with pytest.raises(VerificationError, match="average risk ≤ 0.3 does not hold"):
        gate.publish(result, spec, table, result.hierarchies)
