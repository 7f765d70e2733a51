from django.urls import path

from policies import views

app_name = "policies"

urlpatterns = [
    path("", views.index, name="index"),
    path("import/", views.import_file, name="import"),
    path("<int:policy_id>/", views.detail, name="detail"),
    path("<int:policy_id>/delete/", views.delete, name="delete"),
    path("<int:policy_id>/versions/<int:number>/export/", views.export, name="export"),
    path("save/<uuid:job_id>/", views.save, name="save"),
    path("apply/<int:dataset_id>/", views.apply, name="apply"),
]
