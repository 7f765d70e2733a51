"""manage.py anonymize: identifying columns published as keyed pseudonyms, masks or random surrogates
(engine/run/identifiers.py; docs/definitions.md "Identifier treatments"). ``--identifier COL`` still removes COL.

- ``--pseudonymize COL``: HMAC-SHA-256 of the normalized value under the key of ``--pseudonym-key-file FILE``
  (the key as hex digits, at least 32 of them; blanks ignored) or of the environment variable
  ``ANONYMIZER_PSEUDONYM_KEY`` (hex); ``--pseudonym-fold-case`` folds case first, ``--token-length N`` sets the
  hex digits of pseudonyms and surrogates (default 16). The key of a web app key ring is the hex shown once
  at its creation, so a CLI run with it gives the web app's pseudonyms.
- ``--mask COL=prefix:3,suffix:2[,char:#]`` keeps the first/last characters; ``--mask COL=regex:PATTERN`` (the
  rest of the text is the pattern, commas included) replaces each match by ``*`` repeated.
- ``--surrogate COL``: a random token per distinct value, new in every run.
- ``--reidentification-table FILE --reidentification-key-file KEY``: the original -> pseudonym/surrogate table
  as CSV, kept encrypted (Fernet) under the key in KEY (made, mode 0600, when KEY does not exist yet); never part
  of OUT or of the report. ``manage.py reidentification_table FILE --key-file KEY`` decrypts it.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.run import identifiers as id_rules
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.services.exports import neutralize

if TYPE_CHECKING:  # cryptography is imported by the runs that write or read a table only (start-up time)
    from cryptography.fernet import Fernet

KEY_ENV = "ANONYMIZER_PSEUDONYM_KEY"
CLI_KEY = "cli"  # the name of the one key of a CLI run in its rules


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("identifying columns published as pseudonyms, masks or surrogates "
                                      "(--identifier COL removes COL)")
    group.add_argument("--pseudonymize", action="append", default=[], metavar="COL",
                       help="publish COL as keyed pseudonyms (HMAC-SHA-256 under --pseudonym-key-file)")
    group.add_argument("--pseudonym-key-file", default=None, metavar="FILE",
                       help=f"the pseudonymization key as hex digits (or the environment variable {KEY_ENV})")
    group.add_argument("--pseudonym-fold-case", action="store_true",
                       help="pseudonyms ignore case (values are case-folded before the HMAC)")
    group.add_argument("--token-length", type=int, default=id_rules.TOKEN_DEFAULT, metavar="N",
                       help=f"hex digits of a pseudonym or surrogate ({id_rules.TOKEN_MIN}..{id_rules.TOKEN_MAX}, "
                            f"default {id_rules.TOKEN_DEFAULT})")
    group.add_argument("--mask", action="append", default=[], metavar="COL=SPEC",
                       help="publish COL masked: COL=prefix:3,suffix:2[,char:#] or COL=regex:PATTERN")
    group.add_argument("--surrogate", action="append", default=[], metavar="COL",
                       help="publish COL as random surrogates (one per distinct value, new in every run)")
    group.add_argument("--reidentification-table", default=None, metavar="FILE",
                       help="write the original -> pseudonym/surrogate table to FILE, encrypted under "
                            "--reidentification-key-file")
    group.add_argument("--reidentification-key-file", default=None, metavar="KEY",
                       help="the table's Fernet key (made, mode 0600, if KEY does not exist); keep it apart from "
                            "FILE and from the published data")


def parse_mask(text: str) -> dict:
    """``COL=prefix:3,suffix:2[,char:#]`` or ``COL=regex:PATTERN`` as a rule dict."""
    column, sep, spec = text.partition("=")
    if not sep or not column or not spec:
        raise InputError(f"--mask {text}: give COL=prefix:N,suffix:N[,char:C] or COL=regex:PATTERN")
    if spec.startswith("regex:"):
        return {"column": column, "treatment": "mask", "regex": spec[len("regex:"):]}
    rule: dict = {"column": column, "treatment": "mask"}
    for part in spec.split(","):
        name, colon, value = part.partition(":")
        if not colon or name not in ("prefix", "suffix", "char"):
            raise InputError(f"--mask {text}: unknown part {part!r}; use prefix:N, suffix:N, char:C or regex:PATTERN")
        if name == "char":
            rule["char"] = value
        else:
            try:
                rule[name] = int(value)
            except ValueError:
                raise InputError(f"--mask {text}: {name} must be a whole number, got {value!r}") from None
    return rule


def read_key(opts: dict) -> bytes:
    """The key of --pseudonym-key-file FILE, else of $ANONYMIZER_PSEUDONYM_KEY: hex, at least 16 bytes."""
    if opts.get("pseudonym_key_file"):
        path = Path(opts["pseudonym_key_file"])
        try:
            text, where = path.read_text(encoding="utf-8"), f"--pseudonym-key-file {path}"
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"--pseudonym-key-file {path}: cannot read it ({exc})") from None
    elif os.environ.get(KEY_ENV):
        text, where = os.environ[KEY_ENV], KEY_ENV
    else:
        raise InputError(f"--pseudonymize needs a key: --pseudonym-key-file FILE or the environment variable {KEY_ENV}")
    try:
        key = bytes.fromhex("".join(text.split()))
    except ValueError:
        raise InputError(f"{where}: the key must be hexadecimal digits") from None
    if len(key) < 16:
        raise InputError(f"{where}: the key must be at least 16 bytes (32 hex digits), got {len(key)}")
    return key


def prepare(opts: dict) -> tuple[tuple[id_rules.IdentifierRule, ...], dict[str, bytes]]:
    """The rules of the flags and the key they need; each named column joins --identifier (its role)."""
    rules: list[dict] = []
    length = opts.get("token_length", id_rules.TOKEN_DEFAULT)
    for column in opts.get("pseudonymize") or []:
        rules.append({"column": column, "treatment": "pseudonym", "key": CLI_KEY, "length": length,
                      "case_sensitive": not opts.get("pseudonym_fold_case")})
    for text in opts.get("mask") or []:
        rules.append(parse_mask(text))
    for column in opts.get("surrogate") or []:
        rules.append({"column": column, "treatment": "surrogate", "length": length})
    if not rules:
        for flag in ("pseudonym_key_file", "reidentification_table", "reidentification_key_file"):
            if opts.get(flag):
                raise InputError(f"--{flag.replace('_', '-')} applies to --pseudonymize, --mask or --surrogate")
        if opts.get("pseudonym_fold_case"):
            raise InputError("--pseudonym-fold-case applies to --pseudonymize")
        return (), {}
    parsed = id_rules.parse_rules(rules)
    for rule in parsed:
        for flag in ("qi", "sensitive", "identifier"):
            if rule.column in (opts.get(flag) or []):
                raise InputError(f"--{flag} {rule.column}: the column is also pseudonymized, masked or surrogated; "
                                 f"name it once")
    if opts.get("reidentification_table") and not any(r.treatment in ("pseudonym", "surrogate") for r in parsed):
        raise InputError("--reidentification-table: only pseudonyms and surrogates have one (not masks)")
    if bool(opts.get("reidentification_table")) != bool(opts.get("reidentification_key_file")):
        raise InputError("--reidentification-table and --reidentification-key-file go together: the table is "
                         "kept encrypted under that key")
    if opts.get("reidentification_table"):
        table_key(opts["reidentification_key_file"], create=False)  # a bad key file is refused before the run
    keys = {CLI_KEY: read_key(opts)} if any(r.treatment == "pseudonym" for r in parsed) else {}
    opts["identifier"] = list(opts.get("identifier") or []) + [r.column for r in parsed]
    return parsed, keys


def with_rules(spec: RunSpec, rules: tuple[id_rules.IdentifierRule, ...], keys: dict[str, bytes]) -> RunSpec:
    """The spec with the flags' rules and key (unchanged without rules)."""
    return replace(spec, identifiers=tuple(rules), pseudonym_keys=dict(keys)) if rules else spec


class Capture:
    """Wraps the pipeline's run to keep the publication (its re-identification map) for write_table."""

    def __init__(self, run_pipeline):
        self.run_pipeline = run_pipeline
        self.publication = None

    def __call__(self, spec, progress, sink):
        self.publication = self.run_pipeline(spec, progress, sink)
        return self.publication


def table_key(path: str, create: bool) -> Fernet | None:
    """The Fernet key of a re-identification table from ``path``; with ``create``, a new key is written there
    (mode 0600) when the file does not exist. None: not there yet (``create`` False)."""
    from cryptography.fernet import Fernet

    target = Path(path)
    if not target.exists():
        if not create:
            return None
        key = Fernet.generate_key()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key + b"\n")
        return Fernet(key)
    try:
        return Fernet(target.read_bytes().strip())
    except (ValueError, OSError) as exc:
        raise InputError(f"--reidentification-key-file {path}: not a Fernet key (44 url-safe base64 characters; "
                         f"give a file that does not exist to have one made)") from exc


def write_table(path: str | None, key_path: str | None, publication, warn: Callable[[str], object]) -> str:
    """Write the re-identification table (CSV encrypted under the key file, mode 0600); the summary's note."""
    if not path or not key_path or publication is None:
        return ""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["column", "original", "pseudonym"])
    count = 0
    for column, pairs in publication.reidentification.items():
        for value, token in sorted(pairs.items()):
            writer.writerow([neutralize(column), neutralize(value), neutralize(token)])
            count += 1
    fernet = table_key(key_path, create=True)
    assert fernet is not None
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(fernet.encrypt(out.getvalue().encode("utf-8")))
    os.replace(tmp, target)
    warn(f"note: {target} holds the original identifiers behind the pseudonyms/surrogates, encrypted under "
         f"{key_path}: keep the key apart, never publish either (manage.py reidentification_table decrypts it)")
    return f"; re-identification table {target} ({count:,} values, encrypted)"


def read_table(path: str, key_path: str) -> str:
    """The decrypted CSV of a table written by ``write_table``."""
    from cryptography.fernet import InvalidToken

    fernet = table_key(key_path, create=False)
    if fernet is None:
        raise InputError(f"--key-file {key_path}: no such file")
    try:
        return fernet.decrypt(Path(path).read_bytes()).decode("utf-8")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc
    except InvalidToken as exc:
        raise InputError(f"{path}: not a re-identification table encrypted under {key_path}") from exc
