"""The base serializer every resource uses."""

from rest_framework import serializers

from ralphsite.api.fields import ChoiceFieldNamingAllowed, ULIDSerializerField
from ralphsite.fields import ULIDField


class RalphModelSerializer(serializers.ModelSerializer):
    """Validates and shapes; never writes (writes go through services).

    On ULID models the client may supply `id` on create; it is read-only afterwards.
    """

    serializer_choice_field = ChoiceFieldNamingAllowed
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        ULIDField: ULIDSerializerField,
    }

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        pk = self.Meta.model._meta.pk
        if isinstance(pk, ULIDField) and "id" in fields:
            if self.instance is None:
                fields["id"] = ULIDSerializerField(required=False)
            else:
                fields["id"] = ULIDSerializerField(read_only=True)
        return fields
