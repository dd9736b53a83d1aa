"""Full-text search over problem titles and statements (PostgreSQL only).

A GIN index on the weighted ``tsvector`` expression that ``curation.selectors_search.search_vector``
builds (title weight A, statement weight B, the ``english`` configuration), so ``@@`` searches use the
index. The expression is spelled out here (a migration must not change when application code does);
``tests/curation/test_problem_search.py`` checks that the planner uses this index for the selector's
query. SQLite has no such index: the selector falls back to ``icontains`` there. The index is not in
the model's ``Meta`` (Django cannot express it portably), so this migration leaves the model state
alone.
"""

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import migrations

INDEX_NAME = "curation_problem_fts"


def _index() -> GinIndex:
    vector = SearchVector("title", weight="A", config="english") + SearchVector(
        "statement", weight="B", config="english"
    )
    return GinIndex(vector, name=INDEX_NAME)


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.add_index(apps.get_model("curation", "Problem"), _index())


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.remove_index(apps.get_model("curation", "Problem"), _index())


class Migration(migrations.Migration):
    dependencies = [("curation", "0005_scoringjob_attempts")]

    operations = [migrations.RunPython(create_index, drop_index, elidable=False)]
