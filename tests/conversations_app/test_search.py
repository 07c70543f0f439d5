"""GET /api/v1/search/: English stemming, Korean substrings, hostile input, filters, links, query counts."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from conversations_app import services
from conversations_app.models import Observation
from ralphsite.core.search.indexing import search_index_pending
from ralphsite.core.search.schema import trigger_names
from ralphsite.core.search.sources import search_kinds
from tests.api_mixins import assert_error_shape

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

SEARCH = "/api/v1/search/"
HOSTILE = ['"', '""', "'", 'foo"bar', "AND", "OR", "NOT", "NEAR", "NEAR(a b)", "a AND", "OR b", "*", "pars*",
           "-", "-parser", ":", "content:parser", "(", ")", "((parser", "parser)", "^parser", "{}", "[]", "\\",
           "%", "_", "%_%", "🙂", "🙂🙂 parser", "", "   ", "\x00", "a" * 1000, "'; DROP TABLE x; --",
           "세", "ㅎ", "!@#$%^&*()", "OR", "OR OR", "a OR", "OR b", '"a" OR "', '"', '" "', '"*"', "a**", "*a",
           "세*", '"세션 OR"', "pars* OR", "the", "the OR a", '"the"', "under_score", "\ue000x\ue001",
           "a:* & b", "' OR 1=1 --"]


@pytest.fixture
def corpus(make_run, append, session) -> dict[str, object]:
    run = make_run(services.chat_create(data={"title": "refactor", "session": session}))
    messages = append(run, "The parser was running slowly; I refactored the Parsers module.",
                      "세션을 다시 시작했습니다", "Unrelated text about lunch", "日本語のテキストを検索する")
    observation = Observation.objects.create(session=session, type="bash", tool_name="PyTest",
                                             content="세션 로그: pytest ran 12 tests")
    return {"run": run, "messages": messages, "observation": observation}


def _ids(api: APIClient, **params: str) -> list[str]:
    response = api.get(SEARCH, params)
    assert response.status_code == 200, response.content
    return [hit["id"] for hit in response.json()["results"]]


def test_it_finds_english_words_regardless_of_case_and_inflection(api: APIClient, corpus) -> None:
    first = corpus["messages"][0].pk
    for q in ("parser", "PARSERS", "run", "Runs", "refactoring", "parser running"):
        assert _ids(api, q=q) == [first], q
    assert _ids(api, q="parser lunch") == []


def test_it_finds_korean_and_cjk_by_substring(api: APIClient, corpus) -> None:
    korean = corpus["messages"][1].pk
    observation = corpus["observation"].pk
    assert set(_ids(api, q="세션")) == {korean, observation}  # two characters: below the trigram reach
    assert _ids(api, q="세션을") == [korean]
    assert _ids(api, q="시작했") == [korean]
    assert _ids(api, q="テキスト") == [corpus["messages"][3].pk]
    assert _ids(api, q="세션 pytest") == [observation]


def test_it_searches_observation_tool_names(api: APIClient, corpus) -> None:
    assert _ids(api, q="pytest") == [corpus["observation"].pk]
    assert _ids(api, q="PYTEST", kind="message") == []


@pytest.mark.parametrize("q", HOSTILE)
def test_it_never_fails_on_hostile_input(api: APIClient, corpus, q: str) -> None:
    response = api.get(SEARCH, {"q": q})
    assert response.status_code == 200, (q, response.content)
    assert isinstance(response.json()["results"], list)


def test_it_refuses_a_query_past_its_limits_with_a_400(api: APIClient) -> None:
    for q in ("a" * 1001, " ".join(f"w{i}" for i in range(33))):
        assert "q" in assert_error_shape(api.get(SEARCH, {"q": q}), 400, "validation_error")["details"]


def test_it_matches_quoted_phrases_in_order(api: APIClient, corpus) -> None:
    first = corpus["messages"][0].pk
    assert _ids(api, q='"parser was running"') == [first]
    assert _ids(api, q='"refactored the parsers"') == [first]  # stemmed, a stop word in the middle
    assert _ids(api, q='"running parser"') == []
    assert _ids(api, q='"세션을 다시"') == [corpus["messages"][1].pk]  # with Korean: the literal text
    assert _ids(api, q='"세션을  시작"') == []


def test_it_matches_either_side_of_or(api: APIClient, corpus) -> None:
    parser, korean, lunch, japanese = (m.pk for m in corpus["messages"])
    observation = corpus["observation"].pk
    assert set(_ids(api, q="lunch OR parser")) == {parser, lunch}
    assert _ids(api, q="parser lunch OR refactoring") == [parser]  # (parser lunch) OR refactoring
    assert set(_ids(api, q="lunch OR 세션")) == {lunch, korean, observation}
    assert set(_ids(api, q='"unrelated text" OR テキスト OR 시작했')) == {lunch, japanese, korean}
    assert _ids(api, q="lunch or parser") == []  # lower-case `or` is a (stop) word: both words must match
    assert set(_ids(api, q="OR lunch OR OR parser OR")) == {parser, lunch}


def test_it_matches_prefixes_of_words(api: APIClient, corpus) -> None:
    parser, _, lunch, _ = (m.pk for m in corpus["messages"])
    assert _ids(api, q="refact*") == [parser]
    assert _ids(api, q="pars* slow*") == [parser]
    assert set(_ids(api, q="lun* OR refactor*")) == {parser, lunch}
    assert _ids(api, q="parserz*") == []
    assert set(_ids(api, q="세*", kind="message")) == {corpus["messages"][1].pk}


def test_it_reads_other_operators_as_text(api: APIClient, corpus) -> None:
    parser = corpus["messages"][0].pk
    assert _ids(api, q="parser AND slowly") == [parser]  # AND is the stop word `and`
    assert _ids(api, q="-parser:") == [parser] and _ids(api, q="content:parser") == []  # content and parser
    assert _ids(api, q="NEAR(parser running)") == []  # near is a word no message contains
    assert _ids(api, q="the") == []  # only stop words: nothing to match, on both backends


def test_it_escapes_the_snippet_and_marks_only_the_matches(api: APIClient, make_run, append) -> None:
    run = make_run()
    append(run, 'parser <script>alert("x")</script> & <b>bold</b> \ue001 stray marker',
           "세션 <img src=x onerror=alert(1)>")
    hit = api.get(SEARCH, {"q": "parser"}).json()["results"][0]
    assert hit["snippet"].startswith(
        "<mark>parser</mark> &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold")
    korean = api.get(SEARCH, {"q": "세션"}).json()["results"][0]
    assert korean["snippet"] == "<mark>세션</mark> &lt;img src=x onerror=alert(1)&gt;"
    for snippet in (hit["snippet"], korean["snippet"]):
        without_marks = snippet.replace("<mark>", "").replace("</mark>", "")
        assert "<" not in without_marks and ">" not in without_marks
        assert snippet.count("<mark>") == snippet.count("</mark>")


def test_it_highlights_and_links_each_hit(api: APIClient, corpus, session) -> None:
    run = corpus["run"]
    hit = api.get(SEARCH, {"q": "parser"}).json()["results"][0]
    assert hit["kind"] == "message" and hit["subtype"] == "user"
    assert (hit["chat"], hit["run"], hit["session"]) == (run.chat_id, run.pk, session.pk)
    assert "<mark>" in hit["snippet"] and "</mark>" in hit["snippet"]
    korean = api.get(SEARCH, {"q": "세션", "kind": "observation"}).json()["results"][0]
    assert korean["snippet"].startswith("<mark>세션</mark>") and korean["session"] == session.pk
    assert korean["chat"] is None


def test_it_filters_by_kind_session_chat_role_type_and_date(api: APIClient, corpus, make_run, append) -> None:
    run = corpus["run"]
    other = make_run()
    append(other, "another parser", role="assistant")
    assert len(_ids(api, q="parser")) == 2
    assert _ids(api, q="parser", chat=run.chat_id) == [corpus["messages"][0].pk]
    assert _ids(api, q="parser", role="assistant") == [other.messages.get().pk]
    assert _ids(api, q="세션", type="bash") == [corpus["observation"].pk]
    assert _ids(api, q="세션", kind="message") == [corpus["messages"][1].pk]
    assert _ids(api, q="세션", session=run.chat.session_id, type="error") == []
    assert _ids(api, q="parser", created_after="2999-01-01T00:00:00Z") == []
    assert len(_ids(api, q="parser", created_before="2999-01-01T00:00:00Z")) == 2


def test_it_takes_the_same_search_as_a_json_body(api: APIClient, corpus) -> None:
    """POST: queries too long for a URL (a Korean query of 1,000 characters is 9 KB percent-encoded)."""
    korean = corpus["messages"][1].pk
    response = api.post(SEARCH, {"q": "세션을 " + "다" * 996, "kind": "message", "page_size": 5}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["count"] == 0  # every term must match
    page = api.post(SEARCH, {"q": "세션", "kind": "message", "page_size": 1}, format="json").json()
    assert [hit["id"] for hit in page["results"]] == [korean]
    assert page["count"] == 1 and page["next"] is None and page["previous"] is None
    bad = api.post(SEARCH, {"q": "x", "kind": "chat"}, format="json")
    assert "kind" in assert_error_shape(bad, 400, "validation_error")["details"]
    assert "sesion" in assert_error_shape(api.post(SEARCH, {"q": "x", "sesion": "s"}, format="json"), 400,
                                          "validation_error")["details"]


def test_it_rejects_bad_filters_with_a_400(api: APIClient) -> None:
    body = assert_error_shape(api.get(SEARCH, {"q": "x", "kind": "chat"}), 400, "validation_error")
    assert "observation" in body["details"]["kind"][0]
    assert_error_shape(api.get(SEARCH, {"q": "x", "session": "nope"}), 400, "validation_error")
    assert_error_shape(api.get(SEARCH, {"q": "x", "page_size": 1000}), 400, "validation_error")


def test_it_hides_soft_deleted_chats_and_follows_edits(api: APIClient, corpus) -> None:
    run = corpus["run"]
    message = corpus["messages"][0]
    services.chat_soft_delete(chat=run.chat)
    assert _ids(api, q="parser") == []
    services.chat_restore(chat_id=run.chat_id)
    services.message_update(message=message, data={"content": "now about gardening"})
    assert _ids(api, q="parser") == []
    assert _ids(api, q="gardens") == [message.pk]


def test_it_ranks_better_matches_first(api: APIClient, make_run, append) -> None:
    run = make_run()
    weak, strong = append(run, "one migration note among many other words in a long sentence here",
                          "migration migration migrations")
    assert _ids(api, q="migration") == [strong.pk, weak.pk]


def test_it_paginates_with_a_constant_number_of_queries(api: APIClient, make_run, append,
                                                        django_assert_num_queries) -> None:
    run = make_run()
    append(run, *[f"deploy step {i}" for i in range(30)])
    search_index_pending()  # SQLite indexes new rows in batches; a search with a queue indexes it first
    queries = 4 if connection.vendor == "sqlite" else 3  # auth, (SQLite: is anything queued?), count, page
    with django_assert_num_queries(queries):
        first = api.get(SEARCH, {"q": "deploy", "page_size": 5}).json()
    with django_assert_num_queries(queries):
        big = api.get(SEARCH, {"q": "deploy", "page_size": 25}).json()
    assert first["count"] == big["count"] == 30 and len(big["results"]) == 25
    second = api.get(first["next"]).json()
    assert second["previous"] and not {h["id"] for h in first["results"]} & {h["id"] for h in second["results"]}


def test_it_keeps_its_triggers_after_all_migrations() -> None:
    if connection.vendor != "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'conv_search_%%'")
            assert {row[0] for row in cursor.fetchall()} == {
                f"conv_search_{kind}_{suffix}" for kind in search_kinds() for suffix in ("fts", "trgm")}
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'conv_search_%'")
        assert {row[0] for row in cursor.fetchall()} == set(trigger_names())
