"""The fast-path switch (`ralphsite.core.db.fast_paths`): read strictly, one decision per piece."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from ralphsite.core.db.fast_paths import PIECES, fast_path, fast_path_bases, fast_paths_on
from ralphsite.core.env import env_choices


def test_it_reads_the_pieces_turned_off_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RALPH_FAST_PATHS_OFF", "token, lookups")
    assert env_choices("RALPH_FAST_PATHS_OFF", PIECES) == {"token", "lookups"}
    monkeypatch.setenv("RALPH_FAST_PATHS_OFF", "token,tokens")
    with pytest.raises(ImproperlyConfigured, match="unknown tokens"):
        env_choices("RALPH_FAST_PATHS_OFF", PIECES)


def test_it_chooses_the_reference_when_the_switch_or_the_piece_is_off() -> None:
    def plain() -> str:
        return "plain"

    def fast() -> str:
        return "fast"

    with override_settings(RALPH_FAST_PATHS=True, RALPH_FAST_PATHS_OFF=frozenset()):
        assert fast_path("token", plain)(fast)() == "fast"
        assert fast_path_bases("serializers", int) == (int,)
    with override_settings(RALPH_FAST_PATHS=True, RALPH_FAST_PATHS_OFF=frozenset({"token"})):
        assert fast_path("token", plain)(fast)() == "plain"
        assert fast_paths_on("lookups")
    with override_settings(RALPH_FAST_PATHS=False, RALPH_FAST_PATHS_OFF=frozenset()):
        assert not any(fast_paths_on(piece) for piece in PIECES)
        assert fast_path_bases("serializers", int) == ()


def test_it_refuses_a_piece_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="no fast path"):
        fast_paths_on("everything")
