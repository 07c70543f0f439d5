from ralphsite.api.routers import RalphRouter
from sessions_app.api import views

router = RalphRouter()
router.register("sessions", views.SessionViewSet)
