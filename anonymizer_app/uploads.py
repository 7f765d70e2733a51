"""An upload handler that refuses a body larger than the upload limit before any of it is stored.

Django parses a multipart body field by field; the form's CSRF token comes before the file, so the
handler lets the parser read up to the first file, then stops the upload when the declared
Content-Length exceeds ANONYMIZER_MAX_UPLOAD_MB (plus room for the other fields): the rest of the
body is read and dropped (a reset connection would hide the answer from the browser), nothing goes
to memory or disk. The view reads ``request.upload_refused`` and says why.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload

FORM_ROOM = 64 * 1024  # the other fields of the form


class UploadLimitHandler(FileUploadHandler):
    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self.too_big = ""
        limit_mb = settings.ANONYMIZER_MAX_UPLOAD_MB
        if content_length and content_length > limit_mb * 1024 * 1024 + FORM_ROOM:
            self.too_big = (f"the upload is {content_length / 1048576:.1f} MB, more than the limit of "
                            f"{limit_mb} MB; nothing was stored")

    def new_file(self, *args, **kwargs):
        if self.too_big:
            if self.request is not None:
                self.request.upload_refused = self.too_big
            raise StopUpload(connection_reset=False)

    def receive_data_chunk(self, raw_data, start):
        return raw_data  # the next handlers store the file

    def file_complete(self, file_size):
        return None
