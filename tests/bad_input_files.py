"""Hostile and malformed table files for the bad-input catalogue (tests/test_bad_input_upload.py) and the
.xlsx bomb benchmark (benchmarks/bench_xlsx_bomb.py). Everything is generated; no big file is committed."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '</Types>')
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/></Relationships>')
_SHEET_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
               '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>')
_SHEET_TAIL = "</sheetData></worksheet>"


def xlsx_bomb(target: Path | None, xml_mb: int, columns: int = 20, dimension: str | None = None) -> bytes | None:
    """A valid .xlsx whose one sheet unpacks to about ``xml_mb`` MB of XML (rows of the same numbers, so it
    compresses several hundred to one). Written to ``target`` (streamed) or returned as bytes. ``dimension``:
    the sheet's declared range (e.g. "A1:T1000000"), none by default."""
    row = "<row>" + "".join(f"<c><v>{j}</v></c>" for j in range(columns)) + "</row>"
    block = (row * max(1, (1 << 20) // len(row))).encode()
    out: io.BytesIO | Path = target if target is not None else io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", _CONTENT_TYPES)
        zf.writestr("_rels/.rels", _RELS)
        zf.writestr("xl/workbook.xml", _WORKBOOK)
        zf.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with zf.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            head = _SHEET_HEAD if dimension is None else _SHEET_HEAD.replace(
                "<sheetData>", f'<dimension ref="{dimension}"/><sheetData>')
            sheet.write(head.encode())
            written = 0
            while written < xml_mb << 20:
                sheet.write(block)
                written += len(block)
            sheet.write(_SHEET_TAIL.encode())
    return out.getvalue() if isinstance(out, io.BytesIO) else None


def xlsx(rows, merge: str | None = None, sheets: int = 1) -> bytes:
    """A small workbook made by openpyxl: ``rows`` on the first sheet, optionally a merged range."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for r in rows:
        ws.append(r)
    if merge:
        ws.merge_cells(merge)
    for i in range(1, sheets):
        wb.create_sheet(f"Sheet{i + 1}")
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def zip_of(names: dict[str, bytes]) -> bytes:
    """A plain zip archive (not a workbook)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in names.items():
            zf.writestr(name, data)
    return buf.getvalue()


def xlsx_with_sheet(rows_xml: str, dimension: str | None = None, sheets: bool = True) -> bytes:
    """A workbook written by hand: ``rows_xml`` (``<row>`` elements) as the first sheet's data; ``sheets``
    False gives a workbook that lists no sheet at all."""
    head = _SHEET_HEAD if dimension is None else _SHEET_HEAD.replace(
        "<sheetData>", f'<dimension ref="{dimension}"/><sheetData>')
    workbook = _WORKBOOK if sheets else _WORKBOOK.replace(
        '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets>', "<sheets/>")
    parts = {"[Content_Types].xml": _CONTENT_TYPES.encode(), "_rels/.rels": _RELS.encode(),
             "xl/workbook.xml": workbook.encode()}
    if sheets:
        parts["xl/_rels/workbook.xml.rels"] = _WORKBOOK_RELS.encode()
        parts["xl/worksheets/sheet1.xml"] = (head + rows_xml + _SHEET_TAIL).encode()
    return zip_of(parts)
