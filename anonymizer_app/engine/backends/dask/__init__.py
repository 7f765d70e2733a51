"""Beyond one machine: the run's stages on a Dask cluster (dask.dataframe over the stored Parquet,
the ``distributed`` scheduler). Importing this package imports no dask; :mod:`.backend` and
:mod:`.cluster` do, when a run asks for a cluster."""

from .source import ParquetTable

__all__ = ["ParquetTable"]
