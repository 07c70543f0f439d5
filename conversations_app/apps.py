from django.apps import AppConfig


class ConversationsAppConfig(AppConfig):
    name = "conversations_app"
    label = "conversations_app"
    verbose_name = "Conversations and memory"
