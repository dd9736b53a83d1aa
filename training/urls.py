from django.urls import path

from training import views

app_name = "training"

urlpatterns = [
    path("runs/", views.run_list, name="run-list"),
    path("runs/new/", views.run_create, name="run-create"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
]
