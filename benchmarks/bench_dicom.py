"""DICOM headers: N synthetic studies made from pydicom's CT_small.dcm and MR_small.dcm (new UIDs, patients,
sexes, ages, study dates, institutions, a private tag each; pixel data as in the samples), zipped, then the
stages the CLI runs timed: checking every file, extracting the table (one row per file), the pipeline
(Datafly, k=5, QIs PatientSex, PatientAge, StudyDate), and writing + verifying the de-identified copies.

    .venv/bin/python benchmarks/bench_dicom.py --files 2000

Prints one line per stage (seconds, files per second) and the zip sizes. Nothing is asserted."""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_zip(path: Path, files: int, seed: int = 0) -> None:
    import pydicom
    from pydicom.data import get_testdata_file
    from pydicom.uid import generate_uid

    rng = random.Random(seed)
    templates = [pydicom.dcmread(get_testdata_file(n)) for n in ("CT_small.dcm", "MR_small.dcm")]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for i in range(files):
            ds = templates[i % 2].copy()
            study = i // 4  # four files a study
            ds.StudyInstanceUID = generate_uid(entropy_srcs=[f"study-{study}"])
            ds.SeriesInstanceUID = generate_uid(entropy_srcs=[f"series-{study}"])
            ds.SOPInstanceUID = generate_uid(entropy_srcs=[f"file-{i}"])
            ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
            rs = random.Random(study + seed * 1_000_003)
            ds.PatientName = f"Patient^{study}"
            ds.PatientID = f"P{study:06d}"
            ds.PatientSex = rs.choice("MF")
            ds.PatientAge = f"{rs.randint(18, 90):03d}Y"
            ds.StudyDate = f"20{rs.randint(10, 24):02d}{rs.randint(1, 12):02d}{rs.randint(1, 28):02d}"
            ds.InstitutionName = rs.choice(["General Hospital", "City Clinic", "University Hospital"])
            ds.add_new(0x00091010, "LO", f"private {rng.random()}")
            out = io.BytesIO()
            ds.save_as(out)
            archive.writestr(f"study-{study:05d}/{i:06d}.dcm", out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()

    from anonymizer_app import engine
    from anonymizer_app.engine import Role, dicom
    from anonymizer_app.engine.dicom.archive import published_cells, write_archive
    from anonymizer_app.engine.run.pipeline import run
    from anonymizer_app.engine.run.spec import RunSpec

    with tempfile.TemporaryDirectory() as tmp:
        source_zip = Path(tmp) / "in.zip"
        t = time.perf_counter()
        make_zip(source_zip, args.files)
        print(f"made {args.files:,} files ({source_zip.stat().st_size / 1e6:.1f} MB zip) in "
              f"{time.perf_counter() - t:.1f} s")
        figures = {}
        t = time.perf_counter()
        source = dicom.open_source(source_zip)
        figures["check every file"] = time.perf_counter() - t
        t = time.perf_counter()
        qis = ["PatientSex", "PatientAge", "StudyDate"]
        extraction = dicom.extract(source, ["PatientID", *qis, "Modality"], "file")
        figures["extract the table (one row per file)"] = time.perf_counter() - t
        t = time.perf_counter()
        roles = {"PatientID": Role.IDENTIFYING, "Modality": Role.INSENSITIVE} | {q: Role.QUASI_IDENTIFYING for q in qis}
        table = engine.Table(extraction.frame, roles, name="bench")
        spec = RunSpec.build(table, dicom.date_hierarchies(extraction.frame, qis), algorithm="datafly", k=5,
                             suppression_limit=0.02)
        publication = run(spec)
        figures["pipeline (Datafly k=5, 2% suppression)"] = time.perf_counter() - t
        t = time.perf_counter()
        out = Path(tmp) / "out.zip"
        summary = write_archive(source, extraction.file_rows, published_cells(publication.table, publication.rows),
                                out, b"k" * 32)
        figures["write + verify the copies"] = time.perf_counter() - t
        for stage, seconds in figures.items():
            print(f"{stage:42s} {seconds:7.2f} s  {args.files / seconds:8.0f} files/s")
        print(f"written {summary.files_written:,} files, left out {summary.files_left_out:,}; output zip "
              f"{out.stat().st_size / 1e6:.1f} MB; actions {summary.actions}; private removed "
              f"{summary.private_removed:,}")


if __name__ == "__main__":
    main()
