from django.apps import AppConfig


class HierarchyEditorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "hierarchy_editor"
    verbose_name = "Hierarchy editor"
