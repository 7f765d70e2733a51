"""manage.py load_demo [--user NAME] [--password PW]: the Adult and people demo datasets."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from anonymizer_app.demo import load_demo


class Command(BaseCommand):
    help = "Load the demo datasets (Adult with its 9 ARX hierarchies, people with 3) for a user."

    def add_arguments(self, parser):
        parser.add_argument("--user", default="demo", help="owner; created if missing (default: demo)")
        parser.add_argument("--password", default="demo", help="password for a newly created user")
        parser.add_argument("--if-empty", action="store_true", help="do nothing if the user has demo datasets")

    def handle(self, *args, user, password, if_empty, **options):
        User = get_user_model()
        owner, created = User.objects.get_or_create(username=user)
        if created:
            owner.set_password(password)
            owner.save()
        if if_empty and owner.datasets.filter(is_demo=True).exists():
            self.stdout.write(f"demo data already loaded for {user}")
            return
        for dataset in load_demo(owner):
            self.stdout.write(f"loaded {dataset.name}: {dataset.n_rows} rows, {dataset.n_columns} columns")
