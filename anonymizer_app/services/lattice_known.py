"""The lattice page's first view: the nodes a lattice run's own search left tagged (Flash tags every node of a
lattice under monotonic models and computes the metric of the nodes it checks), written beside the result when
the run ends, so that the page and the API show them at once while a worker evaluates every node (services.lattice)
and replaces them with the whole lattice.

Only what the search knows is shown: its tags (checked or predicted, as the lattice export letters them) and the
values of the nodes it checked, which are the values the evaluation computes for them (the same metric on the same
classes); a node it did not check has no value yet.
"""

from __future__ import annotations

from ..engine.algorithms import supports
from ..engine.run.gate import Publication
from ..engine.search import solution_lattice
from ..models import Job
from . import results, storage

KNOWN_FILE = "known.json"
KNOWN_VERSION = 1


def is_lattice_run(job: Job) -> bool:
    return job.kind == Job.RUN and supports(job.algorithm, "lattice")


def remember(job: Job, publication: Publication) -> None:
    """Write the run's search lattice (columns for the plot, as solution_lattice.build_lattice makes them) into the
    job's lattice cache folder; nothing when the run kept its lattice in the report or the search gave none."""
    result = publication.result
    known = result.known_lattice if result is not None else None
    if known is None or result is None or not is_lattice_run(job):
        return
    report = publication.report
    search = report.get("search") or {}
    metric = search.get("metric") or solution_lattice.metric_of(job.options)
    qi = list(known["qi"])
    data = solution_lattice.build_lattice(known, [result.hierarchies[c] for c in qi], metric)
    data["models"] = [c["describe"] for c in report.get("model_checks") or []]
    if search.get("weights"):
        data["weights"] = search["weights"]
    checked = sum(1 for node in known["nodes"] if node[1] in "AN")
    data.update(version=KNOWN_VERSION, partial=True, result=results.transformation_key(report),
                source=f"as the run's search left it ({checked:,} nodes checked, the others' tags predicted; "
                       f"a metric value only where checked) while every node is evaluated")
    storage.write_json(storage.lattice_cache_dir(job) / KNOWN_FILE, data)
    if not Job.objects.filter(pk=job.pk).exists():  # deleted meanwhile: leave nothing of it
        storage.delete_names([storage.lattice_cache_name(job)])


def read(job: Job) -> dict | None:
    """The first view written by remember(), or None."""
    data = storage.read_json(storage.lattice_cache_dir(job) / KNOWN_FILE)
    return data if isinstance(data, dict) and data.get("version") == KNOWN_VERSION else None
