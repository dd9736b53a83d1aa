from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "MicroCoder Studio"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from webapp.authentication import revoke_on_logout

        # logging out of the site revokes the user's API token (README "Roles")
        user_logged_out.connect(revoke_on_logout, dispatch_uid="webapp.revoke_token_on_logout")
