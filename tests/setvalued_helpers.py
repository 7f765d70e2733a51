"""Set-valued test data: the seeds' worked examples (seed 002's milk example, seed 003's Tables 16 and 19
and Figure 22's hierarchy) as files, and helpers that store them as datasets and item hierarchies."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.services import setvalued
from hierarchy_editor.models import Hierarchy

MILK = "chocolate milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\nchocolate milk,whole milk,feta\n"
FOOD = "chocolate milk;milk;*\nwhole milk;milk;*\ngraviera;cheese;*\nfeta;cheese;*\n"
TABLE_19 = "t1,a1,b1,b2\nt2,a2,b1\nt3,a2,b1,b2\nt4,a1,a2,b2\n"
FIGURE_22 = "a1;A;*\na2;A;*\nb1;B;*\nb2;B;*\n"
PAYMENTS = ("John,11000,11000,20000,40000,40000\nMary,11000,30500,40000\nNick,11000,11000,40000,40000\n"
            "Sandy,11000\nMark,20000\n")  # seed 003 Table 16
BASKETS = "id,age,sex,basket\n" + "".join(f"{i},{20 + i % 3},{'MF'[i % 2]},a{i % 3}|b{i % 2}|c\n" for i in range(12))


def transaction_dataset(owner, text: str = MILK, filename: str = "milk.txt", delimiter: str = ",",
                        record_id: bool = False):
    return setvalued.create_transaction_dataset(owner, text.encode(), filename, delimiter, record_id)


def item_hierarchy(owner, text: str = FOOD, name: str = "food") -> Hierarchy:
    h = Hierarchy.from_text(owner, name, text, source_name=f"{name}.csv")
    h.save()
    return h


def upload_items(client, filename: str, text: str | bytes, **fields):
    data = text.encode() if isinstance(text, str) else text
    form = {"layout": "auto", "item_delimiter": "auto", "record_id": "auto", **fields}
    return client.post("/datasets/upload-items/", {"file": SimpleUploadedFile(filename, data), **form})
