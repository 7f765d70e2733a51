"""The column-name rules of identifier detection: the words (English, Greek, Hebrew, Persian, German, French,
Spanish, Dutch, Italian and Portuguese) that announce a kind of identifier, and the qualifiers that make a
name a thing's (``clinic_name``) or an attribute (``birth_year``) rather than a person's."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

PERSON_QUALIFIERS = {
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
THING_QUALIFIERS = {
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
ATTRIBUTE_QUALIFIERS = {
    "class", "type", "group", "category", "count", "counts", "size", "days", "revenue", "age", "status",
    "year", "yr", "y", "month", "mo", "m", "day", "d", "place", "pl", "country", "city", "weight", "order",
    "search", "sex", "gender", "race", "income", "flag", "share", "per", "cen", "rate", "loan", "loans",
    "exp", "experience", "plan", "service", "messages", "letter", "house", "length", "initial",
    "initials", "sent", "has", "n", "num_of", "number_of", "total", "mean", "avg", "first", "last",
    "date", "issue", "issued", "expiry", "expiration", "valid", "datum", "fecha", "time",
    "jahr", "monat", "annee", "mois", "ano", "mes", "jaar", "maand",
}
ID_TOKENS = {"id", "ids", "identifier", "key", "no", "nr", "num", "number", "code", "nummer", "numero",
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


def normalize_name(name: object) -> list[str]:
    """The column name as lower-case tokens without accents: "fakeFirstName" -> ["fake", "first", "name"]."""
    text = str(name)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)  # camelCase
    text = re.sub(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])", " ", text)
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("ς", "σ")  # Greek final sigma
    return [t for t in re.split(r"[^\w]+|_", text) if t]


def _phrase_tokens(phrase: str) -> list[str]:
    return normalize_name(phrase)


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
    tokens = normalize_name(name)
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


EVENT_DATE_TOKENS = {"date", "time", "day", "week", "month", "created", "updated", "timestamp", "datum",
                      "fecha", "data", "period", "at", "on", "when"}


@dataclass(frozen=True)
class Qualifiers:
    """A matched name's other tokens, and those of them that name a thing, an attribute or a person."""

    others: frozenset[str]
    thing: frozenset[str]
    attribute: frozenset[str]
    person: frozenset[str]


def qualifiers_of(match: NameMatch) -> Qualifiers:
    others = frozenset(match.others)
    return Qualifiers(others, others & THING_QUALIFIERS, others & ATTRIBUTE_QUALIFIERS, others & PERSON_QUALIFIERS)
