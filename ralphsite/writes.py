"""This app's own writes (`ralphsite.core.writes`): tokens are minted by the admin's form; a delete revokes."""

from ralphsite.core.models import ApiToken
from ralphsite.core.writes import Writes
from ralphsite.tokens.services import api_token_revoke

WRITES = {ApiToken: Writes(delete=api_token_revoke)}
