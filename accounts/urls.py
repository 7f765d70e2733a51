from django.urls import path

from accounts import views
from accounts.throttling import throttle

app_name = "accounts"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    # log-in posts per client address (a stranger's flood slows only the stranger's address); the lockout after
    # wrong passwords is django-axes', per (username, address)
    path("login/", throttle("login")(views.LoginView.as_view()), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("", views.account, name="account"),
    path("delete/", views.delete_account, name="delete"),
    path("api-keys/", views.create_token, name="create_token"),
    path("api-keys/<int:token_id>/revoke/", views.revoke_token, name="revoke_token"),
]
