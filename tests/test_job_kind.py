"""Job.kind says what a job does (run, comparison, experiment, lattice-keep, lattice); run_job dispatches on it
through services.jobs.JOB_HANDLERS, never on the algorithm string."""

import importlib

import pytest
from anonymizer_helpers import make_dataset
from django.apps import apps

from anonymizer_app.models import Job
from anonymizer_app.services import comparison, experiment, jobs, lattice, runs

pytestmark = pytest.mark.django_db


def test_every_kind_has_its_handler():
    assert {k for k, _ in Job.KIND_CHOICES} == set(jobs.JOB_HANDLERS)
    assert jobs.JOB_HANDLERS[Job.RUN] is jobs.JOB_HANDLERS[Job.LATTICE_KEEP] is runs.run_job_spec
    assert jobs.JOB_HANDLERS[Job.COMPARISON] is comparison.run_comparison
    assert jobs.JOB_HANDLERS[Job.EXPERIMENT] is experiment.run_experiment
    assert jobs.JOB_HANDLERS[Job.LATTICE] is lattice.run_lattice_job


def test_each_creator_sets_its_kind(user):
    dataset = make_dataset(user)
    assert jobs.create_job(dataset, "datafly", 2, 0.0).kind == Job.RUN
    assert comparison.create_comparison(dataset, ["datafly"], [2]).kind == Job.COMPARISON
    assert experiment.create_experiment(dataset, [50], 0, False, [2], "datafly").kind == Job.EXPERIMENT


def test_run_job_dispatches_on_the_kind_not_the_algorithm(user, monkeypatch):
    ran = []
    monkeypatch.setitem(jobs.JOB_HANDLERS, Job.RUN, lambda job: ran.append(job.pk))
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(algorithm=comparison.COMPARE)  # the old magic value decides nothing
    done = jobs.run_job(job)
    assert ran == [job.pk] and done.status == Job.SUCCEEDED


def test_a_job_of_an_unknown_kind_fails(user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(kind="unknown")
    done = jobs.run_job(job)
    assert done.status == Job.FAILED and done.message == "unknown job kind 'unknown'"


def test_the_migration_fills_the_kind_of_existing_rows(user):
    dataset = make_dataset(user)
    made = {algorithm: Job.objects.create(owner=user, dataset=dataset, algorithm=algorithm, k=2)
            for algorithm in ("datafly", "full-domain", comparison.COMPARE, experiment.EXPERIMENT)}
    assert {job.kind for job in made.values()} == {Job.RUN}  # the default of rows before the migration
    importlib.import_module("anonymizer_app.migrations.0003_job_kind").fill_kind(apps, None)
    kinds = {algorithm: Job.objects.get(pk=job.pk).kind for algorithm, job in made.items()}
    assert kinds == {"datafly": Job.RUN, "full-domain": Job.RUN, "compare": Job.COMPARISON,
                     "homogeneity-experiment": Job.EXPERIMENT}
