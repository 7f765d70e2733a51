"""URLs of the anonymizer app (datasets, jobs, results), mounted at "/"."""

from django.urls import path

from .views import (
    comparison,
    datasets,
    downloads,
    dp,
    erasure,
    experiment,
    jobs,
    lattice,
    release_report,
    results,
    risk,
    safepub,
    setvalued,
)

app_name = "anonymizer"

urlpatterns = [
    path("", datasets.index, name="index"),
    path("datasets/upload/", datasets.upload, name="upload"),
    path("datasets/demo/", datasets.load_demo, name="load_demo"),
    # set-valued data: transaction files and tables with a set-valued column
    path("datasets/upload-items/", setvalued.upload, name="upload_items"),
    path("datasets/<int:dataset_id>/items/", setvalued.items, name="items"),
    path("datasets/<int:dataset_id>/set-column/", setvalued.set_column, name="set_column"),
    path("datasets/<int:dataset_id>/run-items/", setvalued.run, name="run_items"),
    path("datasets/<int:dataset_id>/item-hierarchy/build/", setvalued.build_hierarchy, name="build_item_hierarchy"),
    path("datasets/<int:dataset_id>/item-hierarchy/upload/", setvalued.upload_hierarchy,
         name="upload_item_hierarchy"),
    path("jobs/<uuid:job_id>/result/records.txt", setvalued.download_records, name="download_records"),
    path("jobs/<uuid:job_id>/result/report.json", setvalued.download_report, name="download_report"),
    path("jobs/<uuid:job_id>/result/item-rules.csv", setvalued.download_rules, name="download_rules"),
    path("jobs/<uuid:job_id>/result/save-hierarchy/", setvalued.save_built_hierarchy, name="save_built_hierarchy"),
    path("datasets/<int:dataset_id>/", datasets.dataset, name="dataset"),
    path("datasets/<int:dataset_id>/columns/", datasets.columns, name="columns"),
    path("datasets/<int:dataset_id>/delete/", erasure.delete_dataset, name="delete_dataset"),
    path("datasets/<int:dataset_id>/run/", jobs.run, name="run"),
    path("datasets/<int:dataset_id>/run/check/", jobs.run_check, name="run_check"),
    path("datasets/<int:dataset_id>/compare/", comparison.compare, name="compare"),
    path("datasets/<int:dataset_id>/risk/", risk.dataset_risk, name="risk"),
    path("datasets/<int:dataset_id>/dp/", dp.dataset_dp, name="dp"),
    path("safepub/parameters.json", safepub.parameters, name="safepub_parameters"),
    path("jobs/<uuid:job_id>/result/risk/", risk.result_risk, name="result_risk"),
    path("jobs/<uuid:job_id>/comparison/", comparison.comparison, name="comparison"),
    path("datasets/<int:dataset_id>/experiment/", experiment.experiment, name="experiment"),
    path("jobs/<uuid:job_id>/experiment/", experiment.experiment_result, name="experiment_result"),
    path("jobs/", jobs.jobs, name="jobs"),
    path("jobs/<uuid:job_id>/", jobs.job, name="job"),
    path("jobs/<uuid:job_id>/status/", jobs.job_status, name="job_status"),
    path("jobs/<uuid:job_id>/cancel/", jobs.job_cancel, name="job_cancel"),
    path("jobs/<uuid:job_id>/delete/", erasure.delete_job, name="delete_job"),
    path("jobs/<uuid:job_id>/result/", results.result, name="result"),
    path("jobs/<uuid:job_id>/result/anonymized.csv", downloads.download_csv, name="download_csv"),
    path("jobs/<uuid:job_id>/config.json", downloads.download_config, name="download_config"),
    path("jobs/<uuid:job_id>/result/lattice.json", downloads.download_lattice, name="download_lattice"),
    path("jobs/<uuid:job_id>/result/release-report/", release_report.release_report_page, name="release_report"),
    path("jobs/<uuid:job_id>/result/release-report.pdf", release_report.release_report_pdf,
         name="release_report_pdf"),
    # the solution lattice of a lattice job
    path("jobs/<uuid:job_id>/lattice/", lattice.lattice, name="lattice"),
    path("jobs/<uuid:job_id>/lattice/data.json", lattice.lattice_data_view, name="lattice_data"),
    path("jobs/<uuid:job_id>/lattice/node.json", lattice.lattice_node, name="lattice_node"),
    path("jobs/<uuid:job_id>/lattice/keep/", lattice.lattice_keep, name="lattice_keep"),
]
