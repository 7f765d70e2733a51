"""manage.py anonymize_dicom: DICOM headers anonymized like a table, written back into de-identified copies.

    python manage.py anonymize_dicom scans.zip --level study --qi PatientBirthDate --qi PatientSex \\
        --algorithm datafly --k 2 --out scans-anonymized.zip --report report.json

IN is a zip or a folder of DICOM files (a file that is not DICOM is named and nothing is written). The
header attributes (--attribute, repeatable; default: the usual identifiers and quasi-identifiers that
are constant at the level) become a table, one row per file, series or study (--level). Roles: --qi,
--sensitive, --identifier; an attribute named by none of them gets the role the PS3.15 Annex E Basic
Profile proposes, except that a proposed quasi-identifier not named by --qi is treated as an identifier
(removed per profile: nothing leaves unprotected by default). UIDs (profile action U) are always
identifiers: their values in the files are keyed pseudonyms (--uid-key-file: a hex key kept by you, so
that several runs map a UID alike; without it a random key, consistent within this run). The table goes
through the one pipeline and its publishing gate; the published cells are written into copies of the
files of the published rows, every other Basic Profile attribute handled per its action, private tags
removed, pixel data untouched; each output file is re-read and checked before OUT is renamed into place.

Exit status: 0 done; 2 bad flags or files; 1 no solution or a failed check; nothing is written on error.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine import Role
from anonymizer_app.engine import dicom as dicom_engine
from anonymizer_app.engine.dicom.archive import published_cells, write_archive
from anonymizer_app.engine.dicom.deidentify import METHOD
from anonymizer_app.engine.run.pipeline import run
from anonymizer_app.engine.run.result import json_default
from anonymizer_app.engine.run.spec import REMOVE, SUPPRESSED_ROWS, RunSpec
from anonymizer_app.management.base import RUN_FAILED, USAGE_ERROR, OneLineCommand, UserError
from anonymizer_app.management.common import Progress, hierarchy_binding
from anonymizer_app.services.exports import export_csv

PROG = "anonymize_dicom"


class DicomError(UserError):
    pass


class Scaled:
    """A share of the progress bar for one stage."""

    def __init__(self, progress, start: float, stop: float):
        self.progress, self.start, self.stop = progress, start, stop

    def __call__(self, fraction: float, phase: str):
        self.progress(self.start + (self.stop - self.start) * max(0.0, min(1.0, float(fraction))), phase)
        return True


def read_uid_key(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except OSError as exc:
        raise DicomError(f"--uid-key-file {path}: cannot read it ({exc.strerror})") from None
    except ValueError:
        raise DicomError(f"--uid-key-file {path}: not a hexadecimal key") from None
    if len(key) < 16:
        raise DicomError(f"--uid-key-file {path}: {len(key)} bytes; give at least 16 (32 hex digits)")
    return key


def assign_roles(attributes: list[str], qi: list[str], sensitive: list[str], identifier: list[str]) -> dict[str, Role]:
    """Roles of the table's columns from the flags and the profile's proposals (see the module docstring)."""
    roles: dict[str, Role] = {}
    for flag, names, role in (("qi", qi, Role.QUASI_IDENTIFYING), ("sensitive", sensitive, Role.SENSITIVE),
                              ("identifier", identifier, Role.IDENTIFYING)):
        for name in names:
            keyword = dicom_engine.resolve_keyword(name)
            if keyword not in attributes:
                raise DicomError(f"--{flag} {name}: not one of the chosen attributes: {', '.join(attributes)}")
            if keyword in roles:
                raise DicomError(f"attribute {keyword} is given two roles")
            if role is not Role.IDENTIFYING and dicom_engine.uid_only_identifier(keyword):
                raise DicomError(f"--{flag} {keyword}: a UID the profile replaces by a pseudonym (U); it can only "
                                 f"be an identifier")
            roles[keyword] = role
    for keyword in attributes:
        if keyword not in roles:
            proposed = dicom_engine.proposed_role(keyword)
            roles[keyword] = Role.IDENTIFYING if proposed is Role.QUASI_IDENTIFYING else proposed
    return roles


class Command(OneLineCommand):
    prog = PROG
    error_class = DicomError
    help = ("Anonymize the headers of a zip or folder of DICOM files (PS3.15 Annex E Basic Profile plus "
            "k-anonymity of the chosen quasi-identifiers) and write de-identified copies into OUT.zip.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="IN", help="a zip file or a folder of DICOM files")
        parser.add_argument("--level", choices=tuple(dicom_engine.LEVELS), default="file",
                            help="one table row per file, per series or per study (default: file)")
        parser.add_argument("--attribute", action="append", default=[], metavar="KEYWORD",
                            help="a header attribute as a column (keyword or tag gggg,eeee); repeatable")
        parser.add_argument("--qi", action="append", default=[], metavar="KEYWORD")
        parser.add_argument("--sensitive", action="append", default=[], metavar="KEYWORD")
        parser.add_argument("--identifier", action="append", default=[], metavar="KEYWORD")
        parser.add_argument("--hierarchy", action="append", default=[], type=hierarchy_binding,
                            metavar="KEYWORD=FILE", help="a QI's hierarchy (default: dates year-month/year/"
                            "decade, others built from the data)")
        parser.add_argument("--algorithm", choices=sorted(engine.ALGORITHMS), default="datafly")
        parser.add_argument("--k", type=int, default=2, metavar="K")
        parser.add_argument("--suppression", type=float, default=0.0, metavar="FRACTION")
        parser.add_argument("--suppressed-rows", choices=tuple(SUPPRESSED_ROWS), default=REMOVE,
                            help="remove: the files of suppressed rows are left out; keep: written with '*'")
        parser.add_argument("--uid-key-file", default=None, metavar="FILE",
                            help="the key of the UID pseudonyms, in hex (default: a random key for this run)")
        parser.add_argument("--out", required=True, metavar="OUT.zip")
        parser.add_argument("--table", default=None, metavar="TABLE.csv", help="also write the published table")
        parser.add_argument("--report", default=None, metavar="REPORT.json")
        parser.add_argument("--quiet", action="store_true")

    def handle(self, *args, **opts):
        progress = Progress(self.stderr, enabled=not opts["quiet"])
        self._progress = progress
        try:
            summary = self._run(opts, progress)
        except engine.UnsatisfiableError as exc:
            raise DicomError(str(exc), RUN_FAILED) from None
        except engine.VerificationError as exc:
            raise DicomError(f"a check failed and nothing was written: {exc}", RUN_FAILED) from None
        except (engine.EngineError, OSError) as exc:
            raise DicomError(str(exc), USAGE_ERROR) from None
        finally:
            progress.close()
        if not opts["quiet"]:
            self.stdout.write(summary)

    def _run(self, opts: dict, progress: Progress) -> str:
        source_path, out = Path(opts["input"]), Path(opts["out"])
        report_path = Path(opts["report"]) if opts["report"] else None
        table_path = Path(opts["table"]) if opts["table"] else None
        if not source_path.exists():
            raise DicomError(f"{source_path}: no such file or folder")
        for path in (out, report_path, table_path):
            if path is not None and not path.parent.is_dir():
                raise DicomError(f"{path}: its folder does not exist")
        if out.resolve() == source_path.resolve():
            raise DicomError("--out: would overwrite IN")
        if opts["k"] < 1:
            raise DicomError("--k: at least 1")
        key = read_uid_key(Path(opts["uid_key_file"])) if opts["uid_key_file"] else secrets.token_bytes(32)

        source = dicom_engine.open_source(source_path, Scaled(progress, 0.0, 0.2))
        level = opts["level"]
        names = opts["attribute"] or [a.keyword for a in dicom_engine.default_attributes(level)]
        extraction = dicom_engine.extract(source, names, level, Scaled(progress, 0.0, 0.2))
        roles = assign_roles(extraction.attributes, opts["qi"], opts["sensitive"], opts["identifier"])
        qis = [c for c, r in roles.items() if r is Role.QUASI_IDENTIFYING]
        if not qis:
            raise DicomError("no quasi-identifier: name one with --qi (e.g. --qi PatientBirthDate)")
        hierarchies = dicom_engine.date_hierarchies(extraction.frame, qis)
        for column, path in opts["hierarchy"]:
            keyword = dicom_engine.resolve_keyword(column)
            if roles.get(keyword) is not Role.QUASI_IDENTIFYING:
                raise DicomError(f"--hierarchy {column}: not a --qi attribute")
            hierarchies[keyword] = engine.read_hierarchy(path, keyword)
        table = engine.Table(extraction.frame, roles, name=source_path.stem)
        spec = RunSpec.build(table, hierarchies, algorithm=opts["algorithm"], k=opts["k"],
                             suppression_limit=opts["suppression"], suppressed_rows=opts["suppressed_rows"])
        publication = run(spec, Scaled(progress, 0.2, 0.6))
        cells = published_cells(publication.table, publication.rows)
        method = f"{METHOD[:40]}; k={opts['k']}"
        summary = write_archive(source, extraction.file_rows, cells, out, key, method, Scaled(progress, 0.6, 1.0))
        try:
            # the report file: the run's report (built once, unchanged) followed by the archive's own section
            dicom_section = {"level": level, "rows": len(extraction.frame), "files": len(source.members),
                             "files_written": summary.files_written, "files_left_out": summary.files_left_out,
                             "private_attributes_removed": summary.private_removed,
                             "profile_actions": summary.actions, "roles": {c: r.value for c, r in roles.items()}}
            report = {**publication.report, "dicom": dicom_section}
            if table_path is not None:
                _write_text(table_path, export_csv(publication.table))
            if report_path is not None:
                _write_text(report_path, json.dumps(report, indent=2, default=json_default) + "\n")
        except BaseException:
            out.unlink(missing_ok=True)
            raise
        return (f"{out}: {summary.files_written:,} de-identified files of {len(source.members):,} "
                f"({summary.files_left_out:,} left out: their rows suppressed), {len(extraction.frame):,} rows "
                f"({dicom_engine.LEVEL_LABELS[level]}), k={opts['k']}, QIs {', '.join(qis)}"
                + (f"; report {report_path}" if report_path else ""))


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
