from django.urls import path

from curation.consumers_imports import ImportBatchConsumer
from curation.consumers_scoring import ScoringConsumer
from evaluator.consumers import EvaluationJobConsumer
from training.consumers import RunConsumer
from training.consumers_evaluation import ModelEvaluationConsumer
from webapp.consumers_jobs import JobsConsumer

websocket_urlpatterns = [
    path("ws/runs/<int:run_id>/", RunConsumer.as_asgi()),
    path("ws/evaluations/<int:job_id>/", EvaluationJobConsumer.as_asgi()),
    path("ws/model-evaluations/<int:evaluation_id>/", ModelEvaluationConsumer.as_asgi()),
    path("ws/imports/<int:batch_id>/", ImportBatchConsumer.as_asgi()),
    path("ws/scorings/<int:scoring_id>/", ScoringConsumer.as_asgi()),
    path("ws/jobs/", JobsConsumer.as_asgi()),
]
