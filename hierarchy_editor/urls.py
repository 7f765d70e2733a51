"""URLs of the hierarchy editor, mounted at "/hierarchies/"."""

from django.urls import path

from .views import builders, columns, editor, editor_api, editor_ops, files, library

app_name = "hierarchies"

COLUMN = "dataset/<int:dataset_id>/column/<int:column_id>/"  # linked by plain path from the dataset pages: stable
SESSION = "<int:pk>/edit/<str:token>/"

urlpatterns = [
    path("", library.index, name="index"),
    path("upload/", files.upload, name="upload"),
    path("<int:pk>/", library.detail, name="detail"),
    path("<int:pk>/download/", files.download, name="download"),
    path("<int:pk>/export/<str:fmt>/", files.export, name="export"),
    path("<int:pk>/delete/", library.delete, name="delete"),
    # Visual editor: GET edit/ starts a session on a server-side copy of the tree.
    path("<int:pk>/edit/", editor.edit, name="edit"),
    path(SESSION, editor.editor, name="editor"),
    path(SESSION + "nodes/", editor_api.Nodes.as_view(), name="editor_nodes"),
    path(SESSION + "search/", editor_api.Search.as_view(), name="editor_search"),
    path(SESSION + "checks/", editor_api.Checks.as_view(), name="editor_checks"),
    path(SESSION + "sunburst/", editor_api.Sunburst.as_view(), name="editor_sunburst"),
    path(SESSION + "op/", editor_ops.Op.as_view(), name="editor_op"),
    path(SESSION + "save/", editor_api.Save.as_view(), name="editor_save"),
    path(COLUMN, columns.column, name="column"),
    path(COLUMN + "upload/", columns.column_upload, name="column_upload"),
    path(COLUMN + "default/", columns.column_default, name="column_default"),
    path(COLUMN + "select/", columns.column_select, name="column_select"),
    path(COLUMN + "edit-default/", columns.column_edit_default, name="column_edit_default"),
    path(COLUMN + "build/", builders.build, name="build"),
    path(COLUMN + "build/preview/", builders.BuildPreview.as_view(), name="build_preview"),
]
