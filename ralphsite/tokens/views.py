"""`/api/v1/tokens/`: a caller mints tokens no broader than its own, lists and revokes them.

An orchestrator holding a write token mints one token per agent invocation (a session, read or
write, an agent name, a short expiry) and hands it to the agent; the secret is in the 201 response
only. A token lists and revokes the tokens of its owner that it could have minted
(`ralphsite.tokens.services.api_tokens_visible`); others are a 404.
"""

from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from ledger_app.api.views import IntegerIdMixin
from ralphsite.core.access import current_scope
from ralphsite.core.api.fields import ChoiceFieldNamingAllowed
from ralphsite.core.api.ordering import StrictOrderingFilter
from ralphsite.core.api.query import StrictQueryParametersMixin
from ralphsite.core.api.serializers import RalphInputSerializer
from ralphsite.core.models import ApiToken, TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create, api_token_revoke, api_tokens_visible, session_id_resolve

MAX_EXPIRES_IN = 366 * 24 * 3600


class ApiTokenSerializer(serializers.ModelSerializer):
    """A token as its owner sees it: never its secret (only the hash is stored)."""

    class Meta:
        model = ApiToken
        fields = ["id", "prefix", "label", "scope", "session", "project_path", "permission", "agent",
                  "expires_at", "created_at", "last_used_at"]
        read_only_fields = fields


class ApiTokenMintedSerializer(ApiTokenSerializer):
    """The 201 of a mint (for the schema): the token and its secret."""

    token = serializers.CharField(help_text="The secret: shown in this response only.")

    class Meta(ApiTokenSerializer.Meta):
        fields = ["token", *ApiTokenSerializer.Meta.fields]


class ApiTokenMintInputSerializer(RalphInputSerializer):
    scope = ChoiceFieldNamingAllowed(choices=TokenScope.choices)
    session = serializers.CharField(max_length=100, required=False, help_text="A session token's session: id or key.")
    project_path = serializers.CharField(max_length=1000, required=False, default="",
                                         help_text="A project token's project_path.")
    permission = ChoiceFieldNamingAllowed(choices=TokenPermission.choices, required=False,
                                          default=TokenPermission.WRITE)
    agent = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                  help_text="The agent the token acts as; a token bound to an agent mints for it only.")
    expires_in = serializers.IntegerField(min_value=1, max_value=MAX_EXPIRES_IN, required=False,
                                          help_text="Seconds; at most the minting token's remaining life.")
    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class ApiTokenViewSet(StrictQueryParametersMixin, IntegerIdMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                      mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = ApiTokenSerializer
    permission_models = (ApiToken,)  # a staff member mints with add_apitoken (the admin's add permission)
    resource_noun = ("API token", "API tokens")
    filter_backends = (StrictOrderingFilter,)
    ordering_fields = ["created_at", "expires_at", "last_used_at"]
    ordering = ["-created_at", "-id"]

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return ApiTokenMintInputSerializer if self.action == "create" else ApiTokenSerializer

    def get_queryset(self) -> QuerySet[ApiToken]:
        return api_tokens_visible(user=self.request.user, scope=current_scope())

    @extend_schema(request=ApiTokenMintInputSerializer, responses={201: ApiTokenMintedSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Mint a token for your own user, no broader than the token you call with: a `session` (its id or
        key) or `project_path` within your scope (`global` for staff only), `read` if you are read-only,
        an expiry (`expires_in` seconds) no later than yours (yours when omitted), your agent if you are
        bound to one. 201 answers the secret as `token`, this once: only its hash is kept. 403
        `permission_denied` names the way the token would be broader than yours; 409 `agent_taken` when
        another token already acts as that `agent` (only a token bound to it mints more for it)."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        body = serializer.validated_data
        scope = current_scope()
        # Resolved for any scope: a session named for a token of another scope is refused by the service.
        session_id = session_id_resolve(reference=body["session"], scope=scope) if "session" in body else None
        expires_in = body.get("expires_in")
        minted = api_token_create(
            user=request.user, scope=body["scope"], permission=body["permission"], session_id=session_id,
            project_path=body["project_path"], agent=body["agent"], label=body["label"], minter=scope,
            expires_at=timezone.now() + timedelta(seconds=expires_in) if expires_in else None)
        response = Response({"token": minted.secret, **ApiTokenSerializer(minted.token).data},
                            status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response

    def perform_destroy(self, instance: ApiToken) -> None:
        api_token_revoke(token=instance)
