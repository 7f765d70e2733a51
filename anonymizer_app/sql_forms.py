"""Forms of the SQL source and destination pages: a connection URL (the password may be typed apart, so
that it never sits in a URL), a table or a single SELECT query, and for export a new table's name."""

from __future__ import annotations

from collections.abc import Callable

from django import forms

from .services import sql

URL_HELP = ("postgresql://user@host:5432/database, mysql://user@host:3306/database (MariaDB too); "
            "the password below, not in the URL")


def checked(value: str, check: Callable[[str], object]) -> str:
    """``value`` once ``check`` (of services/sql) accepted it; its SqlError becomes the field's error."""
    try:
        check(value)
    except sql.SqlError as exc:
        raise forms.ValidationError(str(exc)) from None
    return value


class SqlConnectionMixin(forms.Form):
    url = forms.CharField(label="Connection URL", max_length=2000, help_text=URL_HELP,
                          widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false",
                                                        "placeholder": "postgresql://user@db.example.org:5432/clinic"}))
    password = forms.CharField(label="Password", required=False, max_length=1000, strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean_url(self):
        return checked(self.cleaned_data["url"].strip(), sql.parse_url)


class SqlImportForm(SqlConnectionMixin):
    SOURCE_CHOICES = [("table", "a table"), ("query", "a query (one SELECT)")]
    source = forms.ChoiceField(label="Read", choices=SOURCE_CHOICES, initial="table", widget=forms.RadioSelect)
    table = forms.CharField(label="Table", required=False, max_length=255, help_text="table or schema.table")
    query = forms.CharField(label="Query", required=False, max_length=20000,
                            widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
                            help_text="a single SELECT or WITH … SELECT; it runs read-only with a time limit")
    name = forms.CharField(label="Dataset name", required=False, max_length=200,
                           help_text="the table's name when left empty")
    keep_password = forms.BooleanField(label="Keep the password (encrypted) for re-imports", required=False)

    def clean(self):
        data = super().clean()
        if data.get("source") == "table":
            if not data.get("table", "").strip():
                self.add_error("table", "name the table to read")
        elif not data.get("query", "").strip():
            self.add_error("query", "write the query to run")
        else:
            try:
                sql.check_query(data["query"])
            except sql.SqlError as exc:
                self.add_error("query", str(exc))
        return data


class SqlExportForm(SqlConnectionMixin):
    table = forms.CharField(label="New table", max_length=130, help_text="table or schema.table; letters, digits, _")
    replace = forms.BooleanField(label="Replace the table if it exists", required=False)
    drop_suppressed = forms.BooleanField(label="Leave out suppressed records", required=False)

    def clean_table(self):
        return checked(self.cleaned_data["table"].strip(), sql.check_table_name)
