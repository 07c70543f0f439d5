import pytest

from tests.ledger_app.factories import DevTeam, make_devteam


@pytest.fixture
def devteam(db) -> DevTeam:
    """The orchestration rows the session statistics are computed on (see `make_devteam`)."""
    return make_devteam()
