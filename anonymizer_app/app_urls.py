"""URLs of the anonymizer app (datasets, jobs, results), mounted at "/"."""

from django.urls import path

from . import views

app_name = "anonymizer"

urlpatterns = [
    path("", views.index, name="index"),
    path("datasets/upload/", views.upload, name="upload"),
    path("datasets/demo/", views.load_demo, name="load_demo"),
    path("datasets/<int:dataset_id>/", views.dataset, name="dataset"),
    path("datasets/<int:dataset_id>/columns/", views.columns, name="columns"),
    path("datasets/<int:dataset_id>/run/", views.run, name="run"),
    path("datasets/<int:dataset_id>/compare/", views.compare, name="compare"),
    path("jobs/<uuid:job_id>/comparison/", views.comparison, name="comparison"),
    path("datasets/<int:dataset_id>/experiment/", views.experiment, name="experiment"),
    path("jobs/<uuid:job_id>/experiment/", views.experiment_result, name="experiment_result"),
    path("jobs/", views.jobs, name="jobs"),
    path("jobs/<uuid:job_id>/", views.job, name="job"),
    path("jobs/<uuid:job_id>/status/", views.job_status, name="job_status"),
    path("jobs/<uuid:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("jobs/<uuid:job_id>/result/", views.result, name="result"),
    path("jobs/<uuid:job_id>/result/anonymized.csv", views.download_csv, name="download_csv"),
    path("jobs/<uuid:job_id>/config.json", views.download_config, name="download_config"),
]

# the solution lattice of a lattice job (lattice_views.py)
from . import lattice_views  # noqa: E402

urlpatterns += [
    path("jobs/<uuid:job_id>/lattice/", lattice_views.lattice, name="lattice"),
    path("jobs/<uuid:job_id>/lattice/data.json", lattice_views.lattice_data_view, name="lattice_data"),
    path("jobs/<uuid:job_id>/lattice/node.json", lattice_views.lattice_node, name="lattice_node"),
    path("jobs/<uuid:job_id>/lattice/keep/", lattice_views.lattice_keep, name="lattice_keep"),
]
