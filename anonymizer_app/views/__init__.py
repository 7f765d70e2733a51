"""Pages of the anonymizer app, one module per concern; the work itself happens in ``services`` (shared
with Celery and the CLI). Everything is owner-scoped: a dataset or job of another user is a 404 on every
URL, and every view requires a login.

- common: owner-scoped lookups, job labels and formats, queueing a job
- datasets: the list and upload, the demo data, a dataset's preview and read format, its columns
- jobs: the run form, the list of jobs, a job's page, status and cancel
- results: the result page of a run; charts: its plotly figures
- downloads: the anonymized CSV and the run configuration
- lattice: the solution lattice of a lattice job, a node's view, keeping a node
- comparison: comparing algorithms; experiment: homogeneous ECs against k
"""
