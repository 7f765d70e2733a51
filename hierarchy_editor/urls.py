"""URLs of the hierarchy editor, mounted at "/hierarchies/"."""

from django.urls import path

from . import views

app_name = "hierarchies"

urlpatterns = [
    path("", views.index, name="index"),
    path("upload/", views.upload, name="upload"),
    path("<int:pk>/", views.detail, name="detail"),
    path("<int:pk>/download/", views.download, name="download"),
    path("<int:pk>/export/<str:fmt>/", views.export, name="export"),
    path("<int:pk>/delete/", views.delete, name="delete"),
    # Visual editor: GET edit/ starts a session on a server-side copy of the tree.
    path("<int:pk>/edit/", views.edit, name="edit"),
    path("<int:pk>/edit/<str:token>/", views.editor, name="editor"),
    path("<int:pk>/edit/<str:token>/nodes/", views.editor_nodes, name="editor_nodes"),
    path("<int:pk>/edit/<str:token>/search/", views.editor_search, name="editor_search"),
    path("<int:pk>/edit/<str:token>/checks/", views.editor_checks, name="editor_checks"),
    path("<int:pk>/edit/<str:token>/sunburst/", views.editor_sunburst, name="editor_sunburst"),
    path("<int:pk>/edit/<str:token>/op/", views.editor_op, name="editor_op"),
    path("<int:pk>/edit/<str:token>/save/", views.editor_save, name="editor_save"),
    # Linked by plain path from the dataset pages: keep this URL stable.
    path("dataset/<int:dataset_id>/column/<int:column_id>/", views.column, name="column"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/upload/", views.column_upload, name="column_upload"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/default/", views.column_default, name="column_default"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/select/", views.column_select, name="column_select"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/edit-default/", views.column_edit_default,
         name="column_edit_default"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/build/", views.build, name="build"),
    path("dataset/<int:dataset_id>/column/<int:column_id>/build/preview/", views.build_preview,
         name="build_preview"),
]
