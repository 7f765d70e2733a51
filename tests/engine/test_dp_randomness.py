"""SafePub's draws without a seed come from the operating system's CSPRNG (``secrets``), never from a numpy
generator; a seeded run is reproducible and says that it is therefore not for release (report, notes, CLI
summary, result page: tests/test_run_safepub.py and tests/test_cli_safepub.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, parse_hierarchy
from anonymizer_app.engine.model.table import Role
from anonymizer_app.engine.privacy import EDDifferentialPrivacy
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.safepub import mechanism
from anonymizer_app.engine.safepub.mechanism import (
    NOT_FOR_RELEASE,
    SECURE,
    SecureDraws,
    exponential_mechanism,
    make_rng,
    randomness,
)


def _bytes_of(words: list[int]) -> bytes:
    return np.array(words, dtype=np.uint64).tobytes()


def test_uniforms_and_gumbels_are_the_csprng_bits(monkeypatch):
    asked = []
    words = [0, 2**64 - 1, 2**63, 12345 << 12]

    def token_bytes(n):
        asked.append(n)
        return _bytes_of(words)

    monkeypatch.setattr(mechanism.secrets, "token_bytes", token_bytes)
    u = SecureDraws().random(4)
    assert asked == [32]
    # 52 random bits m (the top ones), as (m + 1/2) 2^-52: exact, strictly inside (0, 1)
    assert u.tolist() == [0.5 * 2**-52, (2**52 - 0.5) * 2**-52, 0.5 + 2**-53, 12345.5 * 2**-52]
    assert u.max() < 1.0
    g = SecureDraws().gumbel(size=4)
    assert g.tolist() == [-math.log(-math.log(x)) for x in u.tolist()]
    assert np.isfinite(g).all()


def test_the_mechanism_draws_from_the_csprng(monkeypatch):
    # scores 0, 0, 10 at ε = 1: weights 1, 1, e^5; with Gumbels from fixed bits the argmax is computed by hand
    words = [2**64 - 1, 2**63, 1 << 12]  # u = 1 - 2^-53, 1/2 + 2^-53, 1.5 · 2^-52: the Gumbels decide
    monkeypatch.setattr(mechanism.secrets, "token_bytes", lambda n: _bytes_of(words))
    u = [(w >> 12) + 0.5 for w in words]
    g = [-math.log(-math.log(x * 2**-52)) for x in u]
    expected = int(np.argmax([g[0], g[1], 5.0 + g[2]]))
    assert exponential_mechanism(np.array([0.0, 0.0, 10.0]), 1.0, SecureDraws()) == expected == 0


def test_unseeded_draws_are_secure_and_seeded_ones_reproducible():
    draws, seed = make_rng(None)
    assert isinstance(draws, SecureDraws) and seed is None and randomness(seed) == SECURE
    assert not isinstance(draws, np.random.Generator)
    a, seed = make_rng(7)
    assert seed == 7 and randomness(seed) == NOT_FOR_RELEASE and "not for release" in NOT_FOR_RELEASE
    assert np.array_equal(a.random(5), make_rng(7)[0].random(5))
    u = SecureDraws().random(20000)
    assert ((u > 0) & (u < 1)).all() and len(np.unique(u)) == 20000


def _people():
    rng = np.random.default_rng(3)
    n = 800
    ages = list(range(20, 80))
    frame = pd.DataFrame({"age": rng.choice(ages, n).astype(str), "sex": rng.choice(["M", "F"], n),
                          "disease": rng.choice(["flu", "cold", "ulcer"], n)})
    roles = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    hs = {"age": parse_hierarchy("\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in ages), "age"),
          "sex": parse_hierarchy("M;*\nF;*", "sex")}
    return Table(frame, roles), hs


def _run(seed: str):
    table, hs = _people()
    return pipeline.run(RunSpec.build(table, hs, "safepub", models=[EDDifferentialPrivacy(2.0, 1e-2)],
                                      options={"seed": seed, "steps": 10}, sensitive="disease"))


def test_every_draw_of_an_unseeded_run_comes_from_the_csprng(monkeypatch):
    import os

    asked = []

    def token_bytes(n):
        asked.append(n)
        return os.urandom(n)

    monkeypatch.setattr(mechanism.secrets, "token_bytes", token_bytes)
    pub = _run("")
    s = pub.report["search"]
    assert (s["seeded"], s["randomness"]) == (False, SECURE)
    # the sample: one uniform per input record; then one Gumbel per candidate of each mechanism draw
    assert asked[0] == 8 * 800 and len(asked) == 1 + s["draws"]
    assert not any("not for release" in note for note in pub.report.get("notes", []))


def test_a_seeded_run_says_it_is_not_for_release():
    pub = _run("11")
    s = pub.report["search"]
    assert (s["seed"], s["seeded"], s["randomness"]) == (11, True, NOT_FOR_RELEASE)
    assert f"SafePub: {NOT_FOR_RELEASE}" in pub.report["notes"]


@pytest.mark.parametrize("seed", ["", "4"])
def test_the_cli_summary_says_how_the_run_drew(seed):
    from anonymizer_app.management.commands.anonymize import Command

    line = Command._safepub_summary(_run(seed).report)
    assert ("seed 4 (reproducible, therefore not for release)" in line) == bool(seed)
    assert ("not seeded (drawn from the operating system's CSPRNG)" in line) == (not seed)
