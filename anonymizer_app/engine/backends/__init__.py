"""Where a run's data lives: out of core (chunks on disk) and on a Dask cluster."""
