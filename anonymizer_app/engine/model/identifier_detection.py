"""Identifier detection: which columns of a table look like direct identifiers, and why.

One function, :func:`detect_identifiers`, looks at every column of a frame and returns a
:class:`Detection`: the columns suggested as identifiers (:class:`Suggestion`, each with its reasons, a
confidence and a suggested role) and the free-text columns that hold e-mail addresses or phone numbers
inside longer text (:class:`FreeTextFinding`, with a count and a masked sample). The columns page, the
risk page, the CLI, the API and a run's pre-flight all use it (docs/definitions.md, "Identifier
detection", gives the rules and thresholds).

Three kinds of evidence, combined per column:

- the column's **name** (English, Greek, Hebrew, Persian, German, French, Spanish, Dutch, Italian and
  Portuguese words): person names, contact details, addresses, national ids, record/person ids, bank
  accounts, network addresses, licence and plate numbers, dates of birth. A name qualified by a thing
  that is not a person (``clinic_name``, ``team_name``, ``animal_name``) is not a person's name.
- the **shape of the values**, on a bounded sample (:data:`SAMPLE_SIZE` non-missing values): e-mail
  addresses, phone numbers (the ``phonenumbers`` library), IBANs with valid check digits (mod 97), national
  ids whose check digits hold (US SSN shape, Dutch BSN 11-check, Spanish DNI/NIE letter, French NIR key,
  Israeli id, Greek AMKA), card numbers (Luhn), IPv4/IPv6 addresses, URLs and dates of birth.
- **uniqueness**: the column's distinction (distinct values / non-missing values) and separation (share of
  record pairs whose values differ), over every row; and, for an id column whose values repeat, the
  records per value (a person id: one person, several records).

Only fixed patterns of this module run on the values (never a user's pattern), vectorized through
pandas' string methods where they can be; phone numbers, IBANs and check digits are tested on the
candidates the patterns let through, at most :data:`SAMPLE_SIZE` per column.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import phonenumbers

IDENTIFYING = "identifying"
PERSON_ID = "person id"  # the role of a repeating person/patient id (suggested as identifying until it exists)
HIGH, MEDIUM, LOW = "high", "medium", "low"
HIGH_SCORE, MEDIUM_SCORE = 0.8, 0.5  # score >= 0.8: high; >= 0.5: medium; else low

SAMPLE_SIZE = 2000  # non-missing values whose shape is checked, per column
SHAPE_SHARE = 0.8  # share of the sampled values of one shape that makes the column that kind
SHAPE_SOME = 0.3  # ... a medium-confidence suggestion
UNIQUE_DISTINCTION = 0.95  # distinction at or above which a column "nearly identifies every record"
UNIQUE_SEPARATION = 0.999  # separation at or above which record pairs almost never share a value
MIN_ROWS = 20  # fewer non-missing values: uniqueness is no evidence
MIN_NAME_DISTINCT = 10  # a person-name column with fewer distinct values is medium (3..9) or low (<= 2)
REPEAT_MIN_DISTINCT = 10  # a repeating id with fewer distinct values is no person id
REPEAT_MAX_PER_VALUE = 1000  # ... nor one with more records per value on average
MAX_CELL = 254  # longer cells are not e-mails, phones, IBANs, ids or IPs (URLs: 2,048)

# ------------------------------------------------------------------------------------------ names

_PERSON_QUALIFIERS = {
    "patient", "subject", "person", "persons", "participant", "member", "customer", "client", "employee",
    "student", "pupil", "user", "respondent", "applicant", "owner", "contact", "mother", "father", "spouse",
    "child", "parent", "guardian", "doctor", "physician", "nurse", "driver", "passenger", "victim",
    "donor", "resident", "citizen", "voter", "beneficiary", "insured", "policyholder", "holder", "player",
    "runner", "athlete", "individual", "case", "worker", "staff", "teacher", "author", "buyer", "seller",
    "tenant", "guest", "visitor", "account", "caller", "sender", "recipient",
    # de, fr, es, nl, it, pt, el, he, fa
    "kunde", "mitarbeiter", "personne", "patiente", "salarie", "eleve",
    "paciente", "persona", "cliente", "empleado", "alumno", "klant", "medewerker", "leerling", "deelnemer",
    "persoon", "dipendente", "pessoa", "funcionario", "ασθενης", "ασθενη", "πελατης", "μαθητης",
    "υπαλληλος", "מטופל", "לקוח", "עובד", "بیمار", "مشتری", "کارمند",
}
# a qualifier naming a thing, not a person: "clinic_name" is not a person's name
_THING_QUALIFIERS = {
    "clinic", "hospital", "facility", "ward", "unit", "department", "dept", "team", "company", "business",
    "firm", "employer", "organisation", "organization", "org", "inst", "institution", "school", "college",
    "university", "country", "state", "city", "county", "region", "province", "district", "town",
    "municipality", "borough", "neighborhood", "neighbourhood", "product", "item", "brand", "model", "species",
    "animal", "pet", "breed", "drug", "medication", "test", "file", "site", "station", "mfr",
    "manufacturer", "store", "shop", "movie", "film", "book", "song", "track", "album", "game", "course",
    "program", "programme", "project", "event", "race", "variable", "var", "column", "field", "category",
    "group", "class", "type", "kind", "entity", "covered", "common", "scientific", "sas", "short", "long",
    "code", "hurricane", "storm", "ship", "vessel", "airport", "airline", "carrier", "plan", "package",
    "street", "road", "place", "location", "disease", "diagnosis", "sample", "lab", "job", "ad",
    "vendor", "supplier", "indicator", "series", "source", "object", "host", "domain", "server",
    "firma", "produkt", "klinik", "krankenhaus", "pays", "ville", "produit", "pais", "ciudad", "producto",
    "land", "stad", "bedrijf", "χωρα", "πολη", "εταιρεια",
}
# a qualifier that makes a person column an attribute, not an identifier ("patient_class", "birth_year")
_ATTRIBUTE_QUALIFIERS = {
    "class", "type", "group", "category", "count", "counts", "size", "days", "revenue", "age", "status",
    "year", "yr", "y", "month", "mo", "m", "day", "d", "place", "pl", "country", "city", "weight", "order",
    "search", "sex", "gender", "race", "income", "flag", "share", "per", "cen", "rate", "loan", "loans",
    "exp", "experience", "plan", "service", "messages", "letter", "house", "length", "initial",
    "initials", "sent", "has", "n", "num_of", "number_of", "total", "mean", "avg", "first", "last",
    "date", "issue", "issued", "expiry", "expiration", "valid", "datum", "fecha", "time",
    "jahr", "monat", "annee", "mois", "ano", "mes", "jaar", "maand",
}
_ID_TOKENS = {"id", "ids", "identifier", "key", "no", "nr", "num", "number", "code", "nummer", "numero",
              "numer", "κωδικος", "αριθμος", "מספר", "شماره", "کد"}

# (kind, phrases): a phrase is one or more normalized tokens that must appear in a row in the column name
_NAME_PHRASES: list[tuple[str, list[str]]] = [
    ("e-mail", ["email", "e mail", "mail", "mail address", "emailaddress", "emailadresse", "e mail adresse",
                "mailadres", "emailadres", "courriel", "correo", "correo electronico",
                "posta elettronica", "ηλεκτρονικο ταχυδρομειο", "דואל", "דוא ל", "ایمیل", "پست الکترونیک"]),
    ("phone", ["phone", "telephone", "tel", "telefon", "telefone", "telefono", "telefoon", "mobile", "mobil",
               "mobiel", "cell", "cellphone", "cellular", "fax", "handy", "gsm", "portable", "phonenumber",
               "telefonnummer", "handynummer", "mobilnummer", "rufnummer", "telefoonnummer", "mobielnummer",
               "numero de telephone", "numero de telefono",
               "τηλεφωνο", "κινητο", "τηλ", "טלפון", "נייד", "تلفن", "موبایل", "تلفن همراه"]),
    ("ip address", ["ip", "ip address", "ipaddress", "ipv4", "ipv6", "ip adresse", "adresse ip", "direccion ip"]),
    ("URL", ["url", "uri", "website", "web site", "homepage", "home page", "web", "link", "webpage", "site web"]),
    ("IBAN", ["iban", "bank account", "account number", "accountnumber", "kontonummer", "rekeningnummer",
              "rekening", "numero de compte", "compte bancaire", "cuenta bancaria", "numero de cuenta",
              "conto corrente", "λογαριασμος", "חשבון בנק", "شماره حساب", "شبا"]),
    ("card number", ["card number", "cardnumber", "credit card", "creditcard", "debit card",
                     "kreditkarte", "carte bancaire", "tarjeta", "πιστωτικη καρτα"]),
    ("national id", ["ssn", "social security", "social security number", "national id", "national identifier",
                     "national insurance", "nino", "nin", "bsn", "burgerservicenummer", "sofinummer", "nir",
                     "insee", "numero de securite sociale", "securite sociale", "dni", "nie", "nif", "curp",
                     "sin", "tax id", "taxid", "tin", "steuer id", "steueridentifikationsnummer",
                     "sozialversicherungsnummer", "personalausweis", "ausweis", "passport", "passport number",
                     "reisepass", "passeport", "pasaporte", "paspoort", "nhs number", "nhs", "codice fiscale",
                     "cpf", "amka", "afm", "αμκα", "αφμ", "ταυτοτητα", "αριθμος ταυτοτητας", "תעודת זהות", "ת ז",
                     "תז", "کد ملی", "کدملی", "شماره ملی", "id card", "identity card", "identity number",
                     "personnummer", "pesel"]),
    ("medical record number", ["mrn", "medical record", "medical record number", "chart number", "hospital number",
                               "patientennummer", "numero de dossier", "dossier", "historia clinica", "patientnummer"]),
    ("licence or plate number", ["license", "licence", "license number", "licence number", "driver license",
                                 "drivers license", "driving licence", "plate", "license plate", "licence plate",
                                 "number plate", "registration number", "vin", "kennzeichen", "fuhrerschein",
                                 "immatriculation", "permis", "matricula", "kenteken", "rijbewijs", "targa",
                                 "πινακιδα", "διπλωμα", "רישיון", "פלאקה", "پلاک", "گواهینامه", "imei",
                                 "mac address", "serial number", "device id", "badge", "bib", "ticket"]),
    ("date of birth", ["dob", "date of birth", "birth date", "birthdate", "birthday", "born", "date naissance",
                       "date de naissance", "naissance", "geburtsdatum", "geburtstag", "fecha de nacimiento",
                       "fecha nacimiento", "nacimiento", "geboortedatum", "data di nascita", "data de nascimento",
                       "ημερομηνια γεννησης", "γεννηση", "תאריך לידה", "تاریخ تولد", "birth"]),
    ("address", ["address", "addr", "street address", "home address", "postal address", "adresse", "anschrift",
                 "strasse", "strase", "hausnummer", "rue", "direccion", "domicilio", "calle", "adres", "straat",
                 "huisnummer", "indirizzo", "endereco", "morada", "διευθυνση", "οδος", "כתובת", "רחוב", "آدرس",
                 "نشانی", "خیابان", "street"]),
    ("surname", ["last name", "lastname", "lname", "surname", "surnames", "family name", "familyname",
                 "maiden name", "nom de famille", "nom", "nachname", "familienname", "apellido", "apellidos",
                 "achternaam", "cognome", "sobrenome", "apelido", "επωνυμο", "שם משפחה", "نام خانوادگی"]),
    ("first name", ["first name", "firstname", "fname", "given name", "givenname", "forename", "forenames",
                    "middle name", "christian name", "prenom", "vorname", "voornaam", "nombre de pila", "nome proprio",
                    "primeiro nome", "ονομα", "שם פרטי", "نام کوچک"]),
    ("full name", ["full name", "fullname", "name", "names", "nombre", "nombre completo", "nome", "naam",
                   "volledige naam", "nom complet", "ονοματεπωνυμο", "שם", "שם מלא", "نام", "نام کامل"]),
    ("person id", ["pid", "patient", "subject", "person", "participant", "respondent", "patid", "subjid",
                   "subjectid", "usubjid", "patientid", "personid", "patnr", "patno", "userid", "customerid", "memberid", "studentid",
                   "employeeid", "clientid", "caseid", "recordid", "record id", "record", "case number", "id"]),
]


def _normalize_name(name: object) -> list[str]:
    """The column name as lower-case tokens without accents: "fakeFirstName" -> ["fake", "first", "name"]."""
    text = str(name)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)  # camelCase
    text = re.sub(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])", " ", text)
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("ς", "σ")  # Greek final sigma
    return [t for t in re.split(r"[^\w]+|_", text) if t]


def _phrase_tokens(phrase: str) -> list[str]:
    return _normalize_name(phrase)


_PHRASES = [(kind, [_phrase_tokens(p) for p in phrases]) for kind, phrases in _NAME_PHRASES]


def _find(tokens: list[str], phrase: list[str]) -> int:
    """Where ``phrase`` starts in ``tokens`` (-1: absent)."""
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        if tokens[i:i + n] == phrase:
            return i
    return -1


@dataclass(frozen=True)
class NameMatch:
    kind: str
    phrase: str
    others: tuple[str, ...]  # the name's tokens outside the phrase


def match_name(name: object) -> NameMatch | None:
    """The kind of identifier a column's name announces (None: none), the longest phrase first."""
    tokens = _normalize_name(name)
    if not tokens:
        return None
    best: tuple[int, int, NameMatch] | None = None
    for order, (kind, phrases) in enumerate(_PHRASES):
        for phrase in phrases:
            at = _find(tokens, phrase)
            if at < 0:
                continue
            others = tuple(tokens[:at] + tokens[at + len(phrase):])
            rank = (len(phrase), -order)
            if best is None or rank > (best[0], best[1]):
                best = (rank[0], rank[1], NameMatch(kind, " ".join(phrase), others))
    return best[2] if best else None


# ------------------------------------------------------------------------------------------ values

_EMAIL = r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
_EMAIL_IN = r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
_URL = r"(?:https?|ftp)://[^\s/?#]+[^\s]*|www\.[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24}(?:/[^\s]*)?"
# a phone candidate: digits in groups, an optional + or 00 in front, 7 to 15 digits in all
_PHONE = r"(?:\+|00)?\(?\d{1,4}\)?(?:[ .\-/]?\(?\d{1,5}\)?){1,6}"
_PHONE_IN = r"(?<![\w.@])(?:\+\d{1,3}[ .\-]?)?\(?\d{2,4}\)?[ .\-]\d{2,4}(?:[ .\-]\d{2,4}){0,3}(?![\w@])|\+\d{8,14}(?!\w)"
_IBAN = r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}"
_SSN = r"(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}"
_DIGITS = r"\d{6,19}"
_DNI = r"[XYZ]?\d{7,8}[A-Z]"
_IP = r"[0-9A-Fa-f:.]{2,45}"

# ISO 13616 lengths of the IBANs of the countries most likely here (others: 15..34 characters)
_IBAN_LENGTH = {
    "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18,
    "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IR": 26, "IS": 26, "IT": 27, "LT": 20,
    "LU": 20, "LV": 21, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24,
    "TR": 26,
}
_PHONE_REGIONS = ("US", "GB", "DE", "FR", "NL", "ES", "IT", "GR", "IL", "IR")


def iban_valid(value: str) -> bool:
    """ISO 13616: the country's length (where known) and the mod-97 check of the rearranged digits."""
    v = value.replace(" ", "").upper()
    if not re.fullmatch(_IBAN, v):
        return False
    if _IBAN_LENGTH.get(v[:2], len(v)) != len(v):
        return False
    digits = "".join(str(int(ch, 36)) for ch in v[4:] + v[:4])
    return int(digits) % 97 == 1


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def bsn_valid(digits: str) -> bool:
    """The Dutch citizen service number's 11-check (9 digits; the last weighted -1)."""
    if len(digits) != 9 or digits == "000000000":
        return False
    total = sum(int(d) * w for d, w in zip(digits, (9, 8, 7, 6, 5, 4, 3, 2, -1)))
    return total % 11 == 0


def dni_valid(value: str) -> bool:
    """A Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits) with its check letter."""
    v = value.replace("-", "").replace(" ", "").upper()
    if not re.fullmatch(_DNI, v):
        return False
    head = v[:-1]
    if head[0] in "XYZ":
        head = str("XYZ".index(head[0])) + head[1:]
    if len(head) != 8:
        return False
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(head) % 23] == v[-1]


def nir_valid(digits: str) -> bool:
    """A French social security number: 13 digits then the key 97 - (n mod 97) (Corsica's 2A/2B as digits)."""
    d = digits.replace(" ", "").upper()
    if len(d) != 15 or d[0] not in "12":
        return False
    body = d[:13].replace("2A", "19").replace("2B", "18")
    if not body.isdigit() or not d[13:].isdigit():
        return False
    return 97 - int(body) % 97 == int(d[13:])


def israeli_id_valid(digits: str) -> bool:
    """An Israeli identity number: 9 digits, the Luhn-like check with weights 1, 2, 1, 2, ..."""
    if len(digits) != 9:
        return False
    total = 0
    for i, ch in enumerate(digits):
        d = int(ch) * (1 + i % 2)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def amka_valid(digits: str) -> bool:
    """A Greek social security number (AMKA): DDMMYY then 5 digits, Luhn-valid."""
    if len(digits) != 11:
        return False
    dd, mm = int(digits[:2]), int(digits[2:4])
    return 1 <= dd <= 31 and 1 <= mm <= 12 and luhn_valid(digits)


_NANP = r"(?:\+?1[ .\-]?)?\(?[2-9]\d{2}\)?[ .\-]?[2-9]\d{2}[ .\-]\d{4}"


def _phone_valid(value: str) -> bool:
    """A phone number by the phonenumbers library, written as people write them: international (+ or 00
    in front), national with the trunk prefix 0 (Europe, Israel, Iran), or North American (415) 555-2671.
    A plain run of digits without a leading 0 (8002756) is an id, not a phone number."""
    v = value.strip()
    digits = sum(ch.isdigit() for ch in v)
    if not 7 <= digits <= 15:
        return False
    if v.startswith("00"):
        v = "+" + v[2:]
    if v.startswith("+"):
        regions: tuple[str | None, ...] = (None,)
    elif v.lstrip("(").startswith("0"):
        regions = tuple(r for r in _PHONE_REGIONS if r != "US")
    elif re.fullmatch(_NANP, v):
        regions = ("US",)
    else:
        return False
    for region in regions:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(v, region)):
                return True
        except phonenumbers.NumberParseException:
            return False
    return False


def _ip_valid(value: str) -> bool:
    if "." not in value and ":" not in value:
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def mask_email(value: str) -> str:
    """j***@e***.org: the first character of the local part and of the domain, the top-level domain."""
    local, _, domain = value.partition("@")
    head, _, tld = domain.rpartition(".")
    return f"{local[:1]}***@{head[:1]}***.{tld}"


def mask_phone(value: str) -> str:
    """Every digit but the last two as *, the separators kept: +** *** *** **67."""
    positions = [i for i, ch in enumerate(value) if ch.isdigit()]
    keep = set(positions[-2:])
    return "".join("*" if ch.isdigit() and i not in keep else ch for i, ch in enumerate(value))


@dataclass(frozen=True)
class Shape:
    """The value shapes found on a column's sample: kind -> share of the sampled values of that kind."""

    sampled: int
    shares: dict[str, float]
    examples: dict[str, str]  # kind -> a masked example

    def best(self) -> tuple[str, float] | None:
        if not self.shares:
            return None
        kind = max(self.shares, key=lambda k: (self.shares[k], k))
        return kind, self.shares[kind]


def _sample(values: pd.Series, size: int, seed: int) -> pd.Series:
    """Up to ``size`` non-missing values as stripped text (a random sample, fixed seed)."""
    s = values[values.notna()]
    if len(s) > size:
        s = s.sample(size, random_state=seed)
    s = s.astype(str).str.strip()
    return s[(s != "") & ~s.str.lower().isin(("nan", "na", "n/a", "none", "null", "?", "-"))]


_DATE_SHAPE = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}"
_DECIMAL = r"[-+]?(?:\d{1,30}(?:[.,]\d{0,30})?|[.,]\d{1,30})(?:[eE][-+]?\d{1,3})?"


def value_shapes(sample: pd.Series) -> Shape:
    """The share of the sampled values that are e-mails, phones, IBANs, national ids, card numbers, IPs,
    URLs or dates; each check runs once per distinct sampled value (vectorized pre-filters, the library
    and check-digit tests on the candidates only)."""
    n = len(sample)
    if not n:
        return Shape(0, {}, {})
    counts = sample.value_counts(sort=False)
    values = pd.Series(counts.index.astype(str), index=counts.index)
    weight = counts.to_numpy()
    shares: dict[str, float] = {}
    examples: dict[str, str] = {}

    def share(hits: pd.Series) -> float:
        return float(weight[values.index.get_indexer(hits.index)].sum()) / n

    def put(kind: str, hits: pd.Series, mask=None) -> None:
        if len(hits):
            shares[kind] = share(hits)
            first = str(hits.iloc[0])
            examples[kind] = mask(first) if mask else first[:1] + "***"

    short = values[values.str.len() <= MAX_CELL]
    numeric = short.str.fullmatch(_DECIMAL)
    dated = short.str.fullmatch(_DATE_SHAPE)
    if dated.any():
        cand = short[dated]
        parsed = pd.to_datetime(cand, errors="coerce", format="mixed")
        put("date", cand[parsed.notna().to_numpy()], lambda v: v[:4] + "***")
    digits_only = short.str.fullmatch(r"\d{1,30}")
    # a number (but a run of digits) or a date is none of the shapes below
    text = short[~(numeric & ~digits_only) & ~dated]
    if not len(text):
        return Shape(n, shares, examples)
    letters = text.str.contains(r"[^\W\d_]")
    if letters.any():
        worded = text[letters]
        put("e-mail", worded[worded.str.fullmatch(_EMAIL)], mask_email)
        put("URL", worded[worded.str.fullmatch(_URL)], lambda v: v[:12] + "***")
        ibans = worded.str.replace(" ", "", regex=False).str.upper()
        cand = ibans[ibans.str.fullmatch(_IBAN)]
        put("IBAN", cand[cand.map(iban_valid).astype(bool)] if len(cand) else cand,
            lambda v: v[:4] + "***" + v[-2:])
    cand = text[text.str.fullmatch(_PHONE) & (text.str.count(r"\d") >= 7)]
    put("phone", cand[cand.map(_phone_valid).astype(bool)] if len(cand) else cand, mask_phone)
    put("national id", text[text.str.fullmatch(_SSN)], lambda v: "***-**-" + v[-4:])
    compact = text.str.replace(r"[ .\-]", "", regex=True)
    digits = compact[compact.str.fullmatch(_DIGITS)]
    for kind, check, length in (("national id", bsn_valid, 9), ("national id", amka_valid, 11),
                                ("national id", israeli_id_valid, 9), ("card number", luhn_valid, 0)):
        cand = digits[digits.str.len() == length] if length else digits[digits.str.len().between(13, 19)]
        if kind in shares or not len(cand) or share(cand) < SHAPE_SHARE or len(cand) < MIN_ROWS:
            continue
        ok = cand[cand.map(check).astype(bool)]
        # a check passed by chance (1 in 10 or 11) is no evidence: nearly all candidates must pass
        if share(ok) >= SHAPE_SHARE * share(cand):
            put(kind, ok, lambda v: "*" * (len(v) - 2) + v[-2:])
    if "national id" not in shares:
        nir = compact[compact.str.len() == 15]
        if len(nir) >= MIN_ROWS and share(nir) >= SHAPE_SHARE:
            put("national id", nir[nir.map(nir_valid).astype(bool)], lambda v: "*" * 13 + v[-2:])
    if "national id" not in shares and letters.any():
        dni = compact[compact.str.fullmatch(_DNI, case=False)]
        if len(dni):
            put("national id", dni[dni.map(dni_valid).astype(bool)], lambda v: "*" * (len(v) - 1) + v[-1])
    cand = text[text.str.fullmatch(_IP) & (text.str.count(r"[.:]") >= 2)]
    put("ip address", cand[cand.map(_ip_valid).astype(bool)] if len(cand) else cand,
        lambda v: v.split(".")[0] + ".***" if "." in v else v.split(":")[0] + ":***")
    return Shape(n, shares, examples)


_EVENT_DATE_TOKENS = {"date", "time", "day", "week", "month", "created", "updated", "timestamp", "datum",
                      "fecha", "data", "period", "at", "on", "when"}


def _birth_like(sample: pd.Series, distinct: int) -> tuple[bool, str]:
    """Dates at day precision in the past, spread over at least 15 years, and not a calendar (a daily
    series whose distinct dates fill half of their span or more): dates of birth by their shape."""
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    parsed = parsed[parsed.notna()]
    if len(parsed) < MIN_ROWS:
        return False, ""
    years = parsed.dt.year
    now = pd.Timestamp.now().year
    spread = int(years.max() - years.min())
    days = (parsed.max() - parsed.min()).days + 1
    calendar = distinct >= 0.5 * days
    ok = bool(years.min() >= 1880 and years.max() <= now and spread >= 15 and parsed.dt.day.nunique() > 12
              and not calendar)
    return ok, f"day-precision dates from {years.min()} to {years.max()}"


# ------------------------------------------------------------------------------------------ findings

@dataclass(frozen=True)
class Suggestion:
    """A column suggested as an identifier: why, how sure, and which role to give it."""

    column: str
    kind: str  # what it looks like: "surname", "e-mail", "person id", "unique values", ...
    confidence: str  # high, medium or low
    score: float  # 0..1 (high >= 0.8, medium >= 0.5)
    reasons: tuple[str, ...]
    role: str = IDENTIFYING  # the role to give it (identifying; a repeating id: see ``person_id``)
    person_id: bool = False  # an id that repeats across records: one person, several records
    rows: int = 0  # non-missing values
    distinct: int = 0

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    @property
    def suggested_role(self) -> str:
        """The role named in words: "person id" for a repeating person id, else the role."""
        return PERSON_ID if self.person_id else self.role

    def to_dict(self) -> dict:
        return {"column": self.column, "kind": self.kind, "confidence": self.confidence,
                "score": round(self.score, 3), "reason": self.reason, "role": self.role,
                "suggested_role": self.suggested_role, "person_id": self.person_id,
                "rows": self.rows, "distinct": self.distinct}


@dataclass(frozen=True)
class FreeTextFinding:
    """A text column holding e-mail addresses or phone numbers inside longer values."""

    column: str
    sampled: int  # values looked at
    emails: int  # sampled values holding an e-mail address
    phones: int  # ... a phone number
    samples: tuple[str, ...]  # masked

    @property
    def message(self) -> str:
        what = []
        if self.emails:
            what.append(f"{self.emails:,} with an e-mail address")
        if self.phones:
            what.append(f"{self.phones:,} with a phone number")
        sample = f" (e.g. {', '.join(self.samples)})" if self.samples else ""
        return f"free text: of {self.sampled:,} values looked at, {' and '.join(what)}{sample}"

    def to_dict(self) -> dict:
        return {"column": self.column, "sampled": self.sampled, "emails": self.emails, "phones": self.phones,
                "samples": list(self.samples), "message": self.message}


@dataclass
class Detection:
    """Every suggestion and free-text finding of a table, in column order."""

    suggestions: list[Suggestion] = field(default_factory=list)
    free_text: list[FreeTextFinding] = field(default_factory=list)

    def for_column(self, column: str) -> Suggestion | None:
        return next((s for s in self.suggestions if s.column == column), None)

    def free_text_for(self, column: str) -> FreeTextFinding | None:
        return next((f for f in self.free_text if f.column == column), None)

    def with_confidence(self, *levels: str) -> list[Suggestion]:
        return [s for s in self.suggestions if s.confidence in levels]

    @property
    def high(self) -> list[Suggestion]:
        return self.with_confidence(HIGH)

    def to_dict(self) -> dict:
        return {"suggestions": [s.to_dict() for s in self.suggestions],
                "free_text": [f.to_dict() for f in self.free_text]}


def _confidence(score: float) -> str:
    return HIGH if score >= HIGH_SCORE else MEDIUM if score >= MEDIUM_SCORE else LOW


def _uniqueness(values: pd.Series) -> tuple[int, int, float, int]:
    """Non-missing values, distinct values, separation and the largest count of one value."""
    text = values[values.notna()].astype(str).str.strip()
    counts = text[text != ""].value_counts()
    n = int(counts.sum())
    distinct = len(counts)
    if n < 2:
        return n, distinct, 0.0, int(counts.max()) if distinct else 0
    f = counts.to_numpy(dtype=np.float64)
    separation = 1.0 - float((f * (f - 1)).sum()) / (n * (n - 1.0))
    return n, distinct, separation, int(f.max())


def _id_like(sample: pd.Series) -> bool:
    """Short codes or numbers (no spaces; digits in most), as ids are written."""
    if not len(sample):
        return False
    short = sample.str.len() <= 40
    spaced = sample.str.contains(" ", regex=False)
    digits = sample.str.contains(r"\d")
    return bool((short & ~spaced).mean() >= 0.9 and digits.mean() >= 0.5)


def _numeric(sample: pd.Series) -> str | None:
    """integer or decimal when every sampled value is one, else None."""
    if not len(sample):
        return None
    if sample.str.fullmatch(r"[-+]?\d{1,30}").all():
        return "integer"
    if sample.str.fullmatch(r"[-+]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][-+]?\d{1,3})?").all():
        return "decimal"
    return None


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _fmt(n: int) -> str:
    return f"{n:,}"


def detect_column(column: str, values: pd.Series, sample_size: int = SAMPLE_SIZE,
                  seed: int = 0) -> tuple[Suggestion | None, FreeTextFinding | None]:
    """The suggestion for one column (None: nothing points at an identifier) and its free-text finding."""
    rows, distinct, separation, top = _uniqueness(values)
    sample = _sample(values, sample_size, seed)
    shape = value_shapes(sample)
    numeric = _numeric(sample)
    match = match_name(column)
    distinction = distinct / rows if rows else 0.0
    per_value = rows / distinct if distinct else 0.0
    counted = f"{_fmt(distinct)} distinct values in {_fmt(rows)} records"
    reasons: list[str] = []
    kind = ""
    score = 0.0
    person_id = False

    head = ""

    def raise_to(value: float, why: str, what: str) -> None:
        nonlocal score, kind, head
        reasons.append(why)
        if value > score:
            score, kind, head = value, what, why

    # -- value shapes: a column mostly of e-mails, phones, IBANs, ids, IPs or URLs
    best = shape.best()
    shaped = {k: v for k, v in shape.shares.items() if k != "date"}
    for what, share in sorted(shaped.items(), key=lambda kv: -kv[1]):
        example = shape.examples.get(what, "")
        label = {"e-mail": "e-mail addresses", "phone": "phone numbers", "IBAN": "IBANs with valid check digits",
                 "national id": "national id numbers with valid check digits", "card number":
                 "card numbers (Luhn-valid)", "ip address": "IP addresses", "URL": "URLs"}[what]
        why = f"{share:.0%} of {_fmt(shape.sampled)} sampled values are {label} (e.g. {example})"
        if share >= SHAPE_SHARE:
            raise_to(0.95, why, what)
        elif share >= SHAPE_SOME:
            raise_to(0.6, why, what)
        break  # the dominant shape only
    del best

    # -- the name
    if match is not None:
        others = set(match.others)
        thing = others & _THING_QUALIFIERS
        attribute = others & _ATTRIBUTE_QUALIFIERS
        person = others & _PERSON_QUALIFIERS
        k = match.kind
        if k in ("surname", "first name", "full name"):
            label = {"surname": "a surname", "first name": "a first name", "full name": "a name"}[k]
            bare = k == "full name" and not person
            if thing and not person:
                raise_to(0.2, f"name looks like the name of {_a(min(thing))}, not of a person; {counted}", k)
            elif attribute and not person and k != "full name":
                pass  # "first_visit", "last_initial": not a name column
            elif numeric is not None and distinct > 2:
                raise_to(0.3, f"name looks like {label} column but the values are numbers; {counted}", k)
            elif bare:
                if distinct >= 50 or (distinct >= MIN_NAME_DISTINCT and distinction >= 0.5):
                    raise_to(0.85, f"name looks like a name column; {counted}", k)
                elif distinct >= MIN_NAME_DISTINCT:
                    raise_to(0.6, f"name looks like a name column; {counted} (few: it may name a thing)", k)
                else:
                    raise_to(0.25, f"name looks like a name column but it has only {_fmt(distinct)} distinct "
                                   f"values (a product or category name?)", k)
            else:
                if distinct >= MIN_NAME_DISTINCT:
                    raise_to(0.9, f"name looks like {label} column; {counted}", k)
                elif distinct >= 3:
                    raise_to(0.6, f"name looks like {label} column; only {counted}", k)
                else:
                    raise_to(0.25, f"name looks like {label} column but it has only {_fmt(distinct)} distinct "
                                   "values", k)
        elif k in ("e-mail", "phone", "ip address", "URL", "IBAN", "card number"):
            confirmed = shape.shares.get(k, 0.0)
            what = {"e-mail": "an e-mail", "phone": "a phone", "ip address": "an IP address", "URL": "a URL",
                    "IBAN": "a bank account", "card number": "a card number"}[k]
            if attribute or thing:
                if confirmed >= SHAPE_SOME:
                    raise_to(0.9, f"name looks like {what} column and its values agree", k)
            elif confirmed >= SHAPE_SOME:
                raise_to(0.97, f"name looks like {what} column and its values agree", k)
            elif distinct <= 2 or numeric is not None and k not in ("phone", "IBAN", "card number"):
                raise_to(0.2, f"name looks like {what} column but its values are not ({counted}: a flag or "
                              "a count?)", k)
            elif distinct >= MIN_NAME_DISTINCT:
                raise_to(0.6, f"name looks like {what} column, but its values were not recognized as such; "
                              f"{counted}", k)
            else:
                raise_to(0.4, f"name looks like {what} column; only {counted}", k)
        elif k in ("national id", "medical record number", "licence or plate number"):
            what = {"national id": "a national id / social security number",
                    "medical record number": "a medical record number",
                    "licence or plate number": "a licence, plate or other personal number"}[k]
            if attribute and not (others & {"number", "no", "nr", "num"}) or thing:
                if distinct > 2 and distinction >= UNIQUE_DISTINCTION:
                    raise_to(0.5, f"name mentions {what}; {counted}", k)
            elif distinct >= MIN_NAME_DISTINCT and (distinction >= 0.5 or rows < MIN_ROWS):
                raise_to(0.9, f"name looks like {what} column; {counted}", k)
            elif distinct >= MIN_NAME_DISTINCT:
                raise_to(0.65, f"name looks like {what} column; {counted}", k)
            elif distinct > 2:
                raise_to(0.4, f"name looks like {what} column; only {counted}", k)
        elif k == "address":
            textual = float(sample.str.contains(r"[^\W\d_]").mean()) if len(sample) else 0.0
            numbered = float(sample.str.contains(r"\d").mean()) if len(sample) else 0.0
            street_only = match.phrase == "street" or "name" in others
            if thing - {"street"} and not person:
                raise_to(0.3, f"name mentions the address of {_a(min(thing - {'street'}))}; {counted}", k)
            elif distinct <= 2 or textual < 0.5:
                if distinct > 2:
                    raise_to(0.3, f"name looks like an address column but its values are not; {counted}", k)
            elif street_only and numbered < 0.5:
                raise_to(0.55, f"name looks like a street column (no house numbers); {counted}", k)
            elif distinct >= MIN_NAME_DISTINCT:
                raise_to(0.9, f"name looks like an address column; {counted}", k)
            else:
                raise_to(0.6, f"name looks like an address column; only {counted}", k)
        elif k == "date of birth":
            dates = shape.shares.get("date", 0.0)
            year_only = bool(others & {"year", "yr", "y", "month", "mo", "m", "place", "pl", "country", "city",
                                       "weight", "order", "rate", "jahr", "annee", "ano", "jaar", "day", "d"})
            if year_only:
                pass  # a year, month or place of birth: a quasi-identifier, not a direct one
            elif dates >= SHAPE_SHARE:
                raise_to(0.9, f"name looks like a date-of-birth column and {dates:.0%} of the sampled values "
                              f"are dates; {counted}", k)
            elif match.phrase != "birth" and distinct >= MIN_NAME_DISTINCT and numeric is None:
                raise_to(0.6, f"name looks like a date-of-birth column; {counted}", k)
        elif k == "person id":
            bare_id = match.phrase == "id" and not others
            idish = bool(others & _ID_TOKENS) or match.phrase not in ("patient", "subject", "person",
                                                                        "participant", "respondent", "record")
            if match.phrase == "id" and others:
                qualified = others - {"id"}
                if qualified & _PERSON_QUALIFIERS:
                    idish = True
                elif qualified & (_THING_QUALIFIERS | _ATTRIBUTE_QUALIFIERS):
                    idish = False
                    if distinct >= MIN_NAME_DISTINCT and distinction >= UNIQUE_DISTINCTION:
                        raise_to(0.6, f"name looks like the id of {_a(min(qualified))}; every record has "
                                      f"its own value ({counted})", "record id")
                else:
                    idish = False
                    if distinct >= MIN_NAME_DISTINCT and distinction >= UNIQUE_DISTINCTION:
                        raise_to(0.8, f"name looks like a key; every record has its own value ({counted})",
                                 "record id")
                    elif distinct >= 100:
                        raise_to(0.5, f"name looks like a key that repeats ({counted}): a person's, or "
                                      "another table's?", "record id")
            elif attribute or thing:
                idish = False
            elif not idish and not others:
                idish = _id_like(sample)
            if idish and distinct >= REPEAT_MIN_DISTINCT:
                if distinction >= UNIQUE_DISTINCTION or per_value < 1.01:
                    raise_to(0.9, f"name looks like {'an' if bare_id else 'a person or record'} id; every "
                                  f"record has its own value ({counted})", "record id")
                elif per_value <= REPEAT_MAX_PER_VALUE:
                    person_id = True
                    raise_to(0.9, f"name looks like a person id that repeats across records ({counted}, "
                                  f"{per_value:.1f} records per value on average, up to {_fmt(top)}): one "
                                  "person, several records", "person id")
            elif idish and distinct > 2:
                raise_to(0.4, f"name looks like an id but it has only {counted}", "person id")

    # -- uniqueness alone
    dated = shape.shares.get("date", 0.0) >= SHAPE_SHARE
    event_date = match is None and bool(set(_normalize_name(column)) & _EVENT_DATE_TOKENS)
    if rows >= MIN_ROWS and distinction >= UNIQUE_DISTINCTION and separation >= UNIQUE_SEPARATION:
        why = (f"{distinction:.1%} of the values are distinct (distinction {distinction:.3f}, separation "
               f"{separation:.4f}; {counted})")
        if numeric == "decimal" or (numeric == "integer" and not _sequence_or_code(sample)):
            if score:
                reasons.append(why + ": a measurement, not a key")
        elif dated:
            ok, span = _birth_like(sample, distinct)
            if ok and not event_date and score == 0:
                raise_to(0.55, f"values look like dates of birth ({span}); {why}", "date of birth")
        else:
            raise_to(0.6, f"nearly every record has its own value: {why}", "unique values")
    elif rows >= MIN_ROWS and score == 0 and dated and distinction >= 0.5 and not event_date:
        ok, span = _birth_like(sample, distinct)
        if ok:
            raise_to(0.5, f"values look like dates of birth ({span}); {counted}", "date of birth")

    free = _free_text(column, sample, shape)
    if score <= 0:
        return None, free
    return Suggestion(column=str(column), kind=kind, confidence=_confidence(score), score=score,
                      reasons=tuple(dict.fromkeys([head] + reasons)), person_id=person_id, rows=rows,
                      distinct=distinct), free


def _sequence_or_code(sample: pd.Series) -> bool:
    """Integers written as codes (leading zeros, a fixed width of 6+ digits): ids rather than quantities."""
    lengths = sample.str.len()
    return bool(sample.str.startswith("0").mean() >= 0.2 or (lengths.min() >= 6 and lengths.nunique() == 1))


def _free_text(column: str, sample: pd.Series, shape: Shape) -> FreeTextFinding | None:
    """E-mails or phone numbers inside longer text (a column not itself of e-mails or phones)."""
    if not len(sample) or shape.shares.get("e-mail", 0) >= SHAPE_SHARE or shape.shares.get("phone", 0) >= SHAPE_SHARE:
        return None
    text = sample[sample.str.len() > 0]
    long = text[text.str.contains(" ", regex=False) | (text.str.len() > 40)]
    if not len(long):
        return None
    emails = long.str.extract(f"({_EMAIL_IN})", expand=False).dropna()
    phone_cand = long[long.str.count(r"\d") >= 7].str.findall(_PHONE_IN)
    phones: list[str] = []
    phone_rows = 0
    for found in phone_cand:
        hits = [p for p in found if not re.fullmatch(_DATE_SHAPE, p.strip()) and _phone_valid(p)]
        if hits:
            phone_rows += 1
            phones.append(hits[0])
    if not len(emails) and not phone_rows:
        return None
    samples = [mask_email(e) for e in emails.iloc[:2]] + [mask_phone(p) for p in phones[:2]]
    return FreeTextFinding(str(column), len(sample), len(emails), phone_rows, tuple(samples))


def detect_identifiers(frame: pd.DataFrame, columns: Iterable[str] | None = None,
                       sample_size: int = SAMPLE_SIZE, seed: int = 0) -> Detection:
    """Suggestions and free-text findings for the frame's columns (``columns``: only these)."""
    out = Detection()
    wanted = list(frame.columns) if columns is None else [c for c in columns if c in frame.columns]
    for column in wanted:
        values = frame[column]
        if isinstance(values, pd.DataFrame):  # duplicate column names: the first
            values = values.iloc[:, 0]
        suggestion, free = detect_column(str(column), values, sample_size, seed)
        if suggestion is not None:
            out.suggestions.append(suggestion)
        if free is not None:
            out.free_text.append(free)
    return out


# ------------------------------------------------------------------------------------------ pre-flight

HELD_ROLES = ("insensitive", "sensitive")  # roles that publish a column's values as they are


def unconfirmed(detection: Detection, roles: Mapping[str, str], confirmed: Iterable[str] = ()) -> list[Suggestion]:
    """The high-confidence suggestions whose column would be published as is (role insensitive or
    sensitive) without the user's confirmation: a run is held until each is confirmed or its role set."""
    ok = {str(c) for c in confirmed}
    return [s for s in detection.high
            if str(roles.get(s.column, "insensitive")) in HELD_ROLES and s.column not in ok]


def hold_message(s: Suggestion, how_to_confirm: str = "confirm that it may be published as is") -> str:
    """The pre-flight's message for one held column."""
    role = PERSON_ID + " (identifying until that role exists)" if s.person_id else "identifying"
    return (f"Column {s.column!r} looks like a direct identifier ({s.reason}); its values would be published "
            f"as they are. Set its role to {role}, or {how_to_confirm}.")


def is_person_id(s: Suggestion | None) -> bool:
    return bool(s and s.person_id)
