from conversations_app.api import views
from ralphsite.core.api.routers import RalphRouter

router = RalphRouter()
router.register("chats", views.ChatViewSet, basename="chat")
router.register("runs", views.RunViewSet, basename="run")
router.register("messages", views.MessageViewSet, basename="message")
router.register("observations", views.ObservationViewSet, basename="observation")
router.register("patterns", views.PatternViewSet, basename="pattern")
router.register("sync-mappings", views.SyncMappingViewSet, basename="syncmapping")
router.register("sync", views.SyncViewSet, basename="sync")
router.register("search", views.SearchViewSet, basename="search")
