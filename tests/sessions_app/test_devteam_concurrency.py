"""Real threads against the real database: sequences, counters, iteration limits and upserts stay exact."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from ralphsite.tokens.services import MintedToken
from sessions_app.models import AcceptanceCriterion, InterviewQuestion, LoopRun, SessionStateEntry
from tests.concurrency import api_in_threads
from tests.sessions_app.devteam_factories import devteam_interview, devteam_session

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


def test_it_numbers_concurrent_questions_without_gaps_or_duplicates(token: MintedToken) -> None:
    interview = devteam_interview()
    per_thread = 5

    def ask(client: APIClient, index: int) -> list[int]:
        statuses = []
        for n in range(per_thread):
            response = client.post(reverse("interviewquestion-list"), {
                "interview": interview.pk, "question_key": f"q-{index}-{n}", "question_text": "?",
                **({"response": "yes"} if n % 2 else {})}, format="json")
            statuses.append(response.status_code)
        return statuses

    statuses = api_in_threads(THREADS, token, ask)
    assert all(status == 201 for thread in statuses for status in thread), statuses
    total = THREADS * per_thread
    sequences = sorted(InterviewQuestion.objects.filter(interview=interview).values_list("sequence", flat=True))
    assert sequences == list(range(1, total + 1))
    interview.refresh_from_db()
    assert (interview.questions_asked, interview.questions_answered) == (total, THREADS * (per_thread // 2))


def test_it_never_iterates_a_loop_run_past_max_iterations(token: MintedToken) -> None:
    loop_run = LoopRun.objects.create(session=devteam_session(), task="t", max_iterations=5)
    url = reverse("looprun-iterate", args=[loop_run.pk])
    statuses = api_in_threads(THREADS, token, lambda client, _: client.post(url).status_code)
    assert sorted(statuses) == [200] * 5 + [409] * (THREADS - 5)
    loop_run.refresh_from_db()
    assert loop_run.iterations == 5


def test_it_counts_every_concurrent_failed_verification(token: MintedToken) -> None:
    criterion = AcceptanceCriterion.objects.create(key="AC-001", description="d")
    url = reverse("acceptancecriterion-verify", args=[criterion.pk])
    statuses = api_in_threads(THREADS, token, lambda client, i: client.post(
        url, {"passes": False, "failure_reason": f"run {i}"}, format="json").status_code)
    assert statuses == [200] * THREADS
    criterion.refresh_from_db()
    assert criterion.failure_count == THREADS


def test_it_upserts_one_state_entry_under_concurrent_sets(token: MintedToken) -> None:
    session = devteam_session()
    url = reverse("sessionstateentry-set-value")
    statuses = api_in_threads(THREADS, token, lambda client, i: client.post(
        url, {"session": session.pk, "key": "current_phase", "value": i}, format="json").status_code)
    assert sorted(statuses) == [200] * (THREADS - 1) + [201]
    assert SessionStateEntry.objects.filter(session=session).count() == 1
